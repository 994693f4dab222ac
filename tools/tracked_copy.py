"""Copy the files git tracks in a checkout to another folder (a clean copy, no build debris).

Used by ``benchmarks/bench_pipeline.py`` (the study in a clean copy) and by
``tests/test_install.py`` (the wheel built from a copy, so the work tree gains no ``build/``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def copy_tracked(root: Path, dest: Path) -> Path:
    """Copy the tracked files of the repository at ``root`` (``git ls-files``) to ``dest``.

    Parameters
    ----------
    root : pathlib.Path
        A git work tree.
    dest : pathlib.Path
        The folder to copy into (created with its subfolders as needed).

    Returns
    -------
    pathlib.Path
        ``dest``.
    """
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.split(b"\0")
    for rel in filter(None, (t.decode() for t in tracked)):
        if (root / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest / rel)
    return dest

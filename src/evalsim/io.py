"""Atomic file output: a reader never sees a half-written product.

Every writer in evalsim goes through :func:`atomic_path`, which hands out a temporary path in
the destination folder and renames it over the destination only when the block finishes
without an exception. An interrupted run leaves the previous file (or none), never a torso.
A destination that is a device node, a FIFO, a socket or a folder is never replaced: the
rename would turn it into a regular file (issue 45).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it to ``path`` on success.

    Parameters
    ----------
    path : str or PathLike
        Final destination. Its parent folder is created if missing.
    suffix : str, optional
        Suffix of the temporary file (defaults to the destination's), so writers that infer
        the format from the extension (matplotlib, pyarrow) keep working.
    """
    dest = Path(path)
    _refuse_special(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{dest.name}.",
        suffix=suffix if suffix is not None else dest.suffix,
        dir=dest.parent,
    )
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp makes the file private (0600); products get the usual mode (0666 & ~umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)
    try:
        yield tmp_path
        _refuse_special(dest)
        os.replace(tmp_path, dest)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _refuse_special(dest: Path) -> None:
    """Raise OSError when ``dest`` exists and is neither a regular file nor a link to one."""
    try:
        mode = os.stat(dest).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EEXIST, "exists and is not a regular file; not replaced", str(dest))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")

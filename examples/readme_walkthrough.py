"""Rewrite the outputs of the ``evalsim`` walkthrough (the guide and the README) from real runs.

Every fenced ``console`` block that starts with ``$ evalsim ...`` and follows the heading
"The evalsim command" of each page in ``SECTIONS`` (the guide page ``docs/guide/cli.md``, with
the walkthrough, and README.md, with its one example) gets that command's real output (run
in-process from the repository root). ``tests/test_cli_lab.py`` checks that both pages still
match fresh runs.

Run from the repository root:  .venv/bin/python examples/readme_walkthrough.py
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

from evalsim.cli import main

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
GUIDE = REPO / "docs" / "guide" / "cli.md"
#: each page with console blocks, and the heading they follow
SECTIONS = {GUIDE: "# The evalsim command\n", README: "## The evalsim command\n"}
BLOCK = re.compile(r"```console\n\$ (evalsim [^\n]*)\n(.*?)```", re.S)


def run_command(command: str) -> str:
    """stdout of ``evalsim ...`` run in-process at the repository root."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            rc = main(shlex.split(command)[1:])
    finally:
        os.chdir(cwd)
    if rc != 0:
        raise RuntimeError(f"{command} exited {rc}")
    return out.getvalue()


def walkthrough_blocks(text: str, section: str = SECTIONS[GUIDE]):
    """(command, printed output) for each console block after the heading ``section``."""
    head, sep, body = text.partition(section)
    if not sep:
        raise ValueError(f"no heading {section.strip()!r}")
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(body)]


def rewrite(text: str, section: str = SECTIONS[GUIDE]) -> str:
    head, sep, body = text.partition(section)

    def fill(m: re.Match) -> str:
        command = m.group(1)
        return f"```console\n$ {command}\n{run_command(command)}```"

    return head + sep + BLOCK.sub(fill, body)


if __name__ == "__main__":
    for page, section in SECTIONS.items():
        page.write_text(rewrite(page.read_text(encoding="utf-8"), section), encoding="utf-8")

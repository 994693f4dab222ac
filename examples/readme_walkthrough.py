"""Rewrite the outputs of the README's ``evalsim`` walkthrough from real runs.

Every fenced ``console`` block in README.md's section "The evalsim command" that starts with
``$ evalsim ...`` gets that command's real output (run in-process from the repository root).
``tests/test_cli_lab.py`` checks that the README still matches fresh runs.

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

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## The evalsim command"
BLOCK = re.compile(r"```console\n\$ (evalsim [^\n]*)\n(.*?)```", re.S)


def run_command(command: str) -> str:
    """stdout of ``evalsim ...`` run in-process at the repository root."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(README.parent)
    try:
        with contextlib.redirect_stdout(out):
            rc = main(shlex.split(command)[1:])
    finally:
        os.chdir(cwd)
    if rc != 0:
        raise RuntimeError(f"{command} exited {rc}")
    return out.getvalue()


def walkthrough_blocks(text: str):
    """(command, printed output) for each console block of the evalsim section."""
    head, _, section = text.partition(SECTION)
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(section)]


def rewrite(text: str) -> str:
    head, sep, section = text.partition(SECTION)

    def fill(m: re.Match) -> str:
        command = m.group(1)
        return f"```console\n$ {command}\n{run_command(command)}```"

    return head + sep + BLOCK.sub(fill, section)


if __name__ == "__main__":
    README.write_text(rewrite(README.read_text(encoding="utf-8")), encoding="utf-8")

"""Imports inside functions are listed in one place (docs/ARCHITECTURE.md, "Imports inside
functions"), each with its reason: the table and the code agree both ways."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "evalsim"
SECTION = "## Imports inside functions"


def deferred_imports(text: str) -> set[str]:
    """Modules imported inside a function (or method) of the module source ``text``."""
    found = set()
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    found.add("." * node.level + (node.module or ""))
                elif isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
    return found


def in_the_code() -> set[tuple[str, str]]:
    """(imported module, importing file under src/evalsim) of every import in a function."""
    return {
        (module, path.relative_to(SRC).as_posix())
        for path in sorted(SRC.rglob("*.py"))
        for module in deferred_imports(path.read_text(encoding="utf-8"))
    }


def in_the_table() -> set[tuple[str, str]]:
    """The same pairs, from the table of docs/ARCHITECTURE.md; every row gives a reason."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    pairs = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        module, files, why = (cell.strip() for cell in line.strip("|").split("|"))
        assert len(why) > 20, line  # a reason, not a placeholder
        for file in re.findall(r"`([^`]+)`", files):
            pairs.add((module.strip("`"), file))
    return pairs


def test_every_import_inside_a_function_is_listed_with_its_reason():
    code, table = in_the_code(), in_the_table()
    assert sorted(code - table) == [], "add a row to docs/ARCHITECTURE.md, or import at the top"
    assert sorted(table - code) == [], "remove the row: the import is gone"


def test_the_scan_finds_imports_in_functions_and_methods_only():
    text = (
        "import os\n"
        "from a import b\n"
        "def f():\n    import numpy\n    from x.y import z\n"
        "class C:\n    def m(self):\n        from . import sibling\n"
    )
    assert deferred_imports(text) == {"numpy", "x.y", "."}

"""The house's layout (issue 25, item 3): statistics in subpackages with their kernels beside
their drivers, no import circles, and no module that only re-exports another (the old flat
paths' aliases were removed in issue 47; CHANGELOG.md lists them); the products stages whose
modules were prefix families (design, resample, sequential) are subpackages of that stage."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[1] / "src" / "evalsim"
STATS = SRC / "stats"
#: The flat modules stats keeps: validation, root finding, the decision rule, the light
#: registries the command reads without loading numba, and the two-arm rates mixin that
#: stats.multi and the command's result share.
STATS_TOP = {"__init__", "_validate", "_roots", "decision", "names", "boundaries", "rates"}
SUBPACKAGES = {
    "proportion",
    "two_sample",
    "sequential",
    "multi",
    "independence",
    "simreal",
    "resample",
    "selection",
}
PRODUCTS = SRC / "products"
#: The stages of evalsim.products whose builders were prefix families (``design_*.py``), one
#: subpackage each; the other stages are one module each (fisher and peeking: two).
PRODUCT_SUBPACKAGES = {"design", "resample", "sequential"}


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _only_re_exports(path: Path) -> bool:
    """True for a module whose body is a docstring and ``from ... import *`` lines."""
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    star = [n for n in body if isinstance(n, ast.ImportFrom) and n.names[0].name == "*"]
    return bool(star) and all(isinstance(n, ast.ImportFrom) for n in body)


def test_stats_holds_subpackages_and_only_its_shared_flat_modules():
    packages = {p.name for p in STATS.iterdir() if (p / "__init__.py").is_file()}
    assert packages == SUBPACKAGES
    flat = {p.stem for p in STATS.glob("*.py")}
    assert flat == STATS_TOP
    # every numba kernel module sits inside the subpackage of its drivers
    kernels = sorted(SRC.rglob("_*kernels.py"))
    assert kernels and all(k.parent.parent == STATS for k in kernels), kernels
    for k in kernels:
        drivers = [p for p in k.parent.glob("*.py") if k.stem in p.read_text() and p != k]
        assert drivers, f"{k} is imported by no module beside it"


def test_products_groups_a_stages_modules_in_a_subpackage_of_that_stage():
    from evalsim.products.manifest import PRODUCTS as ENTRIES
    from evalsim.products.manifest import STAGES

    packages = {p.name for p in PRODUCTS.iterdir() if (p / "__init__.py").is_file()}
    assert packages == PRODUCT_SUBPACKAGES
    assert packages <= set(STAGES)
    # no flat module left as a prefix family (``design_pools.py`` beside ``design/``)
    flat = {p.stem for p in PRODUCTS.glob("*.py")}
    assert not [m for m in flat if m.split("_")[0] in (packages | flat) - {m}]
    # a builder in a subpackage belongs to that subpackage's stage
    for entry in ENTRIES:
        module = entry.builder.split(":")[0]
        if "." in module:
            assert module.split(".")[0] == entry.stage, (entry.id, entry.builder)


def test_no_module_only_re_exports_another():
    # a package's __init__ may gather its modules' names (its public face); a module may not
    modules = [p for p in sorted(SRC.rglob("*.py")) if p.name != "__init__.py"]
    aliases = [p for p in modules if _only_re_exports(p)]
    assert aliases == [], "import from the real path; delete the alias module"


def test_the_re_export_check_bites(tmp_path):
    alias = tmp_path / "old.py"
    alias.write_text('"""Moved."""\n\nfrom a.b import *  # noqa\nfrom a.b import __all__\n')
    assert _only_re_exports(alias)
    real = tmp_path / "real.py"
    real.write_text('"""Real."""\n\nfrom a.b import *\n\nX = 1\n')
    assert not _only_re_exports(real)


def test_the_old_packages_paths_still_give_their_old_names():
    from evalsim.stats import multi, sequential
    from evalsim.stats.multi.tasks import adjust_pvalues
    from evalsim.stats.sequential.designs import certify_type1

    assert multi.adjust_pvalues is adjust_pvalues
    assert sequential.certify_type1 is certify_type1


def test_no_import_circles():
    graph = grimp.build_graph("evalsim")
    circles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith(module + ".") or module.startswith(imported + "."):
                continue  # a package and its own submodules
            if graph.chain_exists(importer=imported, imported=module):
                circles.add(tuple(sorted((module, imported))))
    assert not circles, sorted(circles)

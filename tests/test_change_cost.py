"""What adding a member costs (issue 47, "The numbers"): a dummy member is added to a copy of
the tree, and the hand-written files it takes are counted.

- an interval method: 3 files (the method, its plain-Python reference, its test);
- a two-sample test: at most 4 (the registry entry, the module that computes it, its
  reference, its test);
- a product table: at most 5 (manifest entry, builder, caption, test, and config when it
  needs one).

Generated files (the reference pages, the README's gallery) do not count. After the edits a
script in the copy checks that every consumer picked the member up without another edit: the
command's choices and answers, the tables and figures that loop over the registry, and the
prose check of ``tests/test_docs.py`` (no hand-written list went stale); for the product, a
dry run of its rule.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SNAKEMAKE

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("change_cost")


def _copy_tree(dest: Path) -> Path:
    """The tracked sources a maintainer edits: code, tests' references, workflow, config, docs."""
    for name in ("src", "workflow", "config", "docs", "tools"):
        shutil.copytree(
            ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    (dest / "tests").mkdir()
    for path in [*ROOT.glob("tests/naive_*.py"), ROOT / "tests" / "test_docs.py"]:
        shutil.copy(path, dest / "tests" / path.name)
    for name in ("Snakefile", "README.md", "mkdocs.yml", "pyproject.toml"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def _apply(tree: Path, edits: dict[str, tuple[str, str] | str]) -> int:
    """Apply ``edits`` (path -> new file text, or (anchor, text inserted after it)); return the
    number of files changed."""
    for rel, edit in edits.items():
        path = tree / rel
        if isinstance(edit, str):
            assert not path.exists(), rel
            path.write_text(edit)
            continue
        anchor, insert = edit
        text = path.read_text()
        assert text.count(anchor) == 1, (rel, anchor)
        path.write_text(text.replace(anchor, anchor + insert))
    return len(edits)


def _run(tree: Path, script: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


#: The copy's numba kernels are the repository's files (no addition edits one): loaded from
#: there, so numba's cache of this checkout serves the copy instead of compiling again. Then
#: the docs' prose check runs in the copy: no hand-written list of a registry went stale.
_PRELUDE = """
import importlib, importlib.util, pathlib, sys
real, copy = pathlib.Path({real!r}), pathlib.Path("src/evalsim")
for path in sorted(copy.rglob("_*kernels.py")):
    name = ".".join(path.relative_to(copy.parent).with_suffix("").parts)
    importlib.import_module(name.rsplit(".", 1)[0])
    spec = importlib.util.spec_from_file_location(name, real / path.relative_to(copy))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
sys.path.insert(0, "tests")
import test_docs
test_docs.test_hand_written_prose_neither_counts_nor_lists_a_registry()
"""

#: Each addition: the files a maintainer writes (path -> new text, or (anchor, text inserted
#: after it)). Their files are distinct, so one copy holds all three.
ADDITIONS = {
    "interval method": {
        "src/evalsim/stats/proportion/intervals.py": (
            "REGISTRY: dict[str, IntervalMethod] = by_id(\n",
            '    IntervalMethod(\n        "dummy",\n        "Dummy",\n'
            "        _wilson_bounds,\n        statsmodels=None,\n"
            '        color="#F0E442",\n        contains_p_hat=True,\n'
            "        guaranteed_coverage=False,\n"
            '        reference="a copy of Wilson (1927), for the change-cost test",\n'
            "    ),\n",
        ),
        "tests/naive_binom.py": (
            "from __future__ import annotations\n",
            "\n\ndef dummy(k, n, z):\n    return wilson(k, n, z)\n",
        ),
        "tests/test_dummy_interval.py": (
            "from evalsim.stats.proportion.intervals import interval\n\n\n"
            "def test_dummy():\n"
            '    assert interval(7, 10, method="dummy").lower > 0\n'
        ),
    },
    "two-sample test": {
        "src/evalsim/stats/names.py": (
            "TWO_SAMPLE_TESTS: dict[str, TwoSampleTest] = by_id(\n",
            '    TwoSampleTest(\n        "dummy",\n        "Dummy exact",\n'
            '        "Dummy",\n        scipy="scipy.stats.fisher_exact",\n'
            '        certified=False,\n        color="#CC79A7",\n'
            '        reference="Fisher (1935), again",\n'
            '        module="evalsim.stats.two_sample.dummy_test",\n    ),\n',
        ),
        "src/evalsim/stats/two_sample/dummy_test.py": (
            '"""A conditional test for the change-cost test: Fisher\'s, under its own id."""\n'
            "from evalsim.stats.two_sample.conditional import (  # noqa: F401\n"
            "    exact_power,\n    n_for_power,\n    pvalue_record,\n    region,\n)\n"
        ),
        "tests/naive_fisher.py": (
            "from __future__ import annotations\n",
            "\n\ndef dummy_power(*args):\n    return power(*args)\n",
        ),
        "tests/test_dummy_two_sample.py": (
            "from evalsim.stats.names import TWO_SAMPLE_TESTS\n\n\n"
            "def test_dummy():\n"
            '    assert TWO_SAMPLE_TESTS["dummy"].pvalue(3, 10, 8, 10)[0] < 0.1\n'
        ),
    },
    "product table": {
        "src/evalsim/products/manifest.py": (
            "_FISHER = [\n",
            '    Product("T99_dummy", "fisher", "table", "dummy:dummy_table", _args("alpha")),\n',
        ),
        "src/evalsim/products/dummy.py": (
            '"""T99: a dummy table for the change-cost test."""\n'
            "import pandas as pd\n\nfrom evalsim.products._common import captioned\n\n\n"
            "def dummy_table(alpha: float) -> pd.DataFrame:\n"
            '    return captioned(pd.DataFrame({"alpha": [alpha]}), "T99 - dummy", "")\n'
        ),
        "workflow/report/T99_dummy.rst": "T99: a dummy table for the change-cost test.\n",
        "tests/test_dummy_product.py": (
            "from evalsim.products.dummy import dummy_table\n\n\n"
            "def test_dummy():\n    assert dummy_table(0.05).alpha[0] == 0.05\n"
        ),
    },
}
#: The issue's limits: hand-written files per addition.
LIMITS = {"interval method": 3, "two-sample test": 4, "product table": 5}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the tree with the three dummy members added, and the files each took."""
    tree = _copy_tree(tmp_path_factory.mktemp("change_cost") / "tree")
    counts = {what: _apply(tree, edits) for what, edits in ADDITIONS.items()}
    return tree, counts


def test_each_addition_takes_at_most_the_issues_file_count(tree):
    _, counts = tree
    assert counts == {"interval method": 3, "two-sample test": 4, "product table": 4}
    assert all(counts[what] <= LIMITS[what] for what in counts)


#: What the consumers must do with the dummy members, with no further edit.
_CONSUMERS = """
import io, json, contextlib
from evalsim.stats.proportion.intervals import METHODS, interval
from evalsim.cli import main
from evalsim.products.exact import coverage_vs_p_figure
assert METHODS[0] == "dummy"
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    assert main(["interval", "7", "10", "--json"]) == 0
assert "dummy" in buf.getvalue()
fig = coverage_vs_p_figure([10], 0.95, p_points=20)
assert len(fig.axes) == len(METHODS)

import io, json, contextlib
from evalsim.cli import main
from evalsim.products.unconditional import unconditional_power_table, unconditional_power_figure
from evalsim.stats.names import POWER_TESTS
assert POWER_TESTS[0] == "dummy"
def run(*argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())
plan = run("plan", "--p1", "0.3", "--p2", "0.8", "--test", "dummy", "--n", "20", "--json")
ref = run("plan", "--p1", "0.3", "--p2", "0.8", "--test", "fisher", "--n", "20", "--json")
assert plan["n_per_arm_exact"] == ref["n_per_arm_exact"] and plan["test"] == "dummy"
with open("log.csv", "w") as f:
    f.write("policy,success\\n" + "A,1\\n" * 3 + "A,0\\n" * 7 + "B,1\\n" * 8 + "B,0\\n" * 2)
cmp = run("compare", "log.csv", "--a", "A", "--b", "B", "--unpaired", "--test", "dummy", "--json")
assert cmp["test"] == "Dummy exact", cmp["test"]
df = unconditional_power_table([[0.3, 0.8]], [5, 9], power_window=3)
assert "power_dummy" in df.columns and "n_dummy" in df.columns
fig = unconditional_power_figure(0.3, 0.8, [5, 9], 6, [0.5])
assert "Dummy" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
from evalsim.products.manifest import PRODUCTS, product_paths
print(product_paths(next(p for p in PRODUCTS if p.id == "T99_dummy"))["csv"])
"""


def test_every_consumer_picks_the_dummy_members_up(tree):
    tree, _ = tree
    script = _PRELUDE.format(real=str(ROOT / "src" / "evalsim")) + _CONSUMERS
    target = _run(tree, script).strip().splitlines()[-1]
    res = subprocess.run(
        [SNAKEMAKE, "-n", "--cores", "1", "--force", target],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    stats = (res.stdout + res.stderr).split("Job stats:", 1)[1].split("Reasons:", 1)[0]
    assert "fisher_T99_dummy" in stats, stats

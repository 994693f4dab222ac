"""The two-sample test registry carries the behaviour: every caller dispatches through it.

Each entry's ``power``, ``region`` and ``n_for_power`` are checked against a plain-Python
reference written in the tests (``naive_fisher``, ``naive_unconditional``); its p-value is
checked against SciPy in ``tests/test_unconditional.py`` (through the same dispatch). The
source has no comparison of a value with a test's id (``if test == "boschloo"``): the
registry's entries and their modules are the only place a test's id selects code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import naive_fisher
import naive_unconditional
import pytest

from evalsim.stats.names import POWER_TESTS, TWO_SAMPLE_TESTS
from evalsim.stats.two_sample import unconditional
from evalsim.study.schema import PRIMARY_TESTS

SRC = Path(__file__).resolve().parents[1] / "src" / "evalsim"

#: Each registered test's plain-Python power (p1, n1, p2, n2, alpha); a new test adds its own.
NAIVE_POWER = {
    "fisher": naive_fisher.power,
    "boschloo": lambda *a: naive_unconditional.power("boschloo", *a),
    "barnard": lambda *a: naive_unconditional.power("barnard", *a),
}


def test_every_test_has_a_plain_reference_and_a_computing_module():
    assert set(NAIVE_POWER) == set(TWO_SAMPLE_TESTS)
    assert tuple(TWO_SAMPLE_TESTS) == POWER_TESTS
    for t in TWO_SAMPLE_TESTS.values():
        assert t.conditional is not t.certified
        for name in ("pvalue_record", "exact_power", "region", "n_for_power"):
            assert callable(getattr(t._computes(), name)), (t.id, name)
    # each certified test has its statistic where the unconditional tests are computed
    assert set(unconditional._STATISTICS) == set(unconditional.TESTS)


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
def test_power_and_region_match_the_plain_reference(test):
    spec = TWO_SAMPLE_TESTS[test]
    n1, n2, p1, p2, alpha = 7, 6, 0.25, 0.85, 0.1
    got = spec.power(p1, n1, p2, n2, alpha)
    assert got == pytest.approx(NAIVE_POWER[test](p1, n1, p2, n2, alpha), rel=1e-8)
    assert spec.power(0.5, n1, 0.5, n2, alpha) <= alpha + 1e-12  # exact size
    region = spec.region(n1, n2, alpha)
    if region is not None:  # the region the power sums, table by table
        assert region.shape == (n1 + 1, n2 + 1)
        pmf = naive_fisher.binom_pmf
        want = sum(
            pmf(k1, n1, p1) * pmf(k2, n2, p2)
            for k1 in range(n1 + 1)
            for k2 in range(n2 + 1)
            if region[k1, k2]
        )
        assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
def test_n_for_power_keeps_the_saw_tooth_rule(test):
    spec = TWO_SAMPLE_TESTS[test]
    res = spec.n_for_power(0.1, 0.9, power=0.8, alpha=0.1, window=2)
    for n in range(res.n, res.n + 3):
        assert NAIVE_POWER[test](0.1, n, 0.9, n, 0.1) >= 0.8 - 1e-9
    assert NAIVE_POWER[test](0.1, res.n_first - 1, 0.9, res.n_first - 1, 0.1) < 0.8
    assert res.n_first <= res.n


def _id_comparisons(text: str, name: str) -> list[str]:
    """``name:line`` of each comparison of something with a registered test's id: a test of
    the two-sample registry or one a study can lock (McNemar's, the sequential rule)."""
    ids = set(TWO_SAMPLE_TESTS) | set(PRIMARY_TESTS)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            consts = {o.value for o in operands if isinstance(o, ast.Constant)}
            for o in operands:  # ``test in ("boschloo", ...)``
                if isinstance(o, ast.Tuple | ast.List | ast.Set):
                    consts |= {e.value for e in o.elts if isinstance(e, ast.Constant)}
            if consts & ids:
                found.append(f"{name}:{node.lineno}")
    return found


def test_no_string_dispatch_on_a_test_id():
    found = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        for hit in _id_comparisons(path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))
    ]
    assert found == []


@pytest.mark.parametrize(
    "code",
    [
        'if test == "boschloo":\n    pass\n',
        'x = args.test != "fisher"\n',
        'y = test in ("barnard", "z")\n',
        'if study_test == "mcnemar":\n    pass\n',
    ],
)
def test_the_dispatch_check_bites(code):
    assert len(_id_comparisons(code, "probe")) == 1

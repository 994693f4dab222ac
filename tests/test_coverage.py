"""evalsim.stats.proportion.coverage against the lesson's plain-Python coverage
(tests/naive_binom.py),
SciPy's pmf with statsmodels' intervals, the lesson's table, known properties (speed:
benchmarks/bench_stats.py, key ``coverage_curves_seconds_n50``)."""

from __future__ import annotations

import naive_binom as naive
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalsim.stats.proportion.coverage import coverage_curve, coverage_of_bounds, exact_coverage
from evalsim.stats.proportion.intervals import METHODS, REGISTRY

P_A = 221 / 300


# Lesson 25, Build it step 2 (and table B's exact columns): z = 1.96, p = 221/300.
@pytest.mark.parametrize(
    "n, wilson, wald",
    [
        (5, 0.981, 0.764),
        (10, 0.975, 0.927),
        (20, 0.962, 0.908),
        (50, 0.947, 0.914),
        (100, 0.946, 0.945),
    ],
)
def test_lesson_exact_coverage(n, wilson, wald):
    assert round(exact_coverage("wilson", n, P_A, z=1.96), 3) == wilson
    assert round(exact_coverage("wald", n, P_A, z=1.96), 3) == wald


@pytest.mark.parametrize(
    "method, reference",
    [("wald", naive.wald), ("wilson", naive.wilson), ("agresti_coull", naive.agresti_coull)],
)
def test_matches_the_lessons_plain_python_coverage(method, reference):
    for n in (1, 5, 10, 23, 40):
        for p in (0.05, 0.3, 0.5, P_A, 0.97):
            got = exact_coverage(method, n, p, z=1.96)
            assert got == pytest.approx(naive.coverage(reference, n, p, 1.96), abs=1e-13)


#: The registry's methods that statsmodels has, by statsmodels' name.
SM = {m: e.statsmodels for m, e in REGISTRY.items() if e.statsmodels}


@pytest.mark.parametrize("method", SM)
def test_matches_statsmodels_intervals_with_scipy_pmf(method):
    grid = np.linspace(0.005, 0.995, 97)
    for n in (7, 30, 120):
        k = np.arange(n + 1)
        lo, hi = proportion_confint(k, n, alpha=0.1, method=SM[method])
        want = np.array([stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum() for p in grid])
        got = coverage_curve(method, n, grid, confidence=0.9)
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_curve_equals_pointwise_and_keeps_shape():
    grid = np.array([[0.1, 0.2], [0.6, 0.9]])
    curve = coverage_curve("jeffreys", 25, grid)
    assert curve.shape == (2, 2)
    for idx in np.ndindex(grid.shape):
        assert curve[idx] == exact_coverage("jeffreys", 25, float(grid[idx]))


def test_clopper_pearson_never_undercovers():
    grid = np.linspace(0.0, 1.0, 1001)
    for n in (3, 10, 20, 50):
        assert coverage_curve("clopper_pearson", n, grid).min() >= 0.95 - 1e-12


@pytest.mark.parametrize("method", METHODS)
def test_registry_guaranteed_coverage_is_true_to_the_method(method):
    # Coverage >= nominal at every p and n for the methods flagged so; the others fall below
    # it somewhere (at n = 20, 0.95, on a fine grid of p), so the flag cannot be wrong either way.
    grid = np.linspace(0.0005, 0.9995, 4000)
    worst = min(coverage_curve(method, n, grid).min() for n in (5, 20, 50))
    if REGISTRY[method].guaranteed_coverage:
        assert worst >= 0.95 - 1e-12
    else:
        assert worst < 0.95 - 1e-4


def test_wald_coverage_collapses_near_the_edges():
    # At p = 0.01 and n = 10, Wald's interval contains p only for k = 1 ([0, 0.286]) and
    # k = 2 ([0, 0.448]); k = 0 gives [0, 0] and k = 3 starts at 0.016.
    want = 10 * 0.01 * 0.99**9 + 45 * 0.01**2 * 0.99**8
    assert exact_coverage("wald", 10, 0.01) == pytest.approx(want, rel=1e-12)
    # At p = 0 every k is 0 and Wald's interval is [0, 0]: it covers with probability 1.
    assert exact_coverage("wald", 10, 0.0) == 1.0


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("wilson", 0, 0.5), {}, "got 0"),
        (("wilson", 10, 1.2), {}, "1.2"),
        (("score", 10, 0.5), {}, "'score'"),
        (("wilson", 10, 0.5), {"confidence": 95}, "95"),
        (("wilson", 2.5, 0.5), {}, "2.5"),
    ],
)
def test_bad_arguments_raise_quoting_the_value(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        exact_coverage(*args, **kwargs)


def test_coverage_of_any_bounds_is_the_plain_binomial_sum():
    """A reader's own interval rule, given as its n + 1 bounds: the sum of SciPy's pmf over the
    k whose interval holds p, written out here, at rates on and off the bounds."""
    rng = np.random.default_rng(47)
    for n in (1, 7, 40):
        lower = np.sort(rng.uniform(0, 1, n + 1))
        upper = np.minimum(lower + rng.uniform(0.05, 0.5, n + 1), 1.0)
        grid = np.concatenate([rng.uniform(0, 1, 20), lower[:3], upper[-3:], [0.0, 1.0]])
        want = [
            sum(stats.binom.pmf(k, n, p) for k in range(n + 1) if lower[k] <= p <= upper[k])
            for p in grid
        ]
        np.testing.assert_allclose(coverage_of_bounds(lower, upper, grid), want, atol=1e-14)
    # the registry's own bounds give the method's coverage curve
    k = np.arange(31)
    lo, hi = zip(*(naive.wilson(int(j), 30, 1.96) for j in k), strict=True)
    np.testing.assert_allclose(
        coverage_of_bounds(lo, hi, [0.2, P_A]),
        coverage_curve("wilson", 30, [0.2, P_A], z=1.96),
        atol=1e-14,
    )
    with pytest.raises(ValueError, match="same length"):
        coverage_of_bounds([0.0, 0.1], [0.5], [0.3])

"""The exact stratified McNemar test (evalsim.stats.multi.paired) against brute-force
enumeration, exact-fraction convolution, SciPy's binomtest and statsmodels' mcnemar."""

from __future__ import annotations

import math

import numpy as np
import pytest
from naive_multi_paired import convolve_null, enumerate_null, pvalue
from scipy.stats import beta, binomtest
from statsmodels.stats.contingency_tables import mcnemar

from evalsim.stats.multi.paired import stratified_mcnemar_test

# (x, y) per stratum: pinned, small enough for enumeration (M <= 14)
SMALL = [
    ([3], [1]),
    ([0, 2], [4, 1]),
    ([1, 0, 3], [2, 2, 0]),
    ([5, 0], [0, 4]),
    ([2, 2, 2, 1], [0, 1, 3, 3]),
    ([0, 0], [0, 0]),
    ([6, 1], [0, 0]),
]


@pytest.mark.parametrize("x, y", SMALL)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_matches_enumeration(x, y, alternative):
    m = [a + b for a, b in zip(x, y, strict=True)]
    law = enumerate_null(m)
    assert law == convolve_null(m)  # the two references agree exactly
    want = pvalue(x, y, alternative, law)
    got = stratified_mcnemar_test(x, y, alternative).pvalue
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "x, y",
    [([37, 12, 80], [20, 30, 61]), ([400, 3], [350, 9]), ([0, 0, 1], [9, 17, 30])],
)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_matches_convolution_and_scipy_larger(x, y, alternative):
    """Hundreds of discordant pairs: the exact-fraction convolution and SciPy's binomtest on
    the pooled counts (the convolution's closed form) both agree."""
    got = stratified_mcnemar_test(x, y, alternative).pvalue
    want = pvalue(x, y, alternative)
    s, m = sum(x), sum(x) + sum(y)
    scipy_p = binomtest(s, m, 0.5, alternative=alternative).pvalue
    assert got == pytest.approx(want, rel=1e-12)
    assert got == pytest.approx(scipy_p, rel=1e-12)


@pytest.mark.parametrize("b, c", [(3, 10), (0, 7), (12, 12), (25, 9), (1, 0)])
def test_one_stratum_is_exact_mcnemar(b, c):
    """One stratum: SciPy's binomtest and statsmodels' exact McNemar."""
    got = stratified_mcnemar_test([b], [c])
    assert got.pvalue == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    sm = mcnemar(np.array([[10, b], [c, 10]]), exact=True).pvalue
    assert got.pvalue == pytest.approx(min(1.0, sm), rel=1e-12)


def test_pooling_differs_from_per_task_sum_of_tests():
    """The test pools the discordant pairs: two tasks each short of significance at 5%
    (8:1 pairs each) combine to a smaller p."""
    one = stratified_mcnemar_test([8], [1]).pvalue
    both = stratified_mcnemar_test([8, 8], [1, 1]).pvalue
    assert both == pytest.approx(binomtest(16, 18, 0.5).pvalue, rel=1e-12)
    assert both < one


def test_odds_ratio_and_interval():
    x, y = [3, 4], [9, 6]
    r = stratified_mcnemar_test(x, y, confidence=0.9)
    assert r.statistic == 7 and r.n_discordant == 22 and r.n_informative == 2
    assert r.odds_ratio == pytest.approx(15 / 7, rel=1e-15)
    # Clopper-Pearson from Beta quantiles, mapped by pi / (1 - pi)
    lo = beta.ppf(0.05, 15, 22 - 15 + 1)
    hi = beta.ppf(0.95, 15 + 1, 22 - 15)
    assert r.odds_ratio_lower == pytest.approx(lo / (1 - lo), rel=1e-9)
    assert r.odds_ratio_upper == pytest.approx(hi / (1 - hi), rel=1e-9)


def test_no_discordant_pairs():
    r = stratified_mcnemar_test([0, 0], [0, 0], "greater")
    assert r.pvalue == 1.0 and math.isnan(r.odds_ratio) and r.n_informative == 0


@pytest.mark.parametrize(
    "x, y, alternative, match",
    [
        ([-1], [2], "two-sided", "-1"),
        ([1, 2], [2], "two-sided", "shapes"),
        ([1.5], [2], "two-sided", "1.5"),
        ([1], [2], "bigger", "'bigger'"),
    ],
)
def test_bad_input(x, y, alternative, match):
    with pytest.raises(ValueError, match=match):
        stratified_mcnemar_test(x, y, alternative)

"""Issue 45, items 14 and 15: ties of Barnard's statistic (and Boschloo's ordering) are kept
in the p-value, the rejection regions and the power; the power-n definition names the test.

References computed here: an exact plain-Python reference (Barnard's z compared through its
square as a ratio of integers, with its sign: ``tests/naive_unconditional.py``), and SciPy's
``barnard_exact`` / ``boschloo_exact`` on tables where its float comparison keeps every tie.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from naive_unconditional import barnard_z, exact_barnard_key, float_region, region, tail
from scipy.stats import barnard_exact

from evalsim.stats.two_sample._unconditional_kernels import barnard_all, hyper_all
from evalsim.stats.two_sample.unconditional import (
    BARNARD_TIE_RTOL,
    BOSCHLOO_TIE_RTOL,
    unconditional_pvalue,
    unconditional_pvalue_table,
)
from evalsim.stats.two_sample.unconditional_power import (
    exact_power,
    n_for_power,
    rejection_region,
)


def _naive_p_at(test, k1, n1, k2, n2, alternative, pi):
    """The exact region's tail probability at the product's maximiser ``pi``."""
    return tail(region(test, k1, n1, k2, n2, alternative), n1, n2, pi)


# --------------------------------------------------------------------------- item 14: p-value


def test_item14_barnard_46_91_5_21_keeps_the_tied_table():
    r = unconditional_pvalue("barnard", 46, 91, 5, 21)
    assert round(r.pvalue, 7) == 0.0272260
    # the region of the exact reference, summed at the maximiser, is the p-value
    want = _naive_p_at("barnard", 46, 91, 5, 21, "two-sided", r.nuisance)
    assert math.isclose(r.pvalue, want, rel_tol=1e-12)
    # the table (45, 16) ties the observed |z| exactly and is in the region
    key = exact_barnard_key(46, 91, 5, 21, absolute=True)
    assert exact_barnard_key(45, 91, 16, 21, absolute=True) == key
    assert (45, 16) in region("barnard", 46, 91, 5, 21, "two-sided")


def test_item14_barnard_mirror_tables_give_equal_p_values():
    a = unconditional_pvalue("barnard", 14, 20, 18, 20)
    b = unconditional_pvalue("barnard", 6, 20, 2, 20)
    assert math.isclose(a.pvalue, b.pvalue, rel_tol=1e-12)
    for r, (k1, k2) in ((a, (14, 18)), (b, (6, 2))):
        want = _naive_p_at("barnard", k1, 20, k2, 20, "two-sided", r.nuisance)
        assert math.isclose(r.pvalue, want, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"), [(7, 12, 2, 12), (3, 15, 9, 14), (20, 31, 11, 29), (2, 9, 7, 10)]
)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_item14_barnard_equals_scipy_where_scipy_keeps_the_ties(k1, n1, k2, n2, alternative):
    exact = set(region("barnard", k1, n1, k2, n2, alternative))
    assert float_region(k1, n1, k2, n2, alternative) == exact  # SciPy's region is exact here
    ours = unconditional_pvalue("barnard", k1, n1, k2, n2, alternative)
    table = [[k1, k2], [n1 - k1, n2 - k2]]
    theirs = barnard_exact(table, alternative=alternative, n=64).pvalue
    assert math.isclose(ours.pvalue, theirs, rel_tol=1e-9)


def test_item14_tolerance_separates_every_distinct_z_up_to_60_per_arm():
    """No two exact-distinct |z| of a sample space with n1, n2 <= 60 are within 100 times
    the tie tolerance of each other; so the tolerance merges exactly the exact ties."""
    worst = np.inf
    for n1 in range(1, 61):
        for n2 in range(1, 61):
            x1, x2 = np.divmod(np.arange((n1 + 1) * (n2 + 1)), n2 + 1)
            k = x1 + x2
            keep = (k > 0) & (k < n1 + n2)
            num = (x1 * n2 - x2 * n1)[keep].astype(np.int64) ** 2
            den = (k * (n1 + n2 - k))[keep].astype(np.int64)
            order = np.argsort(num / den, kind="stable")
            num, den = num[order], den[order]
            tied = num[1:] * den[:-1] == num[:-1] * den[1:]  # exact, in int64
            v = num / den
            gap = (v[1:] - v[:-1]) / np.maximum(v[1:], 1e-300)
            if (~tied).any():
                worst = min(worst, float(gap[~tied].min()))
    # z = sqrt(v): a relative gap g of v is about g / 2 of z
    assert worst / 2 > 100 * BARNARD_TIE_RTOL


def test_item14_barnard_1_9_6_10_is_the_exact_region_not_scipys():
    # SciPy drops the mirror table (8, 4) of (1, 6), whose |z| is equal in exact arithmetic
    exact = set(region("barnard", 1, 9, 6, 10, "two-sided"))
    assert exact - float_region(1, 9, 6, 10, "two-sided") == {(8, 4)}
    r = unconditional_pvalue("barnard", 1, 9, 6, 10)
    assert math.isclose(r.pvalue, tail(exact, 9, 10, r.nuisance), rel_tol=1e-12)
    assert r.pvalue > barnard_exact([[1, 6], [8, 4]], n=64).pvalue + 5e-4


def _tolerant_regions(score, rtol):
    """``M[t, u]``: table u is in table t's region ``score[u] <= score[t] + rtol |score[t]|``."""
    thr = np.where(score >= 0, score * (1 + rtol), score * (1 - rtol))
    return score[None, :] <= thr[:, None]


def test_item14_every_mirror_pair_has_mirrored_regions_up_to_60():
    """For n = n1 = n2 <= 60, every table t and its mirror (n - k1, n - k2): Barnard's
    two-sided region of the mirror is the mirrored region, its "less" region the mirrored
    "greater" one; likewise Boschloo's ordering by Fisher's one-sided p (its less and greater
    statistics). The statistics are the product's kernels'; the rule is its tie rule."""
    for n in range(1, 61):
        m = (n + 1) ** 2
        z = np.empty(m)
        barnard_all(n, n, z)
        hyp, f_less, f_greater = np.empty(m), np.empty(m), np.empty(m)
        hyper_all(n, n, hyp, f_less, f_greater)
        # flattened t = k1 (n + 1) + k2: the mirror of t is m - 1 - t
        two = _tolerant_regions(-np.abs(z), BARNARD_TIE_RTOL)
        assert np.array_equal(two, two[::-1, ::-1]), n
        for less, greater, rtol in (
            (z, -z, BARNARD_TIE_RTOL),
            (f_less, f_greater, BOSCHLOO_TIE_RTOL),
        ):
            got = _tolerant_regions(less, rtol)
            want = _tolerant_regions(greater, rtol)[::-1, ::-1]
            assert np.array_equal(got, want), (n, rtol)


def test_item14_scipy_float_rule_breaks_mirror_symmetry():
    """The test above bites: SciPy's z compared without tolerance is not mirror-symmetric
    at n = 20 (the issue's tables 14/20 vs 18/20 and 6/20 vs 2/20)."""
    z = np.array([barnard_z(a, 20, b, 20) for a in range(21) for b in range(21)])
    two = _tolerant_regions(-np.abs(z), 0.0)
    assert not np.array_equal(two, two[::-1, ::-1])


@pytest.mark.parametrize(("n1", "n2"), [(91, 21), (20, 20), (13, 40), (60, 59)])
def test_item14_mirror_and_swapped_tables_have_equal_p_values_table_form(n1, n2):
    for test in ("barnard", "boschloo"):
        p, _ = unconditional_pvalue_table(test, n1, n2)
        assert np.allclose(p, p[::-1, ::-1], rtol=1e-9, atol=0), test
        q, _ = unconditional_pvalue_table(test, n2, n1)
        assert np.allclose(p, q.T, rtol=1e-9, atol=0), test


def test_item14_table_form_keeps_the_tied_table():
    p, _ = unconditional_pvalue_table("barnard", 91, 21)
    assert round(float(p[46, 5]), 7) == 0.0272260
    assert math.isclose(p[46, 5], p[45, 16], rel_tol=1e-9)  # tied tables, one p


# --------------------------------------------------------------------------- item 14: regions


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize(("n1", "n2"), [(20, 20), (13, 9)])
def test_item14_rejection_region_is_mirror_symmetric_and_exact(n1, n2, alternative):
    region_, undecided = rejection_region("barnard", n1, n2, 0.05, alternative)
    assert undecided == 0
    mirror_alt = {"two-sided": "two-sided", "less": "greater", "greater": "less"}[alternative]
    mirrored, _ = rejection_region("barnard", n1, n2, 0.05, mirror_alt)
    assert np.array_equal(region_, mirrored[::-1, ::-1])
    # a table is in the region iff its exact-region p-value is below alpha: checked on the
    # tables whose p-value is not within 1e-6 of alpha
    p, _ = unconditional_pvalue_table("barnard", n1, n2, alternative)
    clear = np.abs(p - 0.05) > 1e-6
    assert np.array_equal(region_[clear], (p < 0.05)[clear])


def test_item14_power_of_mirrored_rates_is_equal():
    a = exact_power("barnard", 0.7, 20, 0.9, 20)
    b = exact_power("barnard", 0.3, 20, 0.1, 20)
    assert math.isclose(a, b, rel_tol=1e-12)
    a = exact_power("barnard", 0.4, 21, 0.1, 91)
    b = exact_power("barnard", 0.6, 21, 0.9, 91)
    assert math.isclose(a, b, rel_tol=1e-12)


# --------------------------------------------------------------------------- item 15


@pytest.mark.parametrize(("test", "label"), [("barnard", "Barnard"), ("boschloo", "Boschloo")])
def test_item15_n_for_power_definition_names_the_test(test, label):
    res = n_for_power(test, 0.5, 0.9, n_max=200)
    assert "Fisher" not in res.definition
    assert label in res.definition


def _dense_ranks(keys: list) -> np.ndarray:
    """Rank of each key among the distinct values (equal keys, equal rank), exactly."""
    distinct = sorted(set(keys))
    where = {k: i for i, k in enumerate(distinct)}
    return np.array([where[k] for k in keys])


def _exact_fisher_less(x1, n1, x2, n2):
    """P(X <= x1 | k), X hypergeometric, as a Fraction."""
    kk = x1 + x2
    lo = max(0, kk - n2)
    num = sum(math.comb(n1, y) * math.comb(n2, kk - y) for y in range(lo, x1 + 1))
    return Fraction(num, math.comb(n1 + n2, kk))


@pytest.mark.parametrize(("n1", "n2"), [(20, 20), (91, 21), (7, 33)])
def test_item14_tolerant_order_is_the_exact_order_barnard(n1, n2):
    """The product's region of every table (its z, its tie rule) is the exact region: the
    tables whose exact sign(z) z^2 is at most the table's (n1, n2 here include the issue's)."""
    m = (n1 + 1) * (n2 + 1)
    z = np.empty(m)
    barnard_all(n1, n2, z)
    keys = [exact_barnard_key(a, n1, b, n2) for a in range(n1 + 1) for b in range(n2 + 1)]
    rank = _dense_ranks(keys)
    assert np.array_equal(_tolerant_regions(z, BARNARD_TIE_RTOL), rank[None, :] <= rank[:, None])
    abs_rank = _dense_ranks([abs(k) for k in keys])
    got = _tolerant_regions(-np.abs(z), BARNARD_TIE_RTOL)
    assert np.array_equal(got, abs_rank[None, :] >= abs_rank[:, None])


@pytest.mark.parametrize(("n1", "n2"), [(20, 20), (12, 30)])
def test_item14_tolerant_order_is_the_exact_order_boschloo(n1, n2):
    """Boschloo's ordering by Fisher's one-sided p (SciPy's 1e-13 tie rule, the product's
    hypergeometric kernel) is the exact order of the p-values as fractions."""
    m = (n1 + 1) * (n2 + 1)
    hyp, f_less, f_greater = np.empty(m), np.empty(m), np.empty(m)
    hyper_all(n1, n2, hyp, f_less, f_greater)
    keys = [_exact_fisher_less(a, n1, b, n2) for a in range(n1 + 1) for b in range(n2 + 1)]
    rank = _dense_ranks(keys)
    got = _tolerant_regions(f_less, BOSCHLOO_TIE_RTOL)
    assert np.array_equal(got, rank[None, :] <= rank[:, None])

"""Kernels behind the fast unconditional tests: one table's tail polynomial per margin, the
certified supremum's bound, the early stop of two-sided Boschloo, and the binomial rows.

References are computed here: SciPy (``boschloo_exact``, ``barnard_exact``, ``binom.pmf``),
the plain-Python brute force of ``tests/naive_unconditional.py``, and the array kernels the
fast paths replace (``hyper_all`` + ``barnard_all`` + ``region_beta``).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from naive_unconditional import grid_sup, region
from scipy.stats import binom
from test_unconditional import CERTIFIED, scipy_p

from evalsim.stats.two_sample._nuisance_sup_kernels import certified_sup, certified_sup_stop
from evalsim.stats.two_sample._tail_polynomial_kernels import binom_ratios, binom_row_r
from evalsim.stats.two_sample._unconditional_kernels import (
    barnard_all,
    barnard_beta,
    boschloo_betas,
    hyper_all,
    region_beta,
)
from evalsim.stats.two_sample.unconditional import (
    BARNARD_TIE_RTOL,
    BOSCHLOO_TIE_RTOL,
    unconditional_pvalue,
    unconditional_pvalue_table,
)

EPS = 2.0**-53


def _space(n1, n2):
    m = (n1 + 1) * (n2 + 1)
    hyp, f_less, f_greater, z = (np.empty(m) for _ in range(4))
    hyper_all(n1, n2, hyp, f_less, f_greater)
    barnard_all(n1, n2, z)
    return hyp, f_less, f_greater, z


def _region_beta(n1, n2, score, thr, hyp):
    beta = np.empty(n1 + n2 + 1)
    region_beta(n1, n2, score, thr, hyp, beta)
    return beta


def _tables(n1, n2, cap, seed):
    tables = [(a, b) for a in range(n1 + 1) for b in range(n2 + 1)]
    if len(tables) <= cap:
        return tables
    rng = np.random.default_rng(seed)
    pick = [tables[i] for i in rng.choice(len(tables), cap, replace=False)]
    # the corners: zero success or failure margins, and k = 0 or n in each arm
    return pick + [(0, 0), (n1, n2), (0, n2), (n1, 0), (n1 // 2, n2 // 2)]


@pytest.mark.parametrize(
    ("n1", "n2", "cap"),
    [(1, 1, 99), (1, 6, 99), (6, 1, 99), (7, 7, 99), (13, 9, 200), (12, 24, 200), (40, 3, 200),
     (330, 320, 12), (620, 30, 12)],
)  # fmt: skip
def test_one_table_beta_is_region_beta_bit_for_bit(n1, n2, cap):
    # (330, 320) and (620, 30) have hypergeometric weights below 2**-500: the level path
    hyp, f_less, f_greater, z = _space(n1, n2)
    for k1, k2 in _tables(n1, n2, cap, seed=n1 * 1000 + n2):
        t = k1 * (n2 + 1) + k2
        b_less = np.empty(n1 + n2 + 1)
        b_greater = np.empty(n1 + n2 + 1)
        s_less, s_greater = boschloo_betas(n1, n2, k1, k2, BOSCHLOO_TIE_RTOL, b_less, b_greater)
        assert (s_less, s_greater) == (f_less[t], f_greater[t])
        for score, got in ((f_less, b_less), (f_greater, b_greater)):
            want = _region_beta(n1, n2, score, score[t] * (1 + BOSCHLOO_TIE_RTOL), hyp)
            assert np.array_equal(got, want), (k1, k2)
        for side, score in ((0, z), (1, -z), (2, -np.abs(z))):
            got = np.empty(n1 + n2 + 1)
            z0 = barnard_beta(n1, n2, k1, k2, side, BARNARD_TIE_RTOL, got)
            assert z0 == z[t]
            s = score[t]
            thr = s * (1 + BARNARD_TIE_RTOL) if s >= 0 else s * (1 - BARNARD_TIE_RTOL)
            assert np.array_equal(got, _region_beta(n1, n2, score, thr, hyp)), (k1, k2, side)


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize(
    "table",
    # zero success margin, zero failure margin, k = 0 and k = n in an arm, a symmetric table
    # (two-sided Boschloo's sides tie), equal rates with unequal n, unequal n
    [(0, 7, 0, 9), (7, 7, 9, 9), (0, 10, 10, 10), (10, 10, 0, 10), (6, 8, 6, 8),
     (5, 10, 10, 20), (2, 3, 30, 41)],
)  # fmt: skip
def test_edge_tables_vs_scipy(test, alternative, table):
    r = unconditional_pvalue(test, *table, alternative=alternative)
    assert r.pvalue == pytest.approx(scipy_p(test, *table, alternative), rel=1e-10, abs=1e-300)
    assert r.pvalue <= r.upper <= r.pvalue * (1 + 1e-6) + 1e-300
    assert r.certified


@functools.lru_cache(maxsize=3)  # one test's three grids (64 MB each at n = 400)
def _dense_pmf(nn, lo, hi, points):
    # the binomial rows on the grid do not depend on beta: computed once per grid (CI time)
    x = np.linspace(lo, hi, points)
    return x, binom.pmf(np.arange(nn + 1)[None, :], nn, x[:, None])


def _dense_f(beta, lo, hi, points=20001):
    x, pmf = _dense_pmf(beta.shape[0] - 1, lo, hi, points)
    return x, pmf @ beta


def _betas(nn, rng):
    # a sawtooth in k (Boschloo's regions), a smooth tail, one table, all tables, a region at
    # one end, and random values
    kk = np.arange(nn + 1)
    saw = np.where(kk % 3 == 0, 1e-3, 4e-4) * (kk > nn // 5)
    smooth = 1.0 / (1.0 + np.exp((kk - 0.6 * nn) / max(nn / 20, 1)))
    one = np.zeros(nn + 1)
    one[nn // 3] = 0.2
    full = np.ones(nn + 1)
    end = np.where(kk >= nn - 1, 1.0, 0.0)
    return [saw, smooth, one, full, end, rng.random(nn + 1)]


@pytest.mark.parametrize("nn", [2, 3, 6, 40, 400])
def test_certified_sup_bounds_a_dense_grid(nn):
    rng = np.random.default_rng(nn)
    for beta in _betas(nn, rng):
        for lo, hi in ((0.0, 1.0), (0.05, 0.4), (0.3, 0.30001)):
            p, upper, at, _, conv = certified_sup(beta, lo, hi, 32, 1e-6, 200_000)
            x, f = _dense_f(beta, lo, hi)
            assert conv
            assert f.max() <= upper * (1 + 1e-12)  # upper is a bound
            assert upper <= p * (1 + 1e-6) * (1 + 8 * (nn + 2) * EPS) + 1e-300
            assert lo <= at <= hi
            f_at = binom.pmf(np.arange(nn + 1), nn, at) @ beta
            assert p == pytest.approx(f_at, rel=1e-12, abs=1e-300)  # p is attained


def test_certified_sup_tight_tolerance_and_stop():
    nn = 400
    beta = _betas(nn, np.random.default_rng(0))[0]
    p, upper, _, _, conv = certified_sup(beta, 0.0, 1.0, 64, 1e-12, 2_000_000)
    assert conv
    assert upper <= p * (1 + 1e-12) * (1 + 8 * (nn + 2) * EPS)
    assert _dense_f(beta, 0.0, 1.0)[1].max() <= upper * (1 + 1e-12)
    same = certified_sup_stop(beta, 0.0, 1.0, 64, 1e-12, 2_000_000, np.inf)
    assert same[:2] == (p, upper)
    # a stop below the supremum returns once a value reaches it, not certified
    got, up_s, _, _, conv_s = certified_sup_stop(beta, 0.0, 1.0, 32, 1e-6, 200_000, 0.5 * p)
    assert 0.5 * p <= got <= upper and up_s == 1.0 and not conv_s


@pytest.mark.parametrize("test_table", [(147, 200, 175, 200), (14, 20, 18, 20), (9, 20, 9, 20)])
def test_two_sided_boschloo_is_twice_the_smaller_side(test_table):
    # the side certified second stops at the first one's upper bound; the p-value and its
    # bound are those of the two one-sided tests computed in full
    r = unconditional_pvalue("boschloo", *test_table)
    less = unconditional_pvalue("boschloo", *test_table, alternative="less")
    greater = unconditional_pvalue("boschloo", *test_table, alternative="greater")
    side = less if less.pvalue < greater.pvalue else greater
    assert r.pvalue == min(1.0, 2 * min(less.pvalue, greater.pvalue))
    assert r.upper == pytest.approx(min(1.0, 2 * side.upper), rel=1e-15)
    assert r.certified
    assert r.pvalue == pytest.approx(scipy_p("boschloo", *test_table, "two-sided"), rel=1e-10)


@pytest.mark.parametrize("nn", [1, 2, 7, 60, 400, 1000])
def test_binom_rows_vs_scipy(nn):
    row = np.empty(nn + 1)
    up, dn = binom_ratios(nn)
    for pi in (0.0, 1e-9, 0.013, 0.37, 0.5, 0.91, 1 - 1e-9, 1.0):
        binom_row_r(nn, pi, up, dn, row)
        want = binom.pmf(np.arange(nn + 1), nn, pi)
        big = want > 1e-280
        np.testing.assert_allclose(row[big], want[big], rtol=1e-12)
        assert np.all(row[~big] < 1e-270)


@pytest.mark.parametrize("test", CERTIFIED)
def test_table_form_upper_bounds_the_brute_force(test):
    n1, n2 = 6, 5
    p, up = unconditional_pvalue_table(test, n1, n2, "less")
    for k1 in range(n1 + 1):
        for k2 in range(n2 + 1):
            g, _ = grid_sup(region(test, k1, n1, k2, n2, "less"), n1, n2, grid=2000)
            assert min(g, 1.0) <= up[k1, k2] * (1 + 1e-12)
            assert p[k1, k2] == pytest.approx(min(g, 1.0), rel=1e-5)


@pytest.mark.parametrize(("n1", "n2"), [(30, 25), (12, 40)])
def test_two_sided_table_form_stops_the_second_side_early(n1, n2):
    # the "greater" walk stops once its p reaches the "less" p of every table left; the
    # result is still 2 min(less, greater) of the one-sided table forms, computed in full
    p, up = unconditional_pvalue_table("boschloo", n1, n2)
    p_less, up_less = unconditional_pvalue_table("boschloo", n1, n2, "less")
    p_greater, up_greater = unconditional_pvalue_table("boschloo", n1, n2, "greater")
    np.testing.assert_allclose(p, np.minimum(1.0, 2 * np.minimum(p_less, p_greater)), rtol=1e-14)
    assert np.all(up >= p)
    # the bound is that of the side taken (or the smaller one where both were walked)
    side_up = np.where(p_less <= p_greater, up_less, up_greater)
    assert np.all(up <= np.minimum(1.0, 2 * np.maximum(up_less, side_up)) * (1 + 1e-15))
    r = unconditional_pvalue("boschloo", n1 // 3, n1, n2 // 2, n2)
    assert p[n1 // 3, n2 // 2] == pytest.approx(r.pvalue, rel=1e-9)
    assert up[n1 // 3, n2 // 2] >= r.pvalue * (1 - 1e-12)

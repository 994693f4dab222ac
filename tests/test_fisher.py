"""Fisher's exact two-sided p-value: vs SciPy, vs plain Python, pinned document values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_fisher import exact_pvalues_at, exact_ties, fisher_p, fisher_p_exact
from scipy.stats import binom, fisher_exact, hypergeom

from evalsim.stats.decision import TIE_RTOL, rejects
from evalsim.stats.sequential.peeking import fisher_rejection_region
from evalsim.stats.two_sample.fisher import (
    REL_TOL,
    fisher_pvalue,
    fisher_pvalue_table,
    fisher_rejects,
)
from evalsim.stats.two_sample.power import fisher_power

RTOL = 1e-12


def scipy_p(k1, n1, k2, n2) -> float:
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


# --- A vectorised replica of scipy.stats.fisher_exact (1.17.1, two-sided) -------------------
# Looping fisher_exact over all 3.57 million tables with n1, n2 <= 60 would take ~20 minutes
# (~300 us a call). This replica runs SciPy 1.17.1's algorithm line by line (mode, the 1e-14
# tolerance, the tail cdf/sf and _binary_search_for_binom_tst) on arrays, with SciPy's own
# hypergeom functions, in ~5 s; test_replica_is_scipy checks it is bitwise equal to
# fisher_exact on a random sample of tables.


def _bsearch(f, d, lo, hi):
    """scipy.stats._binomtest._binary_search_for_binom_tst, element-wise."""
    lo, hi = lo.copy(), hi.copy()
    res = np.zeros_like(lo)
    done = np.zeros(lo.shape, dtype=bool)
    while True:
        act = ~done & (lo < hi)
        if not act.any():
            break
        mid = lo + (hi - lo) // 2
        midval = f(mid)
        less = act & (midval < d)
        greater = act & (midval > d)
        eq = act & ~less & ~greater
        lo = np.where(less, mid + 1, lo)
        hi = np.where(greater, mid - 1, hi)
        res = np.where(eq, mid, res)
        done |= eq
    return np.where(done, res, np.where(f(lo) <= d, lo, lo - 1))


def scipy_fisher_replica(k1, n1, k2, n2) -> np.ndarray:
    """SciPy 1.17.1 fisher_exact two-sided p-value for arrays of 2x2 tables."""
    k1, n1, k2, n2 = (np.asarray(v, dtype=np.int64) for v in (k1, n1, k2, n2))
    mm, kk = n1 + n2, k1 + k2
    out = np.ones(k1.shape)
    live = ~((n1 == 0) | (n2 == 0) | (kk == 0) | (kk == mm))
    k1, n1, mm, kk = k1[live], n1[live], mm[live], kk[live]
    mode = ((kk + 1) * (n1 + 1) / (mm + 2)).astype(np.int64)
    pexact = hypergeom.pmf(k1, mm, n1, kk)
    pmode = hypergeom.pmf(mode, mm, n1, kk)
    gamma = 1 + 1e-14
    p = np.ones(k1.shape)
    at_mode = np.abs(pexact - pmode) / np.maximum(pexact, pmode) <= 1e-14
    for lower in (True, False):
        sel = ~at_mode & ((k1 < mode) if lower else (k1 >= mode))
        x, a, m, k, pe, mo = k1[sel], n1[sel], mm[sel], kk[sel], pexact[sel], mode[sel]
        if lower:
            tail = hypergeom.cdf(x, m, a, k)
            direct = hypergeom.pmf(k, m, a, k) > pe * gamma
            guess = _bsearch(
                lambda z, m=m, a=a, k=k: -hypergeom.pmf(z, m, a, k), -pe * gamma, mo, k
            )
            other = hypergeom.sf(guess, m, a, k)
        else:
            tail = hypergeom.sf(x - 1, m, a, k)
            direct = hypergeom.pmf(0, m, a, k) > pe * gamma
            guess = _bsearch(
                lambda z, m=m, a=a, k=k: hypergeom.pmf(z, m, a, k), pe * gamma, 0 * mo, mo
            )
            other = hypergeom.cdf(guess, m, a, k)
        p[sel] = np.where(direct, tail, tail + other)
    out[live] = np.minimum(p, 1.0)
    return out


def _all_tables(nmax: int):
    """k1, n1, k2, n2 of every table with 1 <= n1, n2 <= nmax."""
    parts = []
    for a in range(1, nmax + 1):
        for b in range(1, nmax + 1):
            x, y = np.meshgrid(np.arange(a + 1), np.arange(b + 1), indexing="ij")
            parts.append((x.ravel(), np.full(x.size, a), y.ravel(), np.full(x.size, b)))
    return [np.concatenate([p[i] for p in parts]) for i in range(4)]


def test_tolerance_is_scipys():
    # scipy/stats/_stats_py.py (1.17.1), fisher_exact: "epsilon = 1e-14; gamma = 1 + epsilon"
    assert REL_TOL == 1e-14


def test_replica_is_scipy():
    rng = np.random.default_rng(20251129)
    n1 = rng.integers(1, 61, 1500)
    n2 = rng.integers(1, 61, 1500)
    k1, k2 = rng.integers(0, n1 + 1), rng.integers(0, n2 + 1)
    got = scipy_fisher_replica(k1, n1, k2, n2)
    want = np.array([scipy_p(*t) for t in zip(k1, n1, k2, n2, strict=True)])
    np.testing.assert_array_equal(got, want)


def test_every_table_up_to_60_matches_scipy():
    """All 3,572,100 tables with n1, n2 <= 60, evalsim's all-tables call vs SciPy's algorithm."""
    k1, n1, k2, n2 = _all_tables(60)
    want = scipy_fisher_replica(k1, n1, k2, n2)
    got = np.empty_like(want)
    start = 0
    for a in range(1, 61):
        for b in range(1, 61):
            size = (a + 1) * (b + 1)
            got[start : start + size] = fisher_pvalue_table(a, b).ravel()
            start += size
    rel = np.abs(got - want) / want
    assert rel.max() <= RTOL, (rel.max(), int(np.argmax(rel)))


def test_441_tables_n20_direct_scipy_and_by_hand():
    table = fisher_pvalue_table(20, 20)
    want = np.array([[scipy_p(a, 20, b, 20) for b in range(21)] for a in range(21)])
    hand = np.array([[fisher_p(a, 20, b, 20) for b in range(21)] for a in range(21)])
    assert np.max(np.abs(table - want) / want) <= RTOL
    # Lesson 25, Build it step 4: "max p-value difference 3.3e-16" (by hand vs SciPy).
    assert np.max(np.abs(hand - want)) < 1e-14


def test_scalar_and_array_calls_match_scipy_sample_up_to_60():
    rng = np.random.default_rng(7)
    n1 = rng.integers(1, 61, 400)
    n2 = rng.integers(1, 61, 400)
    k1, k2 = rng.integers(0, n1 + 1), rng.integers(0, n2 + 1)
    want = np.array([scipy_p(*t) for t in zip(k1, n1, k2, n2, strict=True)])
    arr = fisher_pvalue(k1, n1, k2, n2)
    one = np.array([fisher_pvalue(*map(int, t)) for t in zip(k1, n1, k2, n2, strict=True)])
    assert np.max(np.abs(arr - want) / want) <= RTOL
    np.testing.assert_array_equal(arr, one)


def _check_large(k1, n1, k2, n2, got):
    want = scipy_p(k1, n1, k2, n2)
    if want > 1e-300:  # normal doubles: relative agreement
        assert abs(got - want) <= RTOL * want, (k1, n1, k2, n2, got, want)
    else:  # SciPy's own result has underflowed to a subnormal or 0
        assert got <= 1e-295, (k1, n1, k2, n2, got, want)


def test_random_tables_up_to_2000():
    rng = np.random.default_rng(2000)
    for i in range(150):
        n1, n2 = (int(v) for v in rng.integers(1, 2001, 2))
        if i % 2:  # anywhere: p-values down to 1e-300 and below
            k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        else:  # near the null: p-values of every size
            p = rng.uniform()
            k1, k2 = int(rng.binomial(n1, p)), int(rng.binomial(n2, p))
        _check_large(k1, n1, k2, n2, fisher_pvalue(k1, n1, k2, n2))


def test_all_tables_call_large_n_spot_checks():
    n1, n2 = 1999, 1500
    table = fisher_pvalue_table(n1, n2)
    rng = np.random.default_rng(5)
    for _ in range(60):
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        _check_large(k1, n1, k2, n2, table[k1, k2])
    for k1 in range(1400, 1600, 20):  # near the diagonal (p-values near 1)
        k2 = round(k1 * n2 / n1)
        _check_large(k1, n1, k2, n2, table[k1, k2])


def test_matches_exact_integer_reference_up_to_15():
    for n1 in range(1, 16):
        for n2 in range(1, 16):
            table = fisher_pvalue_table(n1, n2)
            for k1 in range(n1 + 1):
                for k2 in range(n2 + 1):
                    want = fisher_p_exact(k1, n1, k2, n2)
                    assert abs(table[k1, k2] - want) <= RTOL * want, (k1, n1, k2, n2)


def test_document_values_t05():
    # python -c "from scipy.stats import fisher_exact; print(repr(fisher_exact([[14, 6],
    #   [18, 2]]).pvalue), repr(fisher_exact([[74, 26], [88, 12]]).pvalue))"  (SciPy 1.17.1)
    assert fisher_pvalue(14, 20, 18, 20) == pytest.approx(0.2351162351162351, rel=RTOL)
    assert fisher_pvalue(74, 100, 88, 100) == pytest.approx(0.01832065403045428, rel=RTOL)
    # Lesson 25, Build it step 4: "14/20 vs 18/20: p = 0.235 | 74/100 vs 88/100: p = 0.018"
    assert round(fisher_pvalue(14, 20, 18, 20), 3) == 0.235
    assert round(fisher_pvalue(74, 100, 88, 100), 3) == 0.018
    assert fisher_p(14, 20, 18, 20) == pytest.approx(fisher_pvalue(14, 20, 18, 20), rel=RTOL)


def test_ties_and_edges():
    # Symmetric margins: tables tied in exact arithmetic must tie (p = 1 at the mode).
    assert fisher_pvalue(10, 20, 10, 20) == 1.0
    assert fisher_pvalue(0, 5, 0, 7) == 1.0  # margin K = 0: a single table
    assert fisher_pvalue(5, 5, 7, 7) == 1.0  # K = N
    assert fisher_pvalue(0, 1, 1, 1) == 1.0
    assert fisher_pvalue(0, 1000, 1000, 1000) < 1e-300
    assert fisher_pvalue(3, 7, 4, 7) == pytest.approx(scipy_p(3, 7, 4, 7), rel=RTOL)


def test_rejects_convention():
    table = fisher_pvalue_table(30, 25)
    np.testing.assert_array_equal(fisher_rejects(30, 25, 0.05), table < 0.05 * (1 - TIE_RTOL))
    # p < alpha, strict, and a p within TIE_RTOL of alpha is a tie: not rejected.
    p = float(table[5, 20])
    assert not fisher_rejects(30, 25, p)[5, 20]
    assert not fisher_rejects(30, 25, math.nextafter(p, 1.0))[5, 20]
    assert not fisher_rejects(30, 25, p * (1 + 0.5 * TIE_RTOL))[5, 20]
    assert fisher_rejects(30, 25, p * (1 + 2 * TIE_RTOL))[5, 20]


# Every table with n1, n2 <= 40 whose exact p equals alpha, by integer arithmetic
# (tests/naive_fisher.py: exact_ties); computed once per session (~5 s).
_ALPHAS = (Fraction(1, 10), Fraction(1, 20), Fraction(1, 40), Fraction(1, 100))


@pytest.fixture(scope="module")
def exact_ties_40():
    return exact_ties(40, _ALPHAS)


def test_issue_examples_of_the_tie_rule():
    # Exact p of (0/3, 3/3) is 1/10; floating point gives 0.09999999999999999.
    assert fisher_pvalue(0, 3, 3, 3) == pytest.approx(0.1, rel=1e-14)
    assert not rejects(fisher_pvalue(0, 3, 3, 3), 0.1)
    assert int(fisher_rejects(3, 3, 0.1).sum()) == 0
    assert fisher_power(0.2, 3, 0.8, 3, alpha=0.1) == 0.0
    # The power kernel and the all-tables region agree (issue: 0.255 against 0.0718).
    b1, b2 = binom.pmf(np.arange(3), 2, 0.9), binom.pmf(np.arange(24), 23, 0.1)
    region_power = float(b1 @ fisher_rejects(2, 23, 0.01) @ b2)
    assert fisher_power(0.9, 2, 0.1, 23, alpha=0.01) == pytest.approx(region_power, rel=1e-12)


def test_tie_rule_against_exact_rationals_every_path(exact_ties_40):
    ties, gap = exact_ties_40
    # The tolerance is far below the closest genuine non-tie and far above float error.
    assert gap > 1e3 * TIE_RTOL
    assert len(ties) > 50
    configs = set()
    for k1, n1, k2, n2, al in ties:
        a = float(al)
        p = fisher_pvalue(k1, n1, k2, n2)
        assert p == pytest.approx(a, rel=1e-13)
        assert not rejects(p, a), (k1, n1, k2, n2, al)
        assert not fisher_rejects(n1, n2, a)[k1, k2]
        if n1 == n2:
            assert not fisher_rejection_region(n1, a)[k1, k2]
        configs.add((n1, n2, a))
    # The power kernel decides the same tables: its power equals the probability of the
    # exactly-decided region (rational p < alpha), for rates that weight every table.
    for n1, n2, a in sorted(configs)[:40]:
        exact_region = np.zeros((n1 + 1, n2 + 1), dtype=bool)
        for x, y, num, den in exact_pvalues_at(n1, n2):
            exact_region[x, y] = Fraction(num, den) < Fraction(a).limit_denominator(1000)
        b1 = binom.pmf(np.arange(n1 + 1), n1, 0.3)
        b2 = binom.pmf(np.arange(n2 + 1), n2, 0.6)
        want = float(b1 @ exact_region @ b2)
        assert fisher_power(0.3, n1, 0.6, n2, alpha=a) == pytest.approx(want, rel=1e-12, abs=1e-300)
        np.testing.assert_array_equal(fisher_rejects(n1, n2, a), exact_region)


def test_exact_decision_everywhere_small_n():
    # Beyond ties: on every table with n1, n2 <= 12 the rule decides as exact arithmetic.
    for n1 in range(1, 13):
        for n2 in range(1, 13):
            for al in _ALPHAS:
                want = np.zeros((n1 + 1, n2 + 1), dtype=bool)
                for x, y, num, den in exact_pvalues_at(n1, n2):
                    want[x, y] = Fraction(num, den) < al
                np.testing.assert_array_equal(fisher_rejects(n1, n2, float(al)), want)


def test_array_broadcast_shape():
    out = fisher_pvalue(np.arange(5)[:, None], 10, np.arange(3)[None, :], 10)
    assert out.shape == (5, 3)
    assert out[2, 1] == fisher_pvalue(2, 10, 1, 10)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_pvalue_in_unit_interval_and_symmetric(data):
    n1 = data.draw(st.integers(1, 400))
    n2 = data.draw(st.integers(1, 400))
    k1 = data.draw(st.integers(0, n1))
    k2 = data.draw(st.integers(0, n2))
    p = fisher_pvalue(k1, n1, k2, n2)
    assert 0.0 < p <= 1.0
    # Swapping the arms, or successes with failures, leaves the table's p-value unchanged.
    assert fisher_pvalue(k2, n2, k1, n1) == pytest.approx(p, rel=1e-13)
    assert fisher_pvalue(n1 - k1, n1, n2 - k2, n2) == pytest.approx(p, rel=1e-13)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((11, 10, 3, 10), "11"),
        ((-1, 10, 3, 10), "-1"),
        ((2.5, 10, 3, 10), "2.5"),
        ((3, 10, 3, 0), "0"),
        ((3, 10, 3, 10.5), "10.5"),
        ((True, 10, 3, 10), "True"),
        ((np.array([1, 12]), 10, 3, 10), "12"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        fisher_pvalue(*args)


def test_bad_arguments_table():
    with pytest.raises(ValueError, match="-3"):
        fisher_pvalue_table(-3, 10)
    with pytest.raises(ValueError, match="1.5"):
        fisher_rejects(10, 10, 1.5)
    with pytest.raises(ValueError, match="0.0"):
        fisher_rejects(10, 10, 0.0)


def test_t05_builder():
    from evalsim.products.fisher import count_near_ties, fisher_checks

    cases = [
        {"k_a": 14, "n_a": 20, "k_b": 18, "n_b": 20, "document": 0.235},
        {"k_a": 74, "n_a": 100, "k_b": 88, "n_b": 100, "document": 0.019},  # wrong on purpose
    ]
    df = fisher_checks(20, cases, decimals=3, document_max_diff=3.3e-16, tie_check_n=12)
    assert df["max_abs_diff_441"].max() < 1e-14
    assert df["matches_document"].tolist() == [True, True, False]
    assert "74/100 vs 88/100" in df.attrs["note"] and "doc 0.019" in df.attrs["note"]
    assert count_near_ties(12) == 0
    assert count_near_ties(12, rel_tol=0.05) > 0  # the check can find near-ties


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_matches_scipy(alternative):
    from evalsim.stats.two_sample.fisher import fisher_pvalue_one_sided

    rng = np.random.default_rng(5)
    for _ in range(300):
        n1, n2 = (int(v) for v in rng.integers(1, 80, 2))
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        want = fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative=alternative).pvalue
        got = fisher_pvalue_one_sided(k1, n1, k2, n2, alternative)
        assert got == pytest.approx(want, rel=1e-10, abs=1e-300)
    with pytest.raises(ValueError, match="'two'"):
        fisher_pvalue_one_sided(1, 2, 1, 2, "two")


def _fisher_p_decimal(k1, n1, k2, n2):
    """Two-sided p by the ratio recurrence in 50-digit decimals, tails cut below 1e-45."""
    from decimal import Decimal, getcontext

    getcontext().prec = 50
    kk = k1 + k2
    lo, hi = max(0, kk - n2), min(kk, n1)
    mode = ((kk + 1) * (n1 + 1)) // (n1 + n2 + 2)
    w = {mode: Decimal(1)}
    tiny = Decimal(10) ** -45
    cur = Decimal(1)
    for x in range(mode, hi):
        cur = cur * (kk - x) * (n1 - x) / ((x + 1) * (n2 - kk + x + 1))
        w[x + 1] = cur
        if cur < tiny and x + 1 > k1:
            break
    cur = Decimal(1)
    for x in range(mode, lo, -1):
        cur = cur * x * (n2 - kk + x) / ((kk - x + 1) * (n1 - x + 1))
        w[x - 1] = cur
        if cur < tiny and x - 1 < k1:
            break
    w1 = w[k1]
    total = sum(w.values())
    return float(sum(v for v in w.values() if v <= w1 * (1 + Decimal("1e-14"))) / total)


@pytest.mark.parametrize(
    "table",
    [
        (700_000, 1_000_000, 701_000, 1_000_000),
        (499_000, 1_000_000, 501_500, 1_000_000),
        (10, 1_000_000, 30, 1_000_000),
        (300_000, 400_000, 610_000, 800_000),
    ],
)
def test_large_n_pvalue_against_50_digit_decimals(table):
    # SciPy 1.17 misses the first table by 3e-10 relative; the tail walk keeps ~1e-15.
    assert fisher_pvalue(*table) == pytest.approx(_fisher_p_decimal(*table), rel=1e-12)

"""Paired comparisons: difference intervals, McNemar, contingency, bootstrap, pairing gain."""

from __future__ import annotations

import math

import naive_design as naive
import numpy as np
import pytest
from scipy.stats import binomtest, norm
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep

from evalsim.stats.two_sample import paired as pz
from evalsim.stats.two_sample.paired import (
    PairedCounts,
    diff_interval,
    mcnemar_exact,
    paired_diff_interval,
    paired_wald_interval,
)

SM_METHOD = {"wald": "wald", "newcombe": "newcomb", "agresti_caffo": "agresti-caffo"}


# ------------------------------------------------------------------ McNemar
def test_mcnemar_equals_binomtest_on_discordant_pairs():
    for b in range(0, 31):
        for c in range(0, 31):
            if b + c == 0:
                continue
            res = pz.mcnemar_exact(b, c)
            ref = binomtest(b, b + c, 0.5).pvalue
            assert res.pvalue == pytest.approx(ref, rel=1e-12, abs=1e-15), (b, c)


def test_mcnemar_matches_statsmodels_and_naive_midp():
    for b, c in [(0, 5), (3, 10), (12, 4), (7, 7), (40, 25), (1, 0)]:
        res = pz.mcnemar_exact(b, c)
        sm = sm_mcnemar(np.array([[50, b], [c, 20]]), exact=True)
        assert res.pvalue == pytest.approx(sm.pvalue, rel=1e-12)
        p, midp = naive.mcnemar(b, c)
        assert res.pvalue == pytest.approx(p, rel=1e-12)
        assert res.midp_pvalue == pytest.approx(midp, rel=1e-12)
        assert res.midp_pvalue <= res.pvalue


def test_mcnemar_pinned_and_edge_cases():
    # python -c "from scipy.stats import binomtest; print(binomtest(3, 13, 0.5).pvalue)"
    # -> 0.09228515625
    res = pz.mcnemar_exact(3, 10)
    assert res.pvalue == pytest.approx(0.09228515625, rel=1e-12)
    assert res.statistic == pytest.approx(49 / 13)
    empty = pz.mcnemar_exact(0, 0)
    assert empty.pvalue == 1.0 and empty.midp_pvalue == 1.0
    assert pz.mcnemar_exact(6, 6).midp_pvalue == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [(-1, 3), (2.5, 3), (3, -2)])
def test_mcnemar_rejects_bad_counts(bad):
    with pytest.raises(ValueError, match=r"-1|2\.5|-2"):
        pz.mcnemar_exact(*bad)


# ------------------------------------------------------------------ difference intervals
@pytest.mark.parametrize("method", pz.DIFF_METHODS)
def test_diff_interval_matches_statsmodels(method):
    rng = np.random.default_rng(7)
    for _ in range(200):
        n1, n2 = (int(x) for x in rng.integers(1, 120, size=2))
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        for conf in (0.90, 0.95):
            iv = pz.diff_interval(k1, n1, k2, n2, method=method, confidence=conf)
            lo, up = confint_proportions_2indep(
                k1, n1, k2, n2, method=SM_METHOD[method], compare="diff", alpha=1 - conf
            )
            assert iv.lower == pytest.approx(lo, abs=1e-12), (k1, n1, k2, n2)
            assert iv.upper == pytest.approx(up, abs=1e-12), (k1, n1, k2, n2)


def test_diff_interval_matches_naive():
    for k1, n1, k2, n2 in [(92, 100, 90, 100), (0, 10, 10, 10), (7, 20, 14, 20), (3, 5, 1, 9)]:
        iv = pz.diff_interval(k1, n1, k2, n2, "newcombe")
        assert (iv.lower, iv.upper) == pytest.approx(naive.newcombe(k1, n1, k2, n2), abs=1e-12)
        iv = pz.diff_interval(k1, n1, k2, n2, "wald")
        assert (iv.lower, iv.upper) == pytest.approx(naive.wald_diff(k1, n1, k2, n2), abs=1e-12)
        iv = pz.diff_interval(k1, n1, k2, n2, "agresti_caffo")
        ref = naive.wald_diff(k1, n1, k2, n2, add=1)
        assert (iv.lower, iv.upper) == pytest.approx(ref, abs=1e-12)


def test_document_004_difference_is_the_wald_interval():
    # Document 004: 92/100 vs 90/100 -> -5.93 pp to +9.93 pp.
    iv = pz.diff_interval(92, 100, 90, 100, "wald")
    assert round(100 * iv.lower, 2) == -5.93 and round(100 * iv.upper, 2) == 9.93
    for method in ("newcombe", "agresti_caffo"):
        other = pz.diff_interval(92, 100, 90, 100, method)
        assert other.lower < iv.lower and other.upper > iv.upper


def test_diff_interval_bad_arguments():
    with pytest.raises(ValueError, match="11"):
        pz.diff_interval(11, 10, 3, 10)
    with pytest.raises(ValueError, match="'score'"):
        pz.diff_interval(1, 10, 3, 10, method="score")
    with pytest.raises(ValueError, match="1.5"):
        pz.diff_interval(1, 10, 3, 10, confidence=1.5)


# ------------------------------------------------------------------ contingency, gain
def test_paired_contingency_matches_naive():
    rng = np.random.default_rng(3)
    a = rng.random(257) < 0.8
    b = rng.random(257) < 0.6
    t = pz.paired_contingency(a, b)
    assert (t.both_succeed, t.a_only, t.b_only, t.both_fail) == naive.contingency(list(a), list(b))
    assert t.n == 257 and t.k_a == a.sum() and t.k_b == b.sum()
    assert t.table.sum() == 257
    t01 = pz.paired_contingency(a.astype(int), b.astype(int))
    assert t01 == t


def test_paired_contingency_bad_arguments():
    with pytest.raises(ValueError, match="same length"):
        pz.paired_contingency([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="2"):
        pz.paired_contingency([1, 2, 1], [1, 0, 0])
    with pytest.raises(ValueError, match="non-empty"):
        pz.paired_contingency([], [])


def test_pairing_gain_is_the_phi_coefficient_and_variance_of_difference():
    rng = np.random.default_rng(11)
    hard = rng.random(400) < 0.3
    a = ~hard & (rng.random(400) < 0.95)
    b = ~hard & (rng.random(400) < 0.85)
    g = pz.pairing_gain(a, b)
    assert g.rho == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-12)
    d = a.astype(float) - b.astype(float)
    assert g.var_paired == pytest.approx(d.var(), rel=1e-12)
    assert g.var_unpaired == pytest.approx(a.var() + b.var(), rel=1e-12)
    assert g.rho > 0.3 and g.variance_ratio < 0.7


# ------------------------------------------------------------------ bootstrap
def test_paired_bootstrap_is_seeded_and_matches_paired_variance():
    rng = np.random.default_rng(5)
    a = rng.random(300) < 0.75
    b = a & (rng.random(300) < 0.9)
    r1 = pz.paired_bootstrap(a, b, n_boot=4000, rng=123)
    r2 = pz.paired_bootstrap(a, b, n_boot=4000, rng=123)
    r3 = pz.paired_bootstrap(a, b, n_boot=4000, rng=124)
    assert r1 == r2 and r1 != r3
    t = pz.paired_contingency(a, b)
    d = (t.a_only - t.b_only) / t.n
    se = np.sqrt(((t.a_only + t.b_only) / t.n - d * d) / t.n)
    assert r1.diff == pytest.approx(d)
    assert r1.se == pytest.approx(se, rel=0.06)
    assert r1.lower < d < r1.upper
    w = pz.paired_wald_interval(t)
    assert r1.lower == pytest.approx(w.lower, abs=0.01)
    assert r1.upper == pytest.approx(w.upper, abs=0.01)


def test_paired_bootstrap_kernel_matches_plain_loop_on_the_same_stream():
    from evalsim.stats.two_sample._paired_kernels import paired_bootstrap_diffs

    rng = np.random.default_rng(2)
    a = (rng.random(37) < 0.7).astype(np.int8)
    b = (rng.random(37) < 0.5).astype(np.int8)
    got = paired_bootstrap_diffs(a, b, 50, np.random.default_rng(9))
    ref = naive.paired_bootstrap_diffs(a.tolist(), b.tolist(), 50, np.random.default_rng(9))
    assert got.tolist() == ref


def test_paired_bootstrap_bad_arguments():
    with pytest.raises(ValueError, match="-1"):
        pz.paired_bootstrap([1, 0], [0, 1], rng=-1)
    with pytest.raises(ValueError, match="None"):
        pz.paired_bootstrap([1, 0], [0, 1])
    with pytest.raises(ValueError, match="n_boot"):
        pz.paired_bootstrap([1, 0], [0, 1], n_boot=1, rng=0)


# --- paired difference intervals -----------------------------------------------------------
# Published worked examples (pA - pB = (b - c) / n, counts (both, A only, B only, neither)):
# Fagerland, Lydersen & Laake (2014), Stat. Med. 33, 2850, Table II data (Bentur et al. 2009)
# and Table V: Tango asymptotic score (-0.517, -0.026) (as quoted in the validation suite of
# Laud's ratesci/PAIRBINCI). Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency
# Tables" (2017), chapter 8, Cavo et al. (2012) data: Newcombe square-and-add -0.0621 (-0.1186
# to -0.0046) (the book's example, as pinned in the contingencytables R package's tests).
# The Bentur Newcombe value (-0.507, -0.026) is our reading of the same Table V, not
# cross-checked against a second source.


def _tango_reference(b, c, n, z):
    """Tango's interval by plain bisection on the score statistic (Tango 1998, eq. 3-5)."""

    def stat(d):
        # restricted MLE of P(B only) given pA - pB = d: root of 2n q^2 + B q + C = 0
        bq = -b - c + (2 * n - b + c) * d
        cq = -c * d * (1 - d)
        q = (math.sqrt(bq * bq - 8 * n * cq) - bq) / (4 * n)
        return (b - c - n * d) / math.sqrt(n * (2 * q + d * (1 - d)))

    def root(target, lo, hi):
        for _ in range(200):
            mid = (lo + hi) / 2
            if (stat(mid) - target) > 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    est = (b - c) / n
    return root(z, -1 + 1e-15, est), root(-z, est, 1 - 1e-15)


def test_paired_intervals_reproduce_published_examples():
    bentur = PairedCounts(1, 1, 7, 12)
    tango = paired_diff_interval(bentur, "tango")
    assert (round(tango.lower, 3), round(tango.upper, 3)) == (-0.517, -0.026)
    newc = paired_diff_interval(bentur, "newcombe")
    assert (round(newc.lower, 3), round(newc.upper, 3)) == (-0.507, -0.026)
    cavo = PairedCounts(59, 6, 16, 80)
    newc = paired_diff_interval(cavo, "newcombe")
    assert (round(newc.lower, 4), round(newc.upper, 4)) == (-0.1186, -0.0046)


@pytest.mark.parametrize(
    "counts",
    [(1, 1, 7, 12), (59, 6, 16, 80), (60, 0, 7, 33), (53, 16, 8, 9), (0, 0, 0, 5), (3, 4, 0, 0)],
)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_tango_matches_plain_bisection(counts, confidence):
    c = PairedCounts(*counts)
    z = float(norm.ppf(0.5 + confidence / 2))
    got = paired_diff_interval(c, "tango", confidence)
    want = _tango_reference(c.a_only, c.b_only, c.n, z)
    assert got.lower == pytest.approx(want[0], abs=1e-10)
    assert got.upper == pytest.approx(want[1], abs=1e-10)
    d = (c.a_only - c.b_only) / c.n
    assert -1 <= got.lower <= d <= got.upper <= 1


def test_paired_wald_reference_and_bad_method():
    c = PairedCounts(60, 0, 7, 33)
    got, want = paired_diff_interval(c, "wald"), paired_wald_interval(c)
    assert (got.lower, got.upper) == (want.lower, want.upper)
    with pytest.raises(ValueError, match="'exact'"):
        paired_diff_interval(c, "exact")
    with pytest.raises(ValueError, match="at least one pair"):
        paired_diff_interval(PairedCounts(0, 0, 0, 0))


def test_paired_interval_excludes_zero_where_the_unpaired_one_does_not():
    # The first verdict bug: 60 both, 7 B only, 0 A only, 33 neither. Exact McNemar
    # p = 1/64; the paired intervals exclude 0, the unpaired Newcombe one does not.
    c = PairedCounts(60, 0, 7, 33)
    assert mcnemar_exact(0, 7).pvalue == pytest.approx(1 / 64, rel=1e-12)
    for method in ("tango", "newcombe"):
        assert paired_diff_interval(c, method).upper < 0
    assert diff_interval(c.k_a, c.n, c.k_b, c.n).upper > 0


# --- exact McNemar design: critical values, power, MDE ----------------------------------
def test_mcnemar_critical_values_match_exact_fractions():
    from fractions import Fraction

    from evalsim.stats.two_sample.paired_design import mcnemar_critical_values

    for alpha in (Fraction(1, 10), Fraction(1, 20), Fraction(1, 40), Fraction(1, 100)):
        crit = mcnemar_critical_values(300, float(alpha))
        for d in range(0, 301):
            want, cum = -1, 0
            for m in range(d // 2 + 1):
                cum += math.comb(d, m)
                if d >= 1 and Fraction(2 * cum, 2**d) < alpha:
                    want = m
            assert crit[d] == want, (d, alpha)


@pytest.mark.parametrize("n, p10, p01", [(30, 0.25, 0.05), (57, 0.1, 0.2), (12, 0.4, 0.0)])
def test_mcnemar_power_is_the_probability_of_the_rejection_region(n, p10, p01):
    from scipy.stats import multinomial

    from evalsim.stats.two_sample.paired_design import mcnemar_power_exact

    want = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if b + c and binomtest(b, b + c, 0.5).pvalue < 0.05 * (1 - 1e-9):
                want += multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
    assert mcnemar_power_exact(n, p10, p01, 0.05) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("n, discordance", [(60, 0.3), (200, 0.25), (45, 0.4), (5000, 0.2)])
def test_paired_mde_is_solved_to_1e6(n, discordance):
    from evalsim.stats.two_sample.paired_design import mcnemar_mde_exact, mcnemar_power_exact

    d = mcnemar_mde_exact(n, discordance, alpha=0.05, power=0.8)

    def pw(gap):
        return mcnemar_power_exact(n, (discordance + gap) / 2, (discordance - gap) / 2, 0.05)

    assert pw(d) >= 0.8
    assert pw(d - 2e-6) < 0.8


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_mcnemar_pvalue_alternatives_equal_binomtest(alternative):
    from evalsim.stats.two_sample.paired import mcnemar_pvalue

    for b in range(0, 25):
        for c in range(0, 25):
            if b + c == 0:
                assert mcnemar_pvalue(b, c, alternative) == 1.0
                continue
            want = binomtest(b, b + c, 0.5, alternative=alternative).pvalue
            assert mcnemar_pvalue(b, c, alternative) == pytest.approx(want, rel=1e-12)

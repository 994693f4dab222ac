"""Issue 43: fixed-n selection (exact PCS, the winner's curse, n per checkpoint), Cochran's Q
and the ladder, against brute-force enumeration (tests/naive_selection.py), SciPy and
statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from naive_selection import (
    binom_pmf,
    cochran_exact_by_enumeration,
    cochran_q,
    selection_by_enumeration,
    trend_exact_by_enumeration,
    trend_unpaired_by_enumeration,
)

from evalsim.stats.selection.fixed_n import (
    TIE_RULES,
    check_indifference_zone,
    lfc_rates,
    n_for_pcs,
    pcs_any_dependence,
    pcs_lfc,
    selection_probabilities,
    worst_pcs_over_range,
)
from evalsim.stats.selection.ksample import cochran_q_test, ladder_test, pairwise_mcnemar

CASES = [
    ((0.8, 0.7, 0.7, 0.6), 12),  # K = 4
    ((0.55, 0.5, 0.5, 0.45), 9),
    ((0.9, 0.85, 0.3), 30),  # K = 3, n = 30
    ((0.5, 0.5, 0.5), 17),  # all equal: every arm 1/K
    ((0.62, 0.41), 30),
    ((1.0, 0.97, 0.0), 25),  # degenerate arms
    ((0.2, 0.3, 0.25, 0.3), 7),  # the best is not first; two arms share the top rate
]


@pytest.mark.parametrize("tie_rule", sorted(TIE_RULES))
@pytest.mark.parametrize(("rates", "n"), CASES)
def test_pcs_and_bias_match_brute_force_enumeration(rates, n, tie_rule):
    r = selection_probabilities(rates, n, tie_rule)
    p_sel, no_pick, e_rep, e_true = selection_by_enumeration(rates, n, tie_rule)
    for j in range(len(rates)):
        assert r.p_select[j] == pytest.approx(p_sel[j], abs=1e-12)
    assert r.pcs == pytest.approx(p_sel[r.best], abs=1e-12)
    assert r.p_no_pick == pytest.approx(no_pick, abs=1e-12)
    picked = sum(p_sel)
    assert r.expected_reported == pytest.approx(e_rep / picked, abs=1e-12)
    assert r.expected_true == pytest.approx(e_true / picked, abs=1e-12)
    assert r.bias == pytest.approx((e_rep - e_true) / picked, abs=1e-12)
    assert r.bias_vs_best == pytest.approx(e_rep / picked - max(rates), abs=1e-12)


def test_equal_arms_give_one_over_k_and_the_expected_maximum():
    # K identical arms: each picked with probability 1/K (random ties), and the reported
    # rate is E[max of K binomials] / n, here summed from the CDF of the maximum
    n, p, k = 20, 0.8, 5
    r = selection_probabilities([p] * k, n)
    assert all(v == pytest.approx(1 / k, abs=1e-12) for v in r.p_select)
    cdf = [sum(binom_pmf(x, n, p) for x in range(m + 1)) for m in range(n + 1)]
    e_max = sum(1 - cdf[m] ** k for m in range(n))  # E[M] = sum_{m < n} P(M > m)
    assert r.expected_reported == pytest.approx(e_max / n, abs=1e-12)
    assert r.bias == pytest.approx(e_max / n - p, abs=1e-12)
    assert 0.09 < r.bias < 0.11  # about ten points: the winner's curse at K = 5, n = 20


def test_two_arms_random_ties_equal_the_direct_sum():
    # K = 2: PCS = P(X1 > X2) + P(X1 = X2) / 2, written out with scipy's binomial
    from scipy.stats import binom

    n, p1, p2 = 25, 0.7, 0.6
    x = np.arange(n + 1)
    f1, f2 = binom.pmf(x, n, p1), binom.pmf(x, n, p2)
    direct = sum(f1[a] * f2[b] * (1.0 if a > b else 0.5 if a == b else 0.0) for a in x for b in x)
    assert selection_probabilities([p1, p2], n).pcs == pytest.approx(direct, abs=1e-12)


@pytest.mark.parametrize("tie_rule", sorted(TIE_RULES))
def test_lfc_fast_path_equals_the_general_sum(tie_rule):
    for k, n in ((2, 1), (4, 20), (7, 55)):
        general = selection_probabilities(lfc_rates(k, 0.8, 0.1), n, tie_rule).pcs
        assert pcs_lfc(k, n, 0.8, 0.1, tie_rule) == pytest.approx(general, abs=1e-12)


def test_n_for_pcs_is_the_first_n_reaching_the_target():
    plan = n_for_pcs(4, 0.8, 0.1, 0.9)
    assert plan.pcs >= 0.9 and plan.total_trials == 4 * plan.n
    below = [selection_probabilities(lfc_rates(4, 0.8, 0.1), m).pcs for m in range(1, plan.n)]
    assert max(below) < 0.9
    # no-pick never picks on a tie, so it needs at least as many trials
    assert n_for_pcs(4, 0.8, 0.1, 0.9, "no-pick").n >= plan.n


def test_range_plan_holds_over_the_whole_range_and_is_worst_near_one_half():
    plan = n_for_pcs(3, 0.8, 0.15, 0.9, p_range=(0.5, 0.95))
    val, at = worst_pcs_over_range(3, plan.n, 0.15, (0.5, 0.95))
    assert val >= 0.9 and val == pytest.approx(plan.pcs)
    assert plan.n >= n_for_pcs(3, 0.8, 0.15, 0.9).n
    assert at < 0.7  # binomial variance is largest near 1/2


def test_any_dependence_bound_is_below_the_independent_pcs_and_tight_for_two_arms():
    rates = lfc_rates(3, 0.8, 0.1)
    assert pcs_any_dependence(rates, 30) <= selection_probabilities(rates, 30, "no-pick").pcs
    # K = 2, arms exactly anti-correlated within a condition (pi at the Frechet lower
    # bound): the direct trinomial sum, by hand, is below the bound's complement
    n, pb, po = 15, 0.6, 0.5
    pi = max(0.0, pb + po - 1)
    u, v, w = pb - pi, po - pi, 1 - pb - po + 2 * pi
    not_ahead = sum(
        math.factorial(n)
        / (math.factorial(a) * math.factorial(c) * math.factorial(n - a - c))
        * u**a
        * v**c
        * w ** (n - a - c)
        for a in range(n + 1)
        for c in range(a, n - a + 1)
    )
    bound = pcs_any_dependence([pb, po], n)
    assert bound <= 1 - not_ahead + 1e-12
    assert bound > 1 - not_ahead - 0.02  # the partition is fine enough to be near the truth
    plan = n_for_pcs(3, 0.8, 0.1, 0.8, model="any-dependence")
    assert plan.n >= n_for_pcs(3, 0.8, 0.1, 0.8).n and plan.pcs >= 0.8


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1, 0.8, 0.1, 0.9), "K >= 2"),
        ((4, 0.8, 0.0, 0.9), "delta"),
        ((4, 0.8, -0.1, 0.9), "delta"),
        ((4, 0.8, 0.1, 0.25), "1/K"),
        ((4, 0.8, 0.1, 0.2), "1/K"),
    ],
)
def test_bad_indifference_zones_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        check_indifference_zone(*args)


def test_selection_refuses_one_arm_and_unknown_tie_rules():
    with pytest.raises(ValueError, match="K >= 2"):
        selection_probabilities([0.5], 10)
    with pytest.raises(ValueError, match="tie_rule"):
        selection_probabilities([0.5, 0.4], 10, "coin")


def _tables():
    rng = np.random.default_rng(43)
    out = []
    for k, rows in ((3, 8), (4, 6), (2, 11), (5, 4)):
        out.append((rng.random((rows, k)) < rng.uniform(0.2, 0.8, k)).astype(int))
    out.append(np.array([[1, 1, 1], [0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]))
    return out


@pytest.mark.parametrize("table", _tables(), ids=lambda t: f"{t.shape}")
def test_cochran_q_exact_matches_full_enumeration_and_statsmodels(table):
    from statsmodels.stats.contingency_tables import cochrans_q

    r = cochran_q_test(table)
    assert r.method == "exact permutation"
    assert r.statistic == pytest.approx(cochran_q(table.tolist()), rel=1e-12)
    assert r.pvalue == pytest.approx(cochran_exact_by_enumeration(table.tolist()), abs=1e-12)
    sm = cochrans_q(table)
    assert r.statistic == pytest.approx(sm.statistic, rel=1e-12)
    assert r.pvalue_asymptotic == pytest.approx(sm.pvalue, rel=1e-10)


def test_cochran_q_switches_to_the_labelled_chi_square_past_its_limit():
    from statsmodels.stats.contingency_tables import cochrans_q

    rng = np.random.default_rng(7)
    t = (rng.random((120, 5)) < [0.3, 0.5, 0.6, 0.5, 0.4]).astype(int)
    r = cochran_q_test(t)
    assert r.method == "asymptotic chi-square" and "chi-square" in r.limit
    assert r.pvalue == pytest.approx(cochrans_q(t).pvalue, rel=1e-10)
    # a larger exact table agrees with the chi-square roughly (moderate n)
    t3 = (rng.random((60, 3)) < [0.4, 0.5, 0.6]).astype(int)
    r3 = cochran_q_test(t3)
    assert r3.method == "exact permutation"
    assert abs(r3.pvalue - r3.pvalue_asymptotic) < 0.05


def test_pairwise_mcnemar_counts_and_holm():
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    t = _tables()[1]
    res = pairwise_mcnemar(t, list("abcd"))
    raw = []
    for r in res:
        i, j = "abcd".index(r.first), "abcd".index(r.second)
        b = int(((t[:, i] == 1) & (t[:, j] == 0)).sum())
        c = int(((t[:, i] == 0) & (t[:, j] == 1)).sum())
        assert (r.first_only, r.second_only) == (b, c)
        p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        assert r.pvalue == pytest.approx(p, rel=1e-12)
        raw.append(p)
    holm = multipletests(raw, 0.05, "holm")[1]
    assert [r.pvalue_holm for r in res] == pytest.approx(list(holm), rel=1e-12)


@pytest.mark.parametrize("table", _tables()[:3], ids=lambda t: f"{t.shape}")
def test_paired_trend_matches_enumeration(table):
    k = table.shape[1]
    r = ladder_test([f"c{j}" for j in range(k)], table=table)
    assert r.paired
    assert r.trend_pvalue_increasing == pytest.approx(
        trend_exact_by_enumeration(table.tolist(), list(range(k))), abs=1e-12
    )
    rev = table[:, ::-1]  # reversing the ladder swaps the tails
    assert ladder_test([f"c{j}" for j in range(k)], table=rev).trend_pvalue_decreasing == (
        pytest.approx(r.trend_pvalue_increasing, abs=1e-12)
    )


def test_unpaired_trend_matches_enumeration_and_the_plateau():
    k, n = [2, 5, 9, 9], [10, 10, 10, 10]
    r = ladder_test(["s1", "s2", "s3", "s4"], k=k, n=n)
    assert not r.paired
    assert r.trend_pvalue_increasing == pytest.approx(
        trend_unpaired_by_enumeration(k, n, [0, 1, 2, 3]), abs=1e-12
    )
    # s1 is beaten by s3 and s4 (Fisher one-sided, Holm); from s2 on nothing later is
    # detectably better
    assert ("s1", "s3") in {(a, b) for a, b, _ in r.later_better}
    assert r.plateau == "s2"
    flat = ladder_test(["a", "b"], k=[5, 5], n=[10, 10])
    assert flat.plateau == "a" and flat.later_better == []

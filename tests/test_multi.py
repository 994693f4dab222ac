"""Many tasks, two policies: per-task tests, adjusted p, CMH and the exact stratified test.

References computed here, independently of the product: SciPy's ``fisher_exact`` and
conditional odds ratio, brute-force enumeration of every combination of the tasks' tables
with exact fractions, plain-Python Holm / Hochberg / Benjamini-Hochberg, and R's CMH formula
written out (``stats::mantelhaen.test``'s code, transcribed to Python).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import fisher_exact
from scipy.stats.contingency import odds_ratio as scipy_odds_ratio
from statsmodels.stats.multitest import multipletests

from evalsim.stats.multi import _kernels as _k
from evalsim.stats.multi.tasks import (
    ADJUST_METHODS,
    CORRECTIONS,
    adjust_pvalues,
    cmh_test,
    exact_stratified_test,
    per_task_tests,
)

# ----------------------------------------------------------------------------- references


def naive_strata_distribution(k_a, n_a, k_b, n_b):
    """Exact distribution of S = sum k_b given the margins, by enumerating every combination
    of the strata's tables: {s: Fraction}."""
    supports = []
    for ka, na, kb, nb in zip(k_a, n_a, k_b, n_b, strict=True):
        t = ka + kb
        xs = range(max(0, t - na), min(nb, t) + 1)
        tot = math.comb(na + nb, t)
        supports.append([(x, Fraction(math.comb(nb, x) * math.comb(na, t - x), tot)) for x in xs])
    dist: dict[int, Fraction] = {}
    for combo in itertools.product(*supports):
        s = sum(x for x, _ in combo)
        p = Fraction(1)
        for _, q in combo:
            p *= q
        dist[s] = dist.get(s, Fraction(0)) + p
    return dist


def naive_two_sided(dist, s):
    """R's mantelhaen.test(exact=TRUE) rule: sum of d <= d_obs * (1 + 1e-7)."""
    d_obs = float(dist[s])
    return sum(float(v) for v in dist.values() if float(v) <= d_obs * (1 + 1e-7))


def naive_tail(dist, s, psi, upper):
    """P(S >= s) or P(S <= s) at odds ratio psi, in floating point from the exact c(s)."""
    lo = min(dist)
    w = {k: float(v) * psi ** (k - lo) for k, v in dist.items()}
    tot = sum(w.values())
    return sum(v for k, v in w.items() if (k >= s if upper else k <= s)) / tot


def _naive_holm(p, order, out):
    m = p.size
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running


def _naive_hochberg(p, order, out):
    m = p.size
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, (m - rank) * p[i])
        out[i] = min(running, 1.0)


def _naive_bh(p, order, out):
    m = p.size
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        out[i] = min(running, 1.0)


#: A plain-Python rule per correction of the registry, by its id (a new correction without
#: one fails the tests with a KeyError).
NAIVE_ADJUST = {"holm": _naive_holm, "hochberg": _naive_hochberg, "bh": _naive_bh}


def naive_adjust(p, method):
    """Holm, Hochberg and BH, written out."""
    p = np.asarray(p, dtype=float)
    out = np.empty(p.size)
    NAIVE_ADJUST[method](p, np.argsort(p), out)
    return out


def r_cmh(k_a, n_a, k_b, n_b, correct):
    """R's classical Mantel-Haenszel statistic, estimate and Robins sd (mantelhaen.test)."""
    x11, x12 = np.asarray(k_b, float), np.asarray(n_b, float) - k_b
    x21, x22 = np.asarray(k_a, float), np.asarray(n_a, float) - k_a
    n = x11 + x12 + x21 + x22
    row1, col1 = x11 + x12, x11 + x21
    row2, col2 = x21 + x22, x12 + x22
    delta = abs(np.sum(x11 - row1 * col1 / n))
    yates = 0.5 if (correct and delta >= 0.5) else 0.0
    stat = (delta - yates) ** 2 / np.sum(row1 * row2 * col1 * col2 / (n**2 * (n - 1)))
    s_diag = np.sum(x11 * x22 / n)
    s_offd = np.sum(x12 * x21 / n)
    est = s_diag / s_offd
    sd = math.sqrt(
        np.sum((x11 + x22) * x11 * x22 / n**2) / (2 * s_diag**2)
        + np.sum(((x11 + x22) * x12 * x21 + (x12 + x21) * x11 * x22) / n**2) / (2 * s_diag * s_offd)
        + np.sum((x12 + x21) * x12 * x21 / n**2) / (2 * s_offd**2)
    )
    return (
        stat,
        est,
        est * math.exp(-1.959963984540054 * sd),
        est * math.exp(1.959963984540054 * sd),
    )


# ----------------------------------------------------------------------------- exact stratified

SMALL_STRATA = [
    ([1], [4], [3], [4]),
    ([2, 3], [5, 6], [4, 1], [6, 4]),
    ([0, 2, 5], [3, 4, 6], [3, 4, 2], [3, 5, 6]),
    ([1, 1, 2], [2, 3, 3], [2, 0, 3], [2, 3, 3]),
    ([4, 0, 3, 2], [6, 5, 4, 3], [6, 2, 1, 3], [6, 5, 4, 3]),
    ([3, 3], [3, 3], [0, 0], [3, 3]),  # s at the bottom of the support
    ([0, 5], [4, 5], [4, 5], [4, 5]),  # an uninformative stratum (all successes)
]


@pytest.mark.parametrize("k_a, n_a, k_b, n_b", SMALL_STRATA)
def test_exact_stratified_matches_enumeration(k_a, n_a, k_b, n_b):
    res = exact_stratified_test(k_a, n_a, k_b, n_b)
    dist = naive_strata_distribution(k_a, n_a, k_b, n_b)
    s = sum(k_b)
    assert res.statistic == s
    assert res.support == (min(dist), max(dist))
    assert res.pvalue == pytest.approx(naive_two_sided(dist, s), rel=1e-10)
    assert res.pvalue_greater == pytest.approx(naive_tail(dist, s, 1.0, True), rel=1e-10)
    assert res.pvalue_less == pytest.approx(naive_tail(dist, s, 1.0, False), rel=1e-10)
    half = (1 - res.confidence) / 2
    if s > min(dist):
        assert naive_tail(dist, s, res.odds_ratio_lower, True) == pytest.approx(half, rel=1e-8)
    else:
        assert res.odds_ratio_lower == 0.0
    if s < max(dist):
        assert naive_tail(dist, s, res.odds_ratio_upper, False) == pytest.approx(half, rel=1e-8)
    else:
        assert res.odds_ratio_upper == math.inf
    if min(dist) < s < max(dist):  # conditional MLE: E_psi[S] = s
        lo = min(dist)
        w = {k: float(v) * res.odds_ratio ** (k - lo) for k, v in dist.items()}
        mean = sum(k * v for k, v in w.items()) / sum(w.values())
        assert mean == pytest.approx(s, rel=1e-9)


def test_density_kernel_sums_to_one_and_matches_enumeration():
    k_a, n_a, k_b, n_b = SMALL_STRATA[4]
    t = np.array(k_a) + np.array(k_b)
    lo, logd = _k.strata_log_density(np.array(n_b), np.array(n_a), t, 0.0)
    dist = naive_strata_distribution(k_a, n_a, k_b, n_b)
    assert lo == min(dist)
    np.testing.assert_allclose(
        np.exp(logd), [float(dist[s]) for s in range(lo, lo + logd.size)], rtol=1e-12
    )


@pytest.mark.parametrize(
    "k1, n1, k2, n2",
    [
        (14, 20, 18, 20),
        (74, 100, 88, 100),
        (0, 5, 5, 5),
        (3, 7, 3, 7),
        (1, 30, 0, 12),
        (221, 300, 263, 300),
    ],
)
def test_one_stratum_is_fisher(k1, n1, k2, n2):
    res = exact_stratified_test([k1], [n1], [k2], [n2])
    table = [[k2, n2 - k2], [k1, n1 - k1]]
    assert res.pvalue == pytest.approx(fisher_exact(table).pvalue, rel=1e-9)
    cond = scipy_odds_ratio(table, kind="conditional")
    ci = cond.confidence_interval(0.95)
    assert res.odds_ratio == pytest.approx(cond.statistic, rel=1e-6)
    assert res.odds_ratio_lower == pytest.approx(ci.low, rel=1e-6, abs=1e-12)
    if math.isinf(ci.high):
        assert math.isinf(res.odds_ratio_upper)
    else:
        assert res.odds_ratio_upper == pytest.approx(ci.high, rel=1e-6)


def test_one_stratum_fisher_all_tables_n12():
    for k1 in range(13):
        for k2 in range(9):
            got = exact_stratified_test([k1], [12], [k2], [8]).pvalue
            want = fisher_exact([[k2, 8 - k2], [k1, 12 - k1]]).pvalue
            assert got == pytest.approx(want, rel=1e-9), (k1, k2)


def test_r_help_rabbits_example():
    """R's ?mantelhaen.test example (Agresti 1990, penicillin and rabbits): its comments say
    exact two-sided p = 0.040 and one-sided ('greater') p = 0.020; enumeration is the check."""
    # array(c(0,0,6,5, 3,0,3,6, 6,2,0,4, 5,6,1,0, 2,5,0,0), dim = c(2, 2, 5)): column-major,
    # rows Delay (None, 1.5h), columns Response (Cured, Died). B = "None", A = "1.5h".
    cured_none = [0, 3, 6, 5, 2]
    died_none = [6, 3, 0, 1, 0]
    cured_late = [0, 0, 2, 6, 5]
    died_late = [5, 6, 4, 0, 0]
    n_b = [c + d for c, d in zip(cured_none, died_none, strict=True)]
    n_a = [c + d for c, d in zip(cured_late, died_late, strict=True)]
    res = exact_stratified_test(cured_late, n_a, cured_none, n_b)
    dist = naive_strata_distribution(cured_late, n_a, cured_none, n_b)
    assert res.pvalue == pytest.approx(naive_two_sided(dist, sum(cured_none)), rel=1e-10)
    assert round(res.pvalue, 3) == 0.040
    assert round(res.pvalue_greater, 3) == 0.020


def test_large_strata_agree_with_one_table_when_margins_are_proportional():
    # Ten copies of one stratum vs the enumeration-free check: p-value in (0, 1], symmetric
    # tables give p = 1, and swapping A and B inverts the odds ratio.
    k = [50] * 10
    n = [100] * 10
    assert exact_stratified_test(k, n, k, n).pvalue == pytest.approx(1.0)
    r1 = exact_stratified_test([40, 45, 30], [100, 90, 80], [55, 50, 41], [100, 90, 80])
    r2 = exact_stratified_test([55, 50, 41], [100, 90, 80], [40, 45, 30], [100, 90, 80])
    assert r1.pvalue == pytest.approx(r2.pvalue, rel=1e-12)
    assert r1.odds_ratio == pytest.approx(1 / r2.odds_ratio, rel=1e-8)
    assert r1.odds_ratio_lower == pytest.approx(1 / r2.odds_ratio_upper, rel=1e-8)


# ----------------------------------------------------------------------------- per task, adjust


def test_per_task_fisher_and_mcnemar_and_adjustment():
    tasks = ["a", "b", "c", "d"]
    k_a, n_a, k_b, n_b = [14, 30, 7, 40], [20, 50, 20, 50], [18, 35, 15, 41], [20, 50, 20, 50]
    pairs = [None, None, (1, 9), None]
    rows = per_task_tests(tasks, k_a, n_a, k_b, n_b, pairs=pairs)
    raw = []
    for row, ka, na, kb, nb, pr in zip(rows, k_a, n_a, k_b, n_b, pairs, strict=True):
        if pr is None:
            want = fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
            assert row.test == "fisher"
        else:
            # exact McNemar = two-sided binomial test of b of b + c at 1/2
            b, c = pr
            d = b + c
            tail = sum(math.comb(d, i) for i in range(min(b, c) + 1)) / 2**d
            want = min(1.0, 2 * tail)
            assert row.test == "mcnemar" and (row.a_only, row.b_only) == pr
        assert row.pvalue == pytest.approx(want, rel=1e-10)
        raw.append(row.pvalue)
    assert all(list(r.adjusted) == list(CORRECTIONS) for r in rows)
    for method in CORRECTIONS:
        np.testing.assert_allclose(
            [r.adjusted[method] for r in rows], naive_adjust(raw, method), rtol=1e-12
        )


@pytest.mark.parametrize("method", list(CORRECTIONS))
def test_adjust_against_plain_python(method):
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 12))
        np.testing.assert_allclose(adjust_pvalues(p, method), naive_adjust(p, method), rtol=1e-12)
        sm = CORRECTIONS[method].statsmodels
        np.testing.assert_array_equal(adjust_pvalues(p, method), multipletests(p, method=sm)[1])


def test_corrections_registry():
    assert ADJUST_METHODS == {m: c.statsmodels for m, c in CORRECTIONS.items()}
    assert list(ADJUST_METHODS) == list(CORRECTIONS)
    assert set(NAIVE_ADJUST) == set(CORRECTIONS)
    for key, c in CORRECTIONS.items():
        assert key == c.id and c.label and c.short and c.assumptions and c.reference
        assert c.controls in ("FWER", "FDR")
        multipletests([0.01, 0.2], method=c.statsmodels)  # a name statsmodels knows
    for field in ("label", "short", "statsmodels"):
        values = [getattr(c, field) for c in CORRECTIONS.values()]
        assert len(set(values)) == len(values), field


@pytest.mark.parametrize("method", list(CORRECTIONS))
def test_controls_is_true_to_the_correction(method):
    # 5 true nulls (independent uniform p) and 5 sure effects (p = 1e-12), at alpha = 0.05:
    # a correction that controls the family-wise error rejects a true null in at most about
    # 5% of the families; one that controls only the false discovery rate rejects one far
    # more often here (BH about 20%), while its false discovery proportion averages <= 5%.
    rng = np.random.default_rng(25)
    reps, alpha = 4000, 0.05
    any_false = share_false = 0.0
    for _ in range(reps):
        p = np.concatenate([rng.uniform(size=5), np.full(5, 1e-12)])
        reject = adjust_pvalues(p, method) < alpha
        false = int(reject[:5].sum())
        any_false += false > 0
        share_false += false / max(int(reject.sum()), 1)
    fwer, fdr = any_false / reps, share_false / reps
    slack = 4 * math.sqrt(alpha * (1 - alpha) / reps)
    assert fdr <= alpha + slack
    if CORRECTIONS[method].controls == "FWER":
        assert fwer <= alpha + slack
    else:
        assert fwer > alpha + slack


def test_adjust_errors():
    with pytest.raises(ValueError, match="method must be one of"):
        adjust_pvalues([0.1], "bonferroni")
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        adjust_pvalues([1.2], "holm")


# ----------------------------------------------------------------------------- CMH


@pytest.mark.parametrize(
    "k_a, n_a, k_b, n_b",
    [
        ([30, 40, 25], [50, 60, 40], [38, 45, 33], [50, 60, 40]),
        ([5, 8], [20, 20], [12, 9], [20, 20]),
    ],
)
def test_cmh_against_r_formula_and_statsmodels(k_a, n_a, k_b, n_b):
    from statsmodels.stats.contingency_tables import StratifiedTable

    res = cmh_test(k_a, n_a, k_b, n_b)
    stat, est, lo, hi = r_cmh(k_a, n_a, k_b, n_b, correct=False)
    stat_c, *_ = r_cmh(k_a, n_a, k_b, n_b, correct=True)
    assert res.statistic == pytest.approx(stat, rel=1e-10)
    assert res.statistic_corrected == pytest.approx(stat_c, rel=1e-10)
    assert res.pvalue == pytest.approx(math.erfc(math.sqrt(stat / 2)), rel=1e-10)
    assert res.odds_ratio == pytest.approx(est, rel=1e-10)
    assert res.odds_ratio_lower == pytest.approx(lo, rel=1e-8)
    assert res.odds_ratio_upper == pytest.approx(hi, rel=1e-8)
    tables = np.array(
        [[[kb, nb - kb], [ka, na - ka]] for ka, na, kb, nb in zip(k_a, n_a, k_b, n_b, strict=True)]
    ).transpose(1, 2, 0)
    bd = StratifiedTable(tables).test_equal_odds(adjust=False)
    assert res.breslow_day_pvalue == pytest.approx(bd.pvalue, rel=1e-12)
    assert res.n_informative == len(k_a)


def test_cmh_drops_uninformative_tasks_and_handles_none():
    full = cmh_test([5, 10], [10, 10], [8, 10], [10, 10])
    alone = cmh_test([5], [10], [8], [10])
    assert full.statistic == pytest.approx(alone.statistic)
    assert full.n_informative == 1 and math.isnan(full.breslow_day_pvalue)
    none = cmh_test([10], [10], [10], [10])
    assert none.pvalue == 1.0 and none.n_informative == 0


def test_input_errors():
    with pytest.raises(ValueError, match="one length"):
        exact_stratified_test([1, 2], [3, 3], [1], [3])
    with pytest.raises(ValueError, match="k > n|must be <= n|exceeds"):
        exact_stratified_test([4], [3], [1], [3])
    with pytest.raises(ValueError, match="task names"):
        per_task_tests(["a"], [1, 2], [3, 3], [1, 1], [3, 3])


def logspace_strata(k_a, n_a, k_b, n_b):
    """Log-density of S by a log-sum-exp convolution of scipy's hypergeometric log-pmfs
    (no underflow anywhere): (lo, log_density)."""
    from scipy.special import logsumexp
    from scipy.stats import hypergeom

    lo, logd = 0, np.array([0.0])
    for ka, na, kb, nb in zip(k_a, n_a, k_b, n_b, strict=True):
        t = ka + kb
        xs = np.arange(max(0, t - na), min(nb, t) + 1)
        lp = hypergeom.logpmf(xs, na + nb, nb, t)
        out = np.full(logd.size + xs.size - 1, -np.inf)
        for i, v in enumerate(logd):
            out[i : i + xs.size] = np.logaddexp(out[i : i + xs.size], v + lp)
        logd, lo = out, lo + int(xs[0])
    return lo, logd - logsumexp(logd)


def test_far_from_the_null_interval_stays_exact():
    """P(S = s_obs) at psi = 1 is ~1e-400 here (below double range): the p-value is 0, the
    interval and the MLE still solve their equations on a log-space reference."""
    from scipy.special import logsumexp

    k_a, n_a, k_b, n_b = [100, 100, 100, 100], [500] * 4, [500, 500, 499, 500], [500] * 4
    res = exact_stratified_test(k_a, n_a, k_b, n_b)
    lo, logd = logspace_strata(k_a, n_a, k_b, n_b)
    j = sum(k_b) - lo
    assert logd[j] < -745  # exp() of it is 0 in double precision
    assert res.pvalue == 0.0

    def log_tail(psi, upper):
        w = logd + np.arange(logd.size) * math.log(psi)
        return (logsumexp(w[j:]) if upper else logsumexp(w[: j + 1])) - logsumexp(w)

    assert math.exp(log_tail(res.odds_ratio_lower, True)) == pytest.approx(0.025, rel=1e-6)
    assert math.exp(log_tail(res.odds_ratio_upper, False)) == pytest.approx(0.025, rel=1e-6)
    swapped = exact_stratified_test(k_b, n_b, k_a, n_a)
    assert swapped.odds_ratio == pytest.approx(1 / res.odds_ratio, rel=1e-8)


@pytest.mark.parametrize("method", list(CORRECTIONS))
def test_adjust_bit_for_bit_with_statsmodels_with_ties_and_caps(method):
    # adjust_pvalues writes out multipletests' rules (no statsmodels at run time): the same
    # bits, including which of tied p-values gets which adjusted value and the cap at 1
    rng = np.random.default_rng(24)
    sm = CORRECTIONS[method].statsmodels
    levels = np.array([0.0, 1e-12, 0.003, 0.01, 0.04, 0.05, 0.3, 0.7, 1.0])
    for size in (1, 2, 3, 5, 8, 17, 40):
        for _ in range(15):
            p = rng.choice(levels, size=size)
            if rng.random() < 0.5:
                p = np.where(rng.random(size) < 0.5, p, rng.uniform(0, 1, size))
            np.testing.assert_array_equal(adjust_pvalues(p, method), multipletests(p, method=sm)[1])

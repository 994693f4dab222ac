"""Seeds as the unit of replication (evalsim.stats.multi.seeds) against SciPy's Welch test, a
plain-Python Welch reference and the analytic variance of the cluster bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from naive_multi_seed import welch
from scipy import stats

from evalsim.stats.multi.seeds import cluster_interval, seed_comparison

KA, NA = [36, 24, 30], [40, 40, 40]
KB, NB = [28, 29, 28, 29, 20], [40, 40, 40, 40, 30]


def test_welch_matches_scipy_and_plain_python():
    r = seed_comparison(KA, NA, KB, NB, confidence=0.9, n_reps=200)
    ra = [k / n for k, n in zip(KA, NA, strict=True)]
    rb = [k / n for k, n in zip(KB, NB, strict=True)]
    t, df, _ = welch(ra, rb)
    _, _, half = welch(ra, rb, stats.t.ppf(0.95, df))
    sp = stats.ttest_ind(rb, ra, equal_var=False)
    assert r.welch_statistic == pytest.approx(t, rel=1e-12)
    assert r.welch_df == pytest.approx(df, rel=1e-12)
    assert r.welch_pvalue == pytest.approx(float(sp.pvalue), rel=1e-12)
    assert r.welch_pvalue == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-10)
    d = np.mean(rb) - np.mean(ra)
    assert (r.welch_lower, r.welch_upper) == pytest.approx((d - half, d + half), rel=1e-10)
    assert r.mean_a == pytest.approx(np.mean(ra)) and r.micro_b == pytest.approx(sum(KB) / sum(NB))


def test_cluster_bootstrap_se_matches_two_stage_variance():
    """Equal seed sizes m: Var(micro*) = s_between^2 (g-1)/g / g + E[p(1-p)]/(g m) per policy
    (seeds redrawn, then Binomial within), summed over A and B; within 4 SE of the SD."""
    reps = 6000
    r = seed_comparison(KA, NA, KB[:4], NB[:4], n_reps=reps, seed=11)
    var = 0.0
    for k, n in ((KA, NA), (KB[:4], NB[:4])):
        p = np.array(k) / np.array(n)
        g, m = p.size, n[0]
        var += p.var(ddof=0) / g + float(np.mean(p * (1 - p))) / (g * m)
    assert r.bootstrap_se == pytest.approx(math.sqrt(var), rel=4 / math.sqrt(2 * reps))
    assert r.naive_se == pytest.approx(
        math.sqrt(0.75 * 0.25 / 120 + (114 / 160) * (46 / 160) / 160), rel=1e-12
    )


def test_no_spread_is_exact_and_deterministic():
    r = seed_comparison([30, 30], [50, 50], [35, 35], [50, 50], n_reps=100)
    assert r.welch_pvalue == 0.0 and r.welch_lower == r.welch_upper == pytest.approx(0.1)
    same = seed_comparison([30, 30], [50, 50], [30, 30], [50, 50], n_reps=100)
    assert same.welch_pvalue == 1.0
    a = seed_comparison(KA, NA, KB, NB, n_reps=300, seed=4)
    b = seed_comparison(KA, NA, KB, NB, n_reps=300, seed=4)
    assert a == b


@pytest.mark.parametrize(
    "args, match",
    [
        (([3], [5], [1, 2], [5, 5]), "at least 2 seeds"),
        (([3, 6], [5, 5], [1, 2], [5, 5]), "k must be <= n"),
        (([3, 1], [5, 5], [1, 2], [5, 5], 1.5), "confidence"),
    ],
)
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        seed_comparison(*args)


def test_cluster_interval_has_the_law_of_the_hierarchical_bootstrap():
    """Same two-stage law as T28's kernel (episodes redrawn one by one): the interval ends
    agree within Monte-Carlo error, and the naive one is Binomial(N, K / N) / N."""
    from evalsim.stats.multi.hierarchy import hierarchical_bootstrap

    k, n = np.array([36, 24, 30, 33]), np.array([40, 40, 40, 40])
    values = np.concatenate([np.r_[np.ones(a), np.zeros(b - a)] for a, b in zip(k, n, strict=True)])
    labels = np.repeat(np.arange(4), 40)
    reps = 8000
    lo, hi, n_lo, n_hi = cluster_interval(k, n, 0.9, reps, seed=2)
    hb = hierarchical_bootstrap(values, labels, reps, 0.9, 3)
    sd = hb.micro_se
    assert lo == pytest.approx(hb.micro_lower, abs=0.5 * sd)
    assert hi == pytest.approx(hb.micro_upper, abs=0.5 * sd)
    p, big_n = k.sum() / n.sum(), n.sum()
    z = stats.norm.ppf(0.95) * math.sqrt(p * (1 - p) / big_n)
    assert (n_lo, n_hi) == pytest.approx((p - z, p + z), abs=0.01)

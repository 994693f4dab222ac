"""Two spreads (ANOVA ICC, design effect) and the hierarchical bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from naive_peeking import anova_icc_from_observations
from scipy.stats import chi2_contingency, f_oneway

from evalsim.stats.multi.hierarchy import hierarchical_bootstrap, two_spreads


def _obs(k, n):
    return [[1] * a + [0] * (b - a) for a, b in zip(k, n, strict=True)]


@pytest.mark.parametrize(
    ("k", "n"),
    [
        ([210, 225, 240], [300, 300, 300]),
        ([3, 9, 5, 7], [10, 12, 8, 15]),  # unbalanced
        ([15, 15, 15], [20, 20, 20]),  # identical rates: negative ICC
        ([0, 20], [20, 20]),  # complete separation: ICC = 1
        ([1, 2], [3, 3]),  # ANOVA denominator below 1 (0.83): ICC still defined, -0.2
    ],
)
def test_two_spreads_against_naive_anova_and_scipy(k, n):
    res = two_spreads(k, n)
    groups = _obs(k, n)
    msb, msw, n0, icc = anova_icc_from_observations(groups)
    assert res.msb == pytest.approx(msb, rel=1e-12, abs=1e-15)
    assert res.msw == pytest.approx(msw, rel=1e-12, abs=1e-15)
    assert res.n0 == pytest.approx(n0, rel=1e-12)
    assert res.icc == pytest.approx(icc, rel=1e-10, abs=1e-15)
    if msw > 0:
        f = f_oneway(*[np.array(g, dtype=float) for g in groups]).statistic
        assert res.msb / res.msw == pytest.approx(f, rel=1e-10)
    assert res.between_var == pytest.approx((msb - msw) / n0, rel=1e-12, abs=1e-15)
    m = sum(n) / len(n)
    assert res.design_effect == pytest.approx(1 + (m - 1) * max(icc, 0.0))
    assert res.n_effective == pytest.approx(sum(n) / res.design_effect)
    # Homogeneity: Pearson's chi-square on the g x 2 table (SciPy, no continuity correction).
    table = [[a, b - a] for a, b in zip(k, n, strict=True)]
    assert res.homogeneity_pvalue == pytest.approx(
        chi2_contingency(table, correction=False).pvalue, rel=1e-10
    )


def test_two_spreads_hand_example():
    # p = 0.75; MSB = 300 * (0.05^2 + 0 + 0.05^2) / 2 = 0.75;
    # MSW = 300 * (0.21 + 0.1875 + 0.16) / 897; ICC = (MSB - MSW) / (MSB + 299 MSW).
    res = two_spreads([210, 225, 240], [300, 300, 300])
    msw = 300 * (0.21 + 0.1875 + 0.16) / 897
    assert res.pooled_rate == 0.75
    assert res.cluster_rates == (0.7, 0.75, 0.8)
    assert (res.successes, res.sizes) == ((210, 225, 240), (300, 300, 300))
    assert (res.n_clusters, res.n_total) == (3, 900)
    assert res.msb == pytest.approx(0.75)
    assert res.msw == pytest.approx(msw)
    assert res.icc == pytest.approx((0.75 - msw) / (0.75 + 299 * msw))
    assert res.seed_sd == pytest.approx(0.05)
    assert res.trial_sd == pytest.approx(math.sqrt(0.75 * 0.25 / 300))
    assert repr(res) == (
        "TwoSpreads([210/300, 225/300, 240/300], pooled=0.7500, seed_sd=0.0500, "
        f"trial_sd=0.0250, icc={res.icc:.4f}, design_effect={res.design_effect:.3f}, "
        f"n_effective={900 / res.design_effect:.1f})"
    )


def test_identical_seeds_give_no_design_effect():
    res = two_spreads([15, 15, 15], [20, 20, 20])
    assert res.icc < 0 and res.between_var < 0
    assert res.design_effect == 1.0 and res.n_effective == 60.0
    assert res.homogeneity_pvalue == pytest.approx(1.0)


@pytest.mark.parametrize("k", [[20, 20], [0, 0]])
def test_all_successes_or_all_failures_are_undefined_not_an_error(k):
    res = two_spreads(k, [20, 20])
    assert math.isnan(res.icc) and math.isnan(res.design_effect)
    assert math.isnan(res.n_effective) and math.isnan(res.homogeneity_pvalue)
    assert res.seed_sd == 0.0 and res.trial_sd == 0.0 and res.pooled_rate == k[0] / 20


@pytest.mark.parametrize(
    ("k", "n", "match"),
    [
        ([5], [10], "at least 2 clusters"),
        ([5, 11], [10, 10], "k must be <= n"),
        ([1, 1], [1, 1], "more trials"),
    ],
)
def test_two_spreads_errors(k, n, match):
    with pytest.raises(ValueError, match=match):
        two_spreads(k, n)


def _clustered(rates, m, seed=0):
    rng = np.random.default_rng(seed)
    vals = np.concatenate([rng.random(m) < r for r in rates]).astype(float)
    return vals, np.repeat(np.arange(len(rates)), m)


def test_bootstrap_is_deterministic_for_a_seed():
    vals, cl = _clustered([0.6, 0.7, 0.8, 0.9], 50)
    a = hierarchical_bootstrap(vals, cl, n_reps=500, seed=3)
    b = hierarchical_bootstrap(vals, cl, n_reps=500, seed=3)
    c = hierarchical_bootstrap(vals, cl, n_reps=500, seed=4)
    assert a == b
    assert a != c


def test_bootstrap_basic_properties():
    vals, cl = _clustered([0.5, 0.7, 0.9, 0.6, 0.8], 60, seed=1)
    res = hierarchical_bootstrap(vals, cl, n_reps=2000, confidence=0.9, seed=1)
    assert res.n_clusters == 5 and res.n_episodes == 300
    assert res.micro == pytest.approx(vals.mean())
    assert res.macro == pytest.approx(res.micro)  # balanced clusters
    for lo, est, hi in [
        (res.macro_lower, res.macro, res.macro_upper),
        (res.micro_lower, res.micro, res.micro_upper),
        (res.naive_lower, res.micro, res.naive_upper),
    ]:
        assert 0.0 <= lo <= est <= hi <= 1.0
    # Naive SE is the binomial one; the cluster stage makes the interval wider.
    p = vals.mean()
    assert res.naive_se == pytest.approx(math.sqrt(p * (1 - p) / 300), rel=0.1)
    assert res.width_ratio > 1.5


def test_bootstrap_se_matches_two_stage_variance():
    # Two-stage bootstrap of a balanced design: Var = (1/g) [ S_b^2 + mean r(1-r)/m ], with
    # S_b^2 the (ddof = 0) variance of the cluster means.
    vals, cl = _clustered([0.3, 0.5, 0.6, 0.9, 0.8, 0.7], 40, seed=2)
    r = np.array([vals[cl == c].mean() for c in range(6)])
    want = math.sqrt((r.var() + np.mean(r * (1 - r)) / 40) / 6)
    res = hierarchical_bootstrap(vals, cl, n_reps=4000, seed=2)
    assert res.micro_se == pytest.approx(want, rel=0.08)
    assert res.macro_se == pytest.approx(want, rel=0.08)


def test_singleton_clusters_reduce_to_the_naive_bootstrap():
    rng = np.random.default_rng(5)
    vals = (rng.random(400) < 0.7).astype(float)
    res = hierarchical_bootstrap(vals, np.arange(400), n_reps=3000, seed=5)
    assert res.width_ratio == pytest.approx(1.0, abs=0.15)


def test_unbalanced_macro_differs_from_micro():
    vals = np.array([1.0] * 10 + [0.0] * 90 + [1.0] * 5 + [0.0] * 5)
    cl = np.array(["big"] * 100 + ["small"] * 10)
    res = hierarchical_bootstrap(vals, cl, n_reps=200, seed=0)
    assert res.micro == pytest.approx(15 / 110)
    assert res.macro == pytest.approx((0.1 + 0.5) / 2)
    assert repr(res).startswith(
        "HierarchicalBootstrap(clusters=2, episodes=110, macro=0.3000 ["
        f"{res.macro_lower:.4f}, {res.macro_upper:.4f}], micro=0.1364 ["
    )
    assert repr(res).endswith(f"width_ratio={res.width_ratio:.2f})")


def test_constant_outcomes_give_zero_width():
    res = hierarchical_bootstrap(np.ones(30), np.repeat([0, 1, 2], 10), n_reps=100, seed=0)
    assert res.micro_lower == res.micro_upper == 1.0
    assert math.isnan(res.width_ratio)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"values": [1.0, 0.0], "clusters": [0]}, "equal length"),
        ({"values": [1.0, np.nan], "clusters": [0, 1]}, "finite"),
        ({"n_reps": 1}, "n_reps must be"),
        ({"confidence": 95}, "confidence must be"),
        ({"seed": -2}, "seed must be"),
    ],
)
def test_bootstrap_errors(kwargs, match):
    args = {"values": [1.0, 0.0, 1.0], "clusters": [0, 0, 1], **kwargs}
    with pytest.raises(ValueError, match=match):
        hierarchical_bootstrap(**args)


def _pools(seed_rates, trials, tasks=("cube30",), policies=("A", "B")):
    rng = np.random.default_rng(0)
    rows = []
    for task in tasks:
        for pi, policy in enumerate(policies):
            for s, rate in enumerate(seed_rates):
                ok = rng.random(trials) < min(rate + 0.1 * pi, 1.0)
                rows.append(
                    pd.DataFrame(
                        {
                            "task": task,
                            "policy": policy,
                            "seed": s,
                            "trial": np.arange(trials),
                            "success": ok,
                            "success_loose": ok | (rng.random(trials) < 0.1),
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True)


def test_product_tables_from_synthetic_pools():
    from evalsim.products.hierarchy import hierarchical_bootstrap_table, two_spreads_table
    from evalsim.products.settings import Bootstrap

    pools = _pools([0.5, 0.65, 0.8], 100, tasks=("cube30", "cube20"))
    t22 = two_spreads_table(pools, confidence=0.95)
    assert len(t22) == 4 and set(t22.policy) == {"A", "B"}
    row = t22.iloc[0]
    assert row.pooled_n == 300 and row.seeds == 3
    assert row.per_seed_k_n.count("/100") == 3
    assert row.seed_sd > row.trial_sd and row.design_effect > 1
    assert row.pooled_wilson_lower < row.pooled_rate < row.pooled_wilson_upper
    t28 = hierarchical_bootstrap_table(pools, Bootstrap(0.95, 300, 20251129), ["task", "seed"])
    assert t28.clusters.tolist() == [6, 6] and t28.episodes.tolist() == [600, 600]
    assert (t28.width_ratio > 1).all()
    again = hierarchical_bootstrap_table(pools, Bootstrap(0.95, 300, 20251129), [["task", "seed"]])
    assert t28.equals(again)
    both = hierarchical_bootstrap_table(
        pools, Bootstrap(0.95, 300, 1), [["task"], ["task", "seed"]]
    )
    assert both.cluster_by.tolist() == ["task", "task×seed", "task", "task×seed"]
    assert both.clusters.tolist() == [2, 6, 2, 6]
    loose = two_spreads_table(pools, confidence=0.95, outcome="success_loose")
    assert (loose.pooled_k >= t22.pooled_k).all()
    with pytest.raises(ValueError, match="lack column"):
        two_spreads_table(pools.drop(columns="seed"), confidence=0.95)


def _plain_two_stage(values, clusters, n_reps, rng):
    """The two-stage bootstrap as a plain loop over the clusters' episode lists (no numba).

    Consumes the stream as documented: per replicate one uniform per drawn cluster, then one
    per episode drawn within it; then N uniforms for the naive replicate. An index is
    ``int(u * size)``.
    """
    groups = {}
    for v, c in zip(values, clusters, strict=True):
        groups.setdefault(c, []).append(float(v))
    ordered = [groups[c] for c in sorted(groups)]
    flat = [v for g in ordered for v in g]
    g = len(ordered)
    macro, micro, naive = [], [], []
    for _ in range(n_reps):
        means, drawn = [], []
        for _ in range(g):
            cluster = ordered[int(rng.random() * g)]
            picks = [cluster[int(rng.random() * len(cluster))] for _ in cluster]
            means.append(sum(picks) / len(picks))
            drawn.extend(picks)
        macro.append(sum(means) / g)
        micro.append(sum(drawn) / len(drawn))
        naive.append(sum(flat[int(rng.random() * len(flat))] for _ in flat) / len(flat))
    return np.array(macro), np.array(micro), np.array(naive)


@pytest.mark.parametrize("jit", [True, False])
def test_kernel_draw_for_draw_against_a_plain_loop(jit):
    """Every replicate equals a plain-Python two-stage loop on the same random stream."""
    from evalsim.stats.multi import _hierarchy_kernels as k

    rng = np.random.default_rng(11)
    sizes = [3, 7, 1, 12, 5]
    vals = np.round(rng.random(sum(sizes)), 3)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    kernel = k.hierarchical_bootstrap if jit else k._hierarchical_bootstrap
    got = kernel(vals, starts, 50, np.random.default_rng(7))
    want = _plain_two_stage(vals, labels, 50, np.random.default_rng(7))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


def test_public_function_uses_the_kernel_on_sorted_clusters():
    """Unsorted string labels: the intervals are the quantiles of the plain loop's draws."""
    rng = np.random.default_rng(3)
    labels = np.array(["t2", "t0", "t1", "t2", "t0", "t2", "t1", "t1", "t2", "t0", "t2"])
    vals = (rng.random(labels.size) < 0.6).astype(float)
    res = hierarchical_bootstrap(vals, labels, n_reps=400, confidence=0.8, seed=9)
    macro, micro, naive = _plain_two_stage(vals, labels, 400, np.random.default_rng(9))
    q = [0.1, 0.9]
    assert (res.macro_lower, res.macro_upper) == pytest.approx(tuple(np.quantile(macro, q)))
    assert (res.micro_lower, res.micro_upper) == pytest.approx(tuple(np.quantile(micro, q)))
    assert (res.naive_lower, res.naive_upper) == pytest.approx(tuple(np.quantile(naive, q)))
    assert res.macro_se == pytest.approx(np.std(macro, ddof=1))
    assert res.micro_se == pytest.approx(np.std(micro, ddof=1))
    assert res.naive_se == pytest.approx(np.std(naive, ddof=1))
    means = [vals[labels == c].mean() for c in ("t0", "t1", "t2")]
    assert res.macro == pytest.approx(np.mean(means)) and res.micro == pytest.approx(vals.mean())
    assert res.n_reps == 400 and res.confidence == 0.8 and res.seed == 9
    gen = hierarchical_bootstrap(vals, labels, n_reps=400, seed=np.random.default_rng(9))
    assert gen.seed is None and gen.micro_lower == pytest.approx(np.quantile(micro, 0.025))


def test_bootstrap_defaults_and_edge_inputs():
    vals, cl = _clustered([0.6, 0.8], 5, seed=4)
    res = hierarchical_bootstrap(vals, cl)
    assert (res.n_reps, res.confidence, res.seed) == (2000, 0.95, 0)
    assert res == hierarchical_bootstrap(vals, cl, n_reps=2000, confidence=0.95, seed=0)
    # 0/1 given as bools or ints: the same numbers as floats
    assert hierarchical_bootstrap(vals.astype(bool), cl, n_reps=50, seed=1) == (
        hierarchical_bootstrap(vals, cl, n_reps=50, seed=1)
    )
    one = hierarchical_bootstrap([1.0], ["only"], n_reps=2, seed=0)  # the smallest input
    assert (one.n_clusters, one.n_episodes, one.micro, one.micro_lower) == (1, 1, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"^values must be finite, got a NaN or infinity$"):
        hierarchical_bootstrap([1.0, np.inf], [0, 1])
    with pytest.raises(ValueError, match="non-empty"):
        hierarchical_bootstrap([], [])
    for bad in (True, 1.5, "3"):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            hierarchical_bootstrap([1.0, 0.0], [0, 1], seed=bad)

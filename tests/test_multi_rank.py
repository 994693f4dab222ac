"""Many policies: stratified bootstrap, MOVER, letters, simultaneous intervals, P(X > Y), IQM.

References computed here: plain-Python bootstraps that consume the same random stream
(numba's ``Generator.random`` is NumPy's), closed-form variances for Monte-Carlo bands,
SciPy's ``trim_mean`` / ``mannwhitneyu``, and a plain-numpy transcription of rliable's
stratified bootstrap (rliable 1.2.0 itself does not run with the pinned pandas; see
:func:`rliable_style_intervals`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalsim.stats.multi import _kernels as _k
from evalsim.stats.multi.aggregate import (
    aggregate_success,
    mover_macro_interval,
    outcome_grid,
)
from evalsim.stats.multi.rank import (
    compact_letter_display,
    improvement_probability,
    iqm,
    rank_policies,
    simultaneous_intervals,
)
from evalsim.stats.proportion.intervals import wilson_interval


def make_trials(rates, n, seed=0):
    """Tidy trials: rates[task][policy] -> n Bernoulli episodes per cell, 3 seeds each."""
    rng = np.random.default_rng(seed)
    rows = []
    for t, per_policy in enumerate(rates):
        for p, rate in enumerate(per_policy):
            for e in range(n):
                rows.append(
                    {
                        "task": f"t{t}",
                        "policy": f"P{p}",
                        "seed": e % 3,
                        "success": bool(rng.random() < rate),
                    }
                )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- grid


def test_outcome_grid_counts_and_missing_cell_named():
    df = make_trials([[0.5, 0.9], [0.2, 0.4]], 10)
    g = outcome_grid(df)
    assert g.tasks == ("t0", "t1") and g.policies == ("P0", "P1")
    for (t, p), cell in df.groupby(["task", "policy"]):
        ti, pi = g.tasks.index(t), g.policies.index(p)
        assert g.k[ti, pi] == cell["success"].sum() and g.n[ti, pi] == len(cell)
        np.testing.assert_array_equal(g.cell(ti, pi), cell["success"].to_numpy(float))
    with pytest.raises(ValueError, match="policy 'P1' has no trials in task 't1'"):
        outcome_grid(df[~((df.task == "t1") & (df.policy == "P1"))])
    with pytest.raises(ValueError, match="policy 'Z' is not in the trials"):
        outcome_grid(df, policies=["P0", "Z"])


# ----------------------------------------------------------------------------- bootstrap


def naive_stratified(values, starts, n_t, n_p, n_reps, resample_tasks, rng):
    micro = np.empty((n_reps, n_p))
    macro = np.empty((n_reps, n_p))
    for r in range(n_reps):
        drawn = [int(rng.random() * n_t) if resample_tasks else i for i in range(n_t)]
        sums, counts, means = [0.0] * n_p, [0] * n_p, [0.0] * n_p
        for task in drawn:
            for p in range(n_p):
                c = task * n_p + p
                lo, size = starts[c], starts[c + 1] - starts[c]
                s = sum(values[lo + int(rng.random() * size)] for _ in range(size))
                sums[p] += s
                counts[p] += size
                means[p] += s / size
        for p in range(n_p):
            micro[r, p] = sums[p] / counts[p]
            macro[r, p] = means[p] / n_t
    return micro, macro


@pytest.mark.parametrize("resample_tasks", [True, False])
def test_stratified_kernel_equals_plain_python_on_the_same_stream(resample_tasks):
    g = outcome_grid(make_trials([[0.5, 0.9, 0.1], [0.2, 0.4, 0.7], [0.6, 0.6, 0.6]], 7))
    args = (g.values, g.starts, 3, 3, 25, resample_tasks)
    got = _k.stratified_bootstrap(*args, np.random.default_rng(11))
    want = naive_stratified(*args, np.random.default_rng(11))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-14)


def test_bootstrap_variance_matches_two_stage_formula():
    """Tasks fixed: Var(macro*) = sum p_i(1-p_i)/n_i / T^2 exactly (plug-in); with tasks
    drawn, add the between-task part var_pop(p_i)/T. 4000 reps: SE of a variance ~2.2%."""
    rates = [[0.3], [0.6], [0.9], [0.5]]
    g = outcome_grid(make_trials(rates, 40, seed=5))
    aggs, reps = aggregate_success(g, n_reps=4000, seed=1)
    p = g.k[:, 0] / g.n[:, 0]
    n = g.n[:, 0]
    within = float(np.sum(p * (1 - p) / n)) / len(p) ** 2
    between = float(np.var(p)) / len(p)
    # tasks drawn with replacement then episodes: law of total variance
    total = between + float(np.sum(p * (1 - p) / n)) / len(p) ** 2
    assert reps.macro_fixed[:, 0].var() == pytest.approx(within, rel=4 * 0.022)
    assert reps.macro[:, 0].var() == pytest.approx(total, rel=4 * 0.022)
    pooled = g.k[:, 0].sum() / g.n[:, 0].sum()
    assert reps.naive[:, 0].var() == pytest.approx(pooled * (1 - pooled) / g.n.sum(), rel=0.09)
    a = aggs[0]
    assert a.micro == pytest.approx(pooled) and a.macro == pytest.approx(p.mean())
    assert a.width_ratio > 1.0  # between-task spread makes the naive interval too narrow


def test_mover_against_formula_and_single_task_wilson():
    k, n = np.array([3, 18, 40]), np.array([10, 20, 50])
    macro, lo, hi = mover_macro_interval(k, n)
    iv = wilson_interval(k, n)
    p = k / n
    assert macro == pytest.approx(p.mean())
    assert lo == pytest.approx(p.mean() - math.sqrt(np.sum(((p - iv.lower) / 3) ** 2)))
    assert hi == pytest.approx(p.mean() + math.sqrt(np.sum(((iv.upper - p) / 3) ** 2)))
    one = mover_macro_interval([7], [20])
    w = wilson_interval(7, 20)
    assert one[1:] == pytest.approx((w.lower, w.upper))


# ----------------------------------------------------------------------------- letters


def brute_force_letters_ok(names, differ, letters):
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i < j:
                share = bool(set(letters[a]) & set(letters[b]))
                if share == bool(differ[i, j]):
                    return False
    return True


def test_letter_display_known_cases():
    names = ["A", "B", "C"]
    none = np.zeros((3, 3), bool)
    assert compact_letter_display(names, none) == {"A": "a", "B": "a", "C": "a"}
    chain = none.copy()
    chain[0, 2] = chain[2, 0] = True  # A differs from C only
    assert compact_letter_display(names, chain) == {"A": "a", "B": "ab", "C": "b"}
    full = ~np.eye(3, dtype=bool)
    assert compact_letter_display(names, full, order=[2, 1, 0]) == {"A": "c", "B": "b", "C": "a"}


def test_letter_display_random_graphs_are_correct():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(2, 8))
        upper = np.triu(rng.random((m, m)) < 0.4, 1)
        differ = upper | upper.T
        names = [f"p{i}" for i in range(m)]
        letters = compact_letter_display(names, differ)
        assert brute_force_letters_ok(names, differ, letters)


# ----------------------------------------------------------------------------- simultaneous


def test_simultaneous_intervals_cover_jointly():
    """Independent normal estimates: joint coverage of max-|t| intervals ~ 0.95, wider than
    marginal (c between the marginal 1.96 and Bonferroni's)."""
    rng = np.random.default_rng(2)
    m, reps = 5, 4000
    est = np.zeros(m)
    boot = rng.normal(size=(reps, m))
    lo, hi, c = simultaneous_intervals(est, boot)
    # Sidak value for 5 independent: z_{(1 + 0.95^(1/5)) / 2} = 2.57
    assert c == pytest.approx(sps.norm.ppf((1 + 0.95 ** (1 / m)) / 2), abs=0.08)
    inside = np.all((boot >= lo) & (boot <= hi), axis=1).mean()
    assert inside == pytest.approx(0.95, abs=0.01)


# ----------------------------------------------------------------------------- P(X>Y), IQM


def test_improvement_probability_against_mannwhitney():
    rng = np.random.default_rng(4)
    x, y = (
        rng.integers(0, 5, size=(6, 3)).astype(float),
        rng.integers(0, 5, size=(4, 3)).astype(float),
    )
    want = np.mean(
        [sps.mannwhitneyu(x[:, t], y[:, t], alternative="greater").statistic / 24 for t in range(3)]
    )
    est, lo, hi = improvement_probability(x, y, n_reps=500, seed=1)
    assert est == pytest.approx(want, rel=1e-12)
    assert lo <= est <= hi


def naive_improvement_bootstrap(x, y, n_reps, rng):
    out = np.empty(n_reps)
    for r in range(n_reps):
        tot = 0.0
        for t in range(x.shape[1]):
            bx = [x[int(rng.random() * x.shape[0]), t] for _ in range(x.shape[0])]
            by = [y[int(rng.random() * y.shape[0]), t] for _ in range(y.shape[0])]
            u = sum((a > b) + 0.5 * (a == b) for a in bx for b in by)
            tot += u / (len(bx) * len(by))
        out[r] = tot / x.shape[1]
    return out


def test_improvement_bootstrap_kernel_equals_plain_python():
    rng = np.random.default_rng(6)
    x, y = rng.random((5, 2)).round(1), rng.random((3, 2)).round(1)
    got = _k.improvement_bootstrap(x, y, 30, np.random.default_rng(9))
    want = naive_improvement_bootstrap(x, y, 30, np.random.default_rng(9))
    np.testing.assert_allclose(got, want, rtol=1e-14)


def naive_iqm_bootstrap(scores, n_reps, rng):
    runs, tasks = scores.shape
    out = np.empty(n_reps)
    for r in range(n_reps):
        vals = [scores[int(rng.random() * runs), t] for t in range(tasks) for _ in range(runs)]
        out[r] = sps.trim_mean(vals, 0.25)
    return out


def test_iqm_kernel_equals_plain_python_and_scipy():
    rng = np.random.default_rng(7)
    s = rng.random((5, 4))
    got = _k.iqm_bootstrap(s, 40, np.random.default_rng(3))
    want = naive_iqm_bootstrap(s, 40, np.random.default_rng(3))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    est, lo, hi = iqm(s, n_reps=200, seed=0)
    assert est == pytest.approx(sps.trim_mean(s, 0.25, axis=None), rel=1e-14)


def rliable_style_intervals(x, y, reps, rng):
    """Plain-numpy stand-in for rliable 1.2.0 (which does not run with the pinned pandas 3.1.1:
    its arch<8 fails to import, and arch 8 rejects rliable's random_state argument).

    Written from rliable's code: ``StratifiedBootstrap.update_indices`` draws
    ``choice(num_runs, (runs, tasks))`` (each task its own runs), ``aggregate_iqm`` is
    ``trim_mean(scores, 0.25, axis=None)``; ``StratifiedIndependentBootstrap`` redraws X and Y
    independently, and ``probability_of_improvement`` averages Mann-Whitney U / (n_x n_y) over
    tasks; intervals are arch's percentile method.
    """

    def iqm_of(s):
        return sps.trim_mean(s, 0.25, axis=None)

    def poi(a, b):
        return np.mean(
            [
                0.5
                if np.array_equal(a[:, t], b[:, t])
                else sps.mannwhitneyu(a[:, t], b[:, t], alternative="greater").statistic
                / (a.shape[0] * b.shape[0])
                for t in range(a.shape[1])
            ]
        )

    cols_x = np.arange(x.shape[1])[None, :]
    cols_y = np.arange(y.shape[1])[None, :]
    iqms, pois = [], []
    for _ in range(reps):
        ix = rng.choice(x.shape[0], x.shape)
        iy = rng.choice(y.shape[0], y.shape)
        iqms.append(iqm_of(x[ix, cols_x]))
        pois.append(poi(x[ix, cols_x], y[iy, cols_y]))
    return (
        iqm_of(x),
        np.percentile(iqms, [2.5, 97.5]),
        poi(x, y),
        np.percentile(pois, [2.5, 97.5]),
    )


def test_iqm_and_improvement_against_rliable_style_reference():
    """Same estimator, independent random streams: intervals agree within Monte-Carlo bands
    (2000 reps; a 2.5% percentile's SE is about 0.004 here, bands at ~3 SE)."""
    rng = np.random.default_rng(8)
    x = rng.beta(5, 2, size=(10, 4))
    y = rng.beta(4, 3, size=(8, 4))
    iqm_ref, iqm_iv, poi_ref, poi_iv = rliable_style_intervals(x, y, 2000, np.random.default_rng(0))
    est, lo, hi = iqm(x, n_reps=2000, seed=0)
    assert est == pytest.approx(iqm_ref, rel=1e-12)
    assert (lo, hi) == pytest.approx(tuple(iqm_iv), abs=0.012)
    est, lo, hi = improvement_probability(x, y, n_reps=2000, seed=1)
    assert est == pytest.approx(poi_ref, rel=1e-12)
    assert (lo, hi) == pytest.approx(tuple(poi_iv), abs=0.02)


# ----------------------------------------------------------------------------- ranking


def test_rank_policies_orders_and_letters():
    rates = [[0.50, 0.52, 0.90], [0.40, 0.43, 0.85], [0.60, 0.58, 0.95]]
    df = make_trials(rates, 80, seed=2)
    g = outcome_grid(df)
    runs = [
        [df[(df.task == t) & (df.policy == p)]["seed"].to_numpy() for p in g.policies]
        for t in g.tasks
    ]
    r = rank_policies(g, runs=runs, n_reps=500, seed=3)
    assert r.order[0] == "P2"
    assert r.letters["P2"] == "a"
    assert set(r.letters["P0"]) == set(r.letters["P1"]) and not set(r.letters["P0"]) & {"a"}
    assert set(r.iqm) == {"P0", "P1", "P2"}
    for pair in r.pairs:
        assert pair.diff_lower <= pair.diff_macro <= pair.diff_upper
        assert 0 <= pair.prob_improvement <= 1
    assert brute_force_letters_ok(
        list(g.policies),
        np.array(
            [
                [
                    any(p.differ for p in r.pairs if {p.first, p.second} == {a, b})
                    for b in g.policies
                ]
                for a in g.policies
            ]
        ),
        r.letters,
    )


def test_episode_bootstrap_kernel_equals_plain_python_and_binomial_variance():
    rng = np.random.default_rng(12)
    values = (rng.random(30) < 0.6).astype(float)
    starts = np.array([0, 12, 30], dtype=np.int64)
    got = _k.episode_bootstrap(values, starts, 20, np.random.default_rng(5))
    stream = np.random.default_rng(5)
    want = np.empty((20, 2))
    for r in range(20):
        for g in range(2):
            lo, size = starts[g], starts[g + 1] - starts[g]
            want[r, g] = sum(values[lo + int(stream.random() * size)] for _ in range(size)) / size
    np.testing.assert_allclose(got, want, rtol=1e-14)
    many = _k.episode_bootstrap(values, starts, 4000, np.random.default_rng(6))
    p = values[12:].mean()
    # SciPy's binomial variance of a mean of 18 draws; SE of a variance over 4000 reps ~2.2%
    assert many[:, 1].var() == pytest.approx(sps.binom(18, p).var() / 18**2, rel=4 * 0.022)

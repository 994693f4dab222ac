"""The count bootstrap of large 0/1 grids (evalsim.stats.multi.aggregate, issue 24's speed
item): the same law as redrawing episodes one by one, checked in moments against the
analytic binomial variance and against the episode kernel, at a few standard errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalsim.stats.multi import _kernels as _k
from evalsim.stats.multi import aggregate as ma

K = np.array([[30, 45], [120, 100], [8, 19]])  # [task, policy]
N = np.array([[50, 60], [200, 150], [40, 40]])
REPS = 4000


def grid():
    rows = []
    for t in range(K.shape[0]):
        for p in range(K.shape[1]):
            rows += [
                {"task": f"t{t}", "policy": f"p{p}", "success": i < K[t, p]} for i in range(N[t, p])
            ]
    return ma.outcome_grid(pd.DataFrame(rows))


def test_tasks_fixed_micro_variance_is_binomial():
    """Tasks fixed: micro = sum_t Bin(n_t, p_t) / sum n; variance sum n p (1 - p) / N^2."""
    g = grid()
    micro, macro = _k.stratified_bootstrap_counts(
        g.k.ravel(), g.n.ravel(), 3, 2, REPS, False, np.random.default_rng(5)
    )
    p = K / N
    for j in range(2):
        var = float((N[:, j] * p[:, j] * (1 - p[:, j])).sum()) / N[:, j].sum() ** 2
        sd = math.sqrt(var)
        assert micro[:, j].mean() == pytest.approx(
            K[:, j].sum() / N[:, j].sum(), abs=4 * sd / math.sqrt(REPS)
        )
        assert micro[:, j].std(ddof=1) == pytest.approx(sd, rel=4 / math.sqrt(2 * REPS))
        mvar = float((p[:, j] * (1 - p[:, j]) / N[:, j]).sum()) / 9
        assert macro[:, j].std(ddof=1) == pytest.approx(
            math.sqrt(mvar), rel=4 / math.sqrt(2 * REPS)
        )


def test_tasks_resampled_matches_episode_kernel():
    g = grid()
    a_mi, a_ma = _k.stratified_bootstrap_counts(
        g.k.ravel(), g.n.ravel(), 3, 2, REPS, True, np.random.default_rng(1)
    )
    b_mi, b_ma = _k.stratified_bootstrap(
        g.values, g.starts, 3, 2, REPS, True, np.random.default_rng(2)
    )
    for a, b in ((a_mi, b_mi), (a_ma, b_ma)):
        se = b.std(axis=0, ddof=1) / math.sqrt(REPS)
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * math.sqrt(2) * se)
        ratio = a.std(axis=0, ddof=1) / b.std(axis=0, ddof=1)
        assert np.all(
            np.abs(ratio - 1) < 4 * math.sqrt(2 / (2 * REPS)) * 3
        )  # SD ratio, ~3x for heavy tails


def test_naive_count_bootstrap_variance():
    k, n = np.array([60, 900]), np.array([100, 1000])
    out = _k.count_bootstrap(k, n, REPS, np.random.default_rng(3))
    p = k / n
    assert out.std(axis=0, ddof=1) == pytest.approx(
        np.sqrt(p * (1 - p) / n), rel=4 / math.sqrt(2 * REPS)
    )


def test_dispatch_at_threshold(monkeypatch):
    """Below the threshold the episode kernel runs (old replicates unchanged); from it on,
    the count kernel with the same streams."""
    g = grid()
    before = ma.bootstrap_replicates(g, 50, 0)
    monkeypatch.setattr(ma, "COUNT_BOOTSTRAP_MIN_EPISODES", g.values.size)
    after = ma.bootstrap_replicates(g, 50, 0)
    streams = np.random.default_rng(0).spawn(3)
    want, _ = _k.stratified_bootstrap_counts(g.k.ravel(), g.n.ravel(), 3, 2, 50, True, streams[0])
    assert np.array_equal(after.micro, want)
    assert not np.array_equal(before.micro, after.micro)
    monkeypatch.setattr(ma, "COUNT_BOOTSTRAP_MIN_EPISODES", g.values.size + 1)
    assert np.array_equal(ma.bootstrap_replicates(g, 50, 0).micro, before.micro)

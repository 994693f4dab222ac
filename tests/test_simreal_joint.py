"""``joint_exact``: its bound tables against a plain-Python inversion, the two facts its
validity rests on (the least favourable discordant rate, a p-value monotone in p0), and the
issue's gain and adaptivity at pinned laws. Exact coverage on adversarial laws, the
enumeration against a brute-force sum and Monte Carlo: ``test_simreal_exact_methods``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import simreal_exact_checks as checks
from scipy import stats

from evalsim.cli import simreal as cli_simreal
from evalsim.stats.simreal import _joint_kernels as K
from evalsim.stats.simreal import joint
from evalsim.stats.simreal import methods as sr

M = "joint_exact"


def trinomial(n: int, y: int, m: int, p0: float, d: float) -> float:
    r = n - y - m
    return math.comb(n, y) * math.comb(n - y, m) * p0**y * d**m * (1.0 - p0 - d) ** r


def cells(n: int):
    return [(y, m) for y in range(n + 1) for m in range(n - y + 1)]


def tail(n: int, stat, y: int, m: int, p0: float, d: float) -> float:
    """P(T >= T(y, m)) under the trinomial (p0, d, 1 - p0 - d), summed cell by cell."""
    return sum(trinomial(n, a, b, p0, d) for a, b in cells(n) if stat[a][b] >= stat[y][m])


def ref_lower(n: int, sim_bound: float, stat, level: float, grid) -> dict:
    """The largest grid rate at which each cell is rejected (0 if none), from the
    definition: reject p0 when the tail at d = max(0, s - p0) is at most the level."""
    out = {}
    for y, m in cells(n):
        best = 0.0
        for p0 in grid:
            d = min(max(sim_bound - p0, 0.0), 1.0 - p0)
            if tail(n, stat, y, m, p0, d) <= level:
                best = max(best, p0)
        out[(y, m)] = best
    return out


def ref_table(n: int, sim_bound: float, alpha: float, grid) -> dict:
    """The method's table written from its docstring: the linear order's bound, the
    Clopper-Pearson lower bound at alpha/2 (SciPy's beta quantile), their maximum inverted."""
    level = alpha / 2 * (1 - joint.SIM_SHARE)
    lin = [[y - joint.DISCORDANT_WEIGHT * m for m in range(n + 1)] for y in range(n + 1)]
    lin_b = ref_lower(n, sim_bound, lin, level, grid)
    cp = [stats.beta.ppf(alpha / 2, y, n - y + 1) if y > 0 else 0.0 for y in range(n + 1)]
    stat = [[0.0] * (n + 1) for _ in range(n + 1)]
    for y, m in cells(n):
        stat[y][m] = max(cp[y], lin_b[(y, m)])
    return ref_lower(n, sim_bound, stat, level, grid)


@pytest.fixture
def coarse_grid(monkeypatch):
    grid = np.linspace(0.0, 1.0, 101)
    monkeypatch.setattr(joint, "RATE_GRID", grid)
    joint._table.cache_clear()
    yield grid
    joint._table.cache_clear()


@pytest.mark.parametrize(
    ("n", "sim_bound", "alpha"), [(5, 0.62, 0.05), (7, 0.9, 0.1), (4, 0.0, 0.05)]
)
def test_table_matches_plain_inversion(coarse_grid, n, sim_bound, alpha):
    got = joint.lower_table(n, sim_bound, alpha)
    want = ref_table(n, sim_bound, alpha, coarse_grid)
    for (y, m), v in want.items():
        assert got[y, m] == pytest.approx(v, abs=1e-12), (y, m)
    # the bounds are not trivial: some cell is bounded above 0.3, and more discordant pairs
    # never raise a bound at the same real successes
    assert max(want.values()) > 0.3
    for y in range(n + 1):
        col = [got[y, m] for m in range(n - y + 1)]
        assert all(a >= b for a, b in itertools.pairwise(col))


def _method_stat(n: int, sim_bound: float, alpha: float):
    level = alpha / 2 * (1 - joint.SIM_SHARE)
    lin = K.lower_bound_table(n, sim_bound, joint.linear_order(n), level, joint.RATE_GRID)
    cp = stats.beta.ppf(alpha / 2, np.arange(n + 1), n - np.arange(n + 1) + 1)
    cp[0] = 0.0
    return np.maximum(cp[:, None], lin)


@pytest.mark.parametrize("sim_bound", [0.55, 0.85])
def test_tail_is_largest_at_the_smallest_discordant_rate_and_rises_with_p0(sim_bound):
    """What validity rests on, checked on the statistic itself (n = 8): at every cell the
    tail at d = s - p0 is at least the tail at any larger P(real 0, twin 1), and the
    p-value at d(p0) does not fall as p0 rises."""
    n = 8
    stat = _method_stat(n, sim_bound, 0.05)
    for y, m in [(8, 0), (7, 0), (6, 1), (5, 0), (4, 2)]:
        prev = -1.0
        for p0 in np.linspace(0.05, 0.95, 19):
            d = min(max(sim_bound - p0, 0.0), 1.0 - p0)
            t_least = tail(n, stat, y, m, p0, d)
            for extra in np.linspace(0.0, 1.0 - p0 - d, 6)[1:]:
                assert tail(n, stat, y, m, p0, d + extra) <= t_least + 1e-12
            assert t_least >= prev - 1e-12
            prev = t_least


@pytest.mark.parametrize(
    ("p", "rho", "n", "n_sim", "limit"),
    [
        (0.95, 0.9, 50, 10_000, 0.85),  # gain where discordant_exact's family cannot
        (0.9, 0.9, 50, 2_000, 0.85),
        (0.9, 0.0, 50, 2_000, 1.10),  # adaptivity
        (0.5, 0.0, 20, 500, 1.10),
    ],
)
def test_gain_at_high_correlation_and_adaptivity_at_zero(p, rho, n, n_sim, limit):
    oc = sr.operating_characteristics(p, p, rho, n, n_sim)
    assert oc.width["clopper_pearson"] == pytest.approx(checks.cp_width(p, n), rel=1e-9)
    assert oc.width[M] <= limit * checks.cp_width(p, n)
    assert oc.coverage[M] >= 0.95


def test_tables_refuse_n_above_max_n():
    with pytest.raises(ValueError, match="joint_exact certifies n in"):
        joint.lower_table(joint.MAX_N + 10, 0.5, 0.05)


def test_registry():
    assert sr.recommended(50, 1001) == M and sr.VALIDITY[M] == "finite-sample" and M in sr.METHODS
    assert cli_simreal.JOINT_MAX_N == joint.MAX_N


def test_sim_bound_is_the_one_sided_clopper_pearson_bound_rounded_down():
    g = joint.gamma(0.05)
    assert g == pytest.approx(0.025 * joint.SIM_SHARE)
    for k, big_n in [(1800, 2000), (9500, 10_000), (0, 500), (500, 500), (1, 1)]:
        cp = stats.beta.ppf(g, k, big_n - k + 1) if k > 0 else 0.0
        s = joint.sim_lower(k, big_n, g)
        assert s <= cp and cp - s < joint.SIM_STEP
        assert abs(s / joint.SIM_STEP - round(s / joint.SIM_STEP)) < 1e-9


@pytest.mark.parametrize(("n", "k_sim", "n_sim"), [(50, 200, 1000), (10, 50, 1000)])
def test_twins_contradicting_the_simulation_give_clopper_pearson(n, k_sim, n_sim):
    """Every real trial and every twin succeeds while the further simulated trials mostly
    fail: the two one-sided bounds cross, and the interval is the real-only Clopper-Pearson
    interval at alpha/2 a side (SciPy's beta quantiles)."""
    g = joint.gamma(0.05)
    lo = joint.lower_table(n, joint.sim_lower(k_sim, n_sim, g), 0.05)[n, 0]
    hi = 1.0 - joint.lower_table(n, joint.sim_lower(n_sim - k_sim, n_sim, g), 0.05)[0, 0]
    assert lo > hi  # the case is real
    d = sr.simreal_data([1] * n, [1] * n, k_sim, n_sim)
    r = sr.simreal_interval(d, M)
    assert r.lower == pytest.approx(stats.beta.ppf(0.025, n, 1), rel=1e-12)
    assert r.upper == 1.0
    y, n01, n10 = n - 3, 0, 0  # three real failures whose twins failed too
    d = sr.simreal_data([1] * y + [0] * 3, [1] * y + [0] * 3, k_sim, n_sim)
    r = sr.simreal_interval(d, M)
    a, b = joint.bounds(y, n01, n10, n, k_sim, n_sim, 0.05)
    assert (r.lower, r.upper) == (a, b)
    if a == pytest.approx(stats.beta.ppf(0.025, y, n - y + 1), rel=1e-12):
        assert b == pytest.approx(stats.beta.isf(0.025, y + 1, n - y), rel=1e-12)


def test_clopper_pearson_channel_is_scipys():
    for n in (1, 7, 50):
        k = np.arange(n + 1)
        want = [stats.beta.ppf(0.0125, i, n - i + 1) if i > 0 else 0.0 for i in k]
        assert joint.cp_lower_bound(k, n, 0.0125) == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("n", [1, joint.MAX_N])
def test_tables_at_both_ends_of_the_range(n):
    t = joint.lower_table(n, 0.5, 0.05)
    assert t.shape == (n + 1, n + 1)
    # all real successes: the top cell alone, rejected while p0^n <= level; its bound is
    # the last grid rate below level^(1/n)
    root = (0.025 * (1 - joint.SIM_SHARE)) ** (1.0 / n)
    assert root - 1.0 / (len(joint.RATE_GRID) - 1) < t[n, 0] <= root
    for bad in (0, joint.MAX_N + 1):
        with pytest.raises(ValueError, match="joint_exact certifies n in"):
            joint.lower_table(bad, 0.5, 0.05)


def test_linear_order_weights_the_discordant_pairs():
    t = joint.linear_order(4)
    assert t.shape == (5, 5)
    assert t[3, 1] == 3 - joint.DISCORDANT_WEIGHT and t[4, 0] == 4.0 and t[0, 2] == -6.0


def test_step_index_never_rounds_above_the_bound():
    # 9 * 0.001 is 0.009000000000000001 in floating point, above the float 0.009
    assert joint._step_index(np.float64(0.009)) == 8
    assert joint._step_index(np.float64(0.0095)) == 9
    s = np.array([0.013, 0.0131, 0.5, 0.999, 0.0])
    i = joint._step_index(s)
    assert np.all(i * joint.SIM_STEP <= s) and np.all(s - i * joint.SIM_STEP < 2 * joint.SIM_STEP)
    assert i.tolist() == [12, 13, 500, 999, 0]  # 13 * 0.001 > 0.013 too

"""``joint_exact``: one exact test of p_R over the real outcomes and the discordant pairs
together, with the simulated rate bounded by Berger and Boos's device.

The lower bound on p_R reads two counts of the n pairs: y, the real successes, and m = n01,
the pairs whose real trial failed while its twin succeeded. Under p_R = p0, (y, m) is
trinomial with probabilities (p0, p01, 1 - p0 - p01), and p_R = p_S + p10 - p01 gives
p01 >= p_S - p0. A statistic T(y, m) that is non-decreasing in y and non-increasing in m has
its tail P(T >= t) largest at the smallest p01 (moving a pair from (0, 0) to (0, 1) can only
lower T), so over every joint law with p_S >= s the largest tail is the one at
p01 = max(0, s - p0): a one-dimensional trinomial sum, exact, with no search and no grid
over the nuisance.

The simulated rate is not known; Berger and Boos (1994) [1]_ make the test valid anyway: s is
the one-sided Clopper-Pearson lower bound of p_S from the N simulated trials at level gamma,
and the test at level alpha/2 - gamma is valid conditionally on the simulated count (the
pairs are independent of it), so P(reject a true p0) <= gamma + alpha/2 - gamma. s is
rounded down to :data:`SIM_STEP` (a lower s only enlarges the set maximised over), which
lets tables be shared between simulated counts.

The statistic orders the cells by the larger of two lower bounds, both functions of
(y, m, s) only:

- the one-sided Clopper-Pearson lower bound of y of n at level alpha/2 (the real trials
  alone; what wins when the twins say nothing, e.g. at correlation 0);
- the bound from the same test with the linear order y - w m (w = :data:`DISCORDANT_WEIGHT`),
  which reads the real successes and the discordant pairs together (what wins when the
  twins agree with the real outcomes).

Both are monotone in the required directions, so their maximum is, and the final test
calibrates the maximum exactly; unlike a Bonferroni split, no share of alpha is given to
either. The p-value is non-decreasing in p0 (moving mass from (0, 1) or (0, 0) to y raises
T, and p01's bound falls as p0 rises), so the bound of a cell is the largest rate of
:data:`RATE_GRID` at which it is rejected (scanning down), a valid lower bound. The upper
bound is the same construction on the failures (1 - p_R from n - y and n10, and the
simulated failures). Where the lower bound exceeds the upper (the data contradict the
model) the interval is the real-only Clopper-Pearson interval. Nothing is chosen from the
data: w, gamma's share and the grids are constants. The tails are summed exactly except for
cells of probability below exp(-40), which the kernel counts at that bound on the side that
could reject (``_joint_kernels.NEGLIGIBLE_LOG``): a test decision can differ from the exact
one only towards not rejecting, when the tail is within 1e-13 of the level.

References
----------
.. [1] R. L. Berger, D. D. Boos, "P values maximized over a confidence set for the nuisance
   parameter", Journal of the American Statistical Association 89 (427), 1012-1016, 1994.
"""

from __future__ import annotations

import functools

import numpy as np

from evalsim.stats.simreal import _joint_kernels as _J
from evalsim.stats.simreal.real_only import cp_each_count, cp_lower_bound

#: Share of each side's alpha/2 spent on the simulated rate's bound (gamma).
SIM_SHARE = 0.05
#: w in the linear order y - w n01 of the discordant channel.
DISCORDANT_WEIGHT = 3.0
#: Rates at which the tests are inverted.
RATE_GRID = np.linspace(0.0, 1.0, 2001)
#: The simulated rate's lower bound is rounded down to a multiple of this.
SIM_STEP = 1e-3
#: Largest n the tables are built for (cells grow as n^2, work as n^2 x the grid).
MAX_N = 400


def _step_index(s: np.ndarray) -> np.ndarray:
    """The largest i with i * SIM_STEP <= s (never above s, whatever the division rounds)."""
    i = np.floor(np.asarray(s, dtype=np.float64) / SIM_STEP).astype(np.int64)
    return np.where(i * SIM_STEP > s, i - 1, i)


def sim_lower(k_sim: int, n_sim: int, gamma: float) -> float:
    """The simulated rate's one-sided lower bound at ``gamma``, rounded down to SIM_STEP."""
    return int(_step_index(cp_lower_bound(k_sim, n_sim, gamma))) * SIM_STEP


def linear_order(n: int) -> np.ndarray:
    """T(y, m) = y - w m, w = :data:`DISCORDANT_WEIGHT`."""
    y = np.arange(n + 1, dtype=np.float64)[:, None]
    m = np.arange(n + 1, dtype=np.float64)[None, :]
    return y - DISCORDANT_WEIGHT * m


@functools.lru_cache(maxsize=8192)
def _table(n: int, sim_step_index: int, alpha: float) -> np.ndarray:
    s = sim_step_index * SIM_STEP
    level = alpha / 2.0 * (1.0 - SIM_SHARE)
    lin = _J.lower_bound_table(n, s, linear_order(n), level, RATE_GRID)
    real = cp_lower_bound(np.arange(n + 1), n, alpha / 2.0)
    stat = np.maximum(real[:, None], lin)
    out = _J.lower_bound_table(n, s, stat, level, RATE_GRID)
    out.flags.writeable = False
    return out


def lower_table(n: int, sim_bound: float, alpha: float) -> np.ndarray:
    """L[y, n01]: ``joint_exact``'s lower bound of every cell, for a simulated lower bound
    ``sim_bound`` (a multiple of SIM_STEP) at two-sided level alpha."""
    if not 1 <= n <= MAX_N:
        raise ValueError(f"joint_exact certifies n in [1, {MAX_N}], got n={n}")
    return _table(int(n), round(sim_bound / SIM_STEP), float(alpha))


def gamma(alpha: float) -> float:
    """The simulated bound's level, each side."""
    return alpha / 2.0 * SIM_SHARE


def bounds(y: int, n01: int, n10: int, n: int, k_sim: int, n_sim: int, alpha: float):
    """(lower, upper) of ``joint_exact``, Clopper-Pearson's where they cross."""
    g = gamma(alpha)
    lo = float(lower_table(n, sim_lower(k_sim, n_sim, g), alpha)[y, n01])
    hi = 1.0 - float(lower_table(n, sim_lower(n_sim - k_sim, n_sim, g), alpha)[n - y, n10])
    if lo > hi:
        cp_lo, cp_hi = cp_each_count(n, alpha)
        lo, hi = float(cp_lo[y]), float(cp_hi[y])
    return lo, hi


def operating_characteristics(p_real, p11, p10, p01, p00, n, n_sim, pmf_sim, ks_lo, alpha):
    """Exact (coverage, expected width, probability enumerated) of ``joint_exact`` at one
    joint law: the simulated counts ``ks_lo + i`` with probability ``pmf_sim[i]`` are
    grouped by their two rounded simulated bounds, and each group's pair-table sum is
    exact."""
    g = gamma(alpha)
    ks = np.arange(ks_lo, ks_lo + len(pmf_sim))
    lo_s = _step_index(cp_lower_bound(ks, n_sim, g))
    lo_f = _step_index(cp_lower_bound(n_sim - ks, n_sim, g))
    groups: dict[tuple[int, int], float] = {}
    for a, b, w in zip(lo_s.tolist(), lo_f.tolist(), pmf_sim.tolist(), strict=True):
        groups[(a, b)] = groups.get((a, b), 0.0) + w
    cp_lo, cp_hi = cp_each_count(n, alpha)
    cells = _J.pair_cells(n, p11, p10, p01, p00)
    cov = wid = tot = 0.0
    for (a, b), w in groups.items():
        c, wd, t = _J.coverage_width(
            n,
            p_real,
            *cells,
            lower_table(n, a * SIM_STEP, alpha),
            lower_table(n, b * SIM_STEP, alpha),
            cp_lo,
            cp_hi,
        )
        cov += w * c
        wid += w * wd
        tot += w * t
    return cov, wid, tot

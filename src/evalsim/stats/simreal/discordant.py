"""``discordant_exact``: the real rate bounded through the discordant pairs, with the simulated
rate and each discordant rate read by one combined confidence region.

**Finite-sample**, valid at every n >= 1 and every joint law. It writes
p_R = p_S + p10 - p01 with p10 = P(Y = 1, Yhat = 0) and p01 = P(Y = 0, Yhat = 1), the
discordant pairs, so p_S - p01 <= p_R <= p_S + p10. When
the twins agree with the real outcomes (high correlation) p10 and p01 are small, and
their counts n10 ~ Binomial(n, p10), n01 ~ Binomial(n, p01) bound them tightly. The
upper bound is the supremum of s + b over a joint confidence region for (p_S, p10) built
from two independent super-uniform p-values, P_s(K_sim <= k_sim) from the N simulated
trials and P_b(N10 <= n10) from the pairs: (s, b) is rejected when
P_b(N10 <= n10) <= min(1, t / sqrt(P_s(K_sim <= k_sim))). For independent super-uniform
p-values this has probability at most 2 t - t^2 (the integral of the non-increasing
threshold; a weighted form of Fisher's combination [1]_), so t = 1 - sqrt(1 - beta)
makes it beta = alpha_c / 2. The pair p-value is discrete, which leaves part of beta
unspent; t is therefore the largest value whose *certified* level is at most beta
(:func:`certified_level`: for every pair rate b, the level is at most
E_b[min(1, t^2 / F_b(N10)^2)] with the simulated p-value only super-uniform, bounded on
each cell of a grid of b by monotonicity; bisection on t, a function of (n, beta)
only): 1.3x the continuous t at n = 50, 1.2x at n = 100. The threshold's exponent is
g in t p_s^-g (1/2 above), a function of the design (n, N) only
(:func:`combine_power`, 0.25 to 0.75: larger when N is small against n, where the
simulated rate is the less precise part); the level bounds hold for every g. Unlike a
Bonferroni box, the region lets the well measured p_S sit near its estimate while p10
takes most of beta.
The lower bound is the same construction on the failures, 1 - p_R <= (1 - p_S) + p01.
The supremum is certified, not searched: on a grid of simulated p-values (geometric
towards both ends) each segment is bounded by its right end plus the pair bound at its
left end (:data:`COMBINE_GRID`).
The result is intersected with the real-only interval of Blaker [2]_ (exact, inside
Clopper-Pearson's at the same level, a few percent shorter; Clopper-Pearson's for
n > :data:`.real_only.BLAKER_MAX_N`) at
``alpha_r = real_share * alpha`` (default :data:`DISCORDANT_REAL_SHARE`), the real-only
interval if they are disjoint; by the union bound the miss probability is at most
alpha_r + 2 beta = alpha at every law. The simulated p-values use the N further trials
only (not the twins), which keeps them independent of the pairs. Nothing is chosen
from the data.

The functions below are the method's parts: the combination's threshold (:func:`combine_power`,
:func:`combine_t`, :func:`certified_level`), its certified grid (:func:`combine_grid`,
:func:`sim_levels`, :func:`pair_levels`), the raw bounds (:func:`raw_bounds`, :func:`tables`)
and the interval (:func:`interval`); the numba kernels are ``_kernels.discordant_upper`` and
``_kernels.intersect_or_real``.

References
----------
.. [1] R. A. Fisher, *Statistical Methods for Research Workers*, 4th ed., section 21.1,
   Oliver and Boyd, 1932; combination functions of independent p-values and their level:
   T. M. Loughin, "A systematic comparison of methods for combining p-values from
   independent tests", Computational Statistics & Data Analysis 47 (3), 467-485, 2004.
.. [2] H. Blaker, "Confidence curves and improved exact confidence intervals for discrete
   distributions", Canadian Journal of Statistics 28 (4), 783-798, 2000.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special, stats

from evalsim.stats.simreal import _kernels as _K
from evalsim.stats.simreal.real_only import blaker_bounds, rate_grid

#: Default share of alpha on the real-only (Blaker) interval for ``discordant_exact``. On
#: issue 27's grid at 95% (``benchmarks/bench_simreal.py``), 0.7 against 0.6: at
#: correlation 0 at most 1.044x against 1.077x real-only Clopper-Pearson's expected width,
#: at correlation 0.9 and n >= 50 at most 0.909x against 0.917x (means 0.857/0.846 against
#: 0.851/0.843 at n = 50/100).
DISCORDANT_REAL_SHARE = 0.7
#: Points per half of the simulated p-value grid of ``discordant_exact``'s certified
#: supremum (geometric towards 0 and towards 1).
COMBINE_GRID = 96


def combine_power(n: int, n_sim: int) -> float:
    """The exponent g of the combination's threshold min(1, t p_s^-g), a function of the
    design (n, N) only: 0.25 + 1.15 (sqrt(n / N) - 0.1), clipped to [0.25, 0.75] and
    rounded to 0.05. A larger g leans on the pairs when the simulated rate is less
    precise than the pair bound (its sd 1 / (2 sqrt(N)) against about 1 / sqrt(n)); g = 0.5
    is 1 / sqrt(p_s). Set from issue 27's grid (correlation 0.9, n >= 50), where each N
    has its own best g; any g is valid."""
    g = 0.25 + 1.15 * (math.sqrt(n / n_sim) - 0.1)
    return round(min(max(g, 0.25), 0.75) * 20.0) / 20.0


def continuous_level(t: float, g: float) -> float:
    """P(p_b <= min(1, t p_s^-g)) for independent uniforms: u* + t (1 - u*^(1 - g)) / (1 - g)
    with u* = t^(1/g), where the threshold reaches 1 (2 t - t^2 at g = 1/2)."""
    us = t ** (1.0 / g)
    return us + t * (1.0 - us ** (1.0 - g)) / (1.0 - g)


def combine_t0(beta: float, g: float = 0.5) -> float:
    """Threshold scale t of the combination for continuous p-values: the level
    :func:`continuous_level` is beta for independent uniforms, and at most beta for
    super-uniform ones (1 - sqrt(1 - beta) at g = 1/2; bisection, the lower end, else)."""
    if g == 0.5:
        return 1.0 - math.sqrt(1.0 - beta)
    lo, hi = 0.0, beta
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if continuous_level(mid, g) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


#: Pair rates b at which :func:`certified_level` bounds the level (uniform, and geometric
#: towards both ends, where the binomial CDF moves fastest).
LEVEL_GRID = rate_grid(1e-12, 1e-14, 300)


@functools.lru_cache(maxsize=64)
def _level_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """pmf and CDF of Binomial(n, b) on :data:`LEVEL_GRID` (rows) at 0..n (columns)."""
    y = np.arange(n + 1)[None, :]
    b = LEVEL_GRID[:, None]
    return stats.binom.pmf(y, n, b), np.minimum(stats.binom.cdf(y, n, b), 1.0)


def certified_level(t: float, n: int, g: float = 0.5) -> float:
    """An upper bound, over every pair rate b in [0, 1] and every simulated law, on the
    probability that the combination rejects the true (s, b):
    P(P_b(N10 <= n10) <= min(1, t p_s^-g)) with n10 ~ Binomial(n, b) and p_s
    super-uniform and independent of n10, which is at most
    L(b) = E_b[min(1, (t / F_b(N10))^(1/g))], F_b the CDF at the true b. On a grid cell
    [b_i, b_{i+1}], F_b >= F_{b_{i+1}} (the CDF falls in b), so the summand is at most
    H(y) = min(1, (t / F_{b_{i+1}}(y))^(1/g)), non-increasing in y, whose mean falls in b:
    L(b) <= E_{b_i}[H]. The maximum of these cell bounds is returned."""
    pmf, cdf = _level_tables(n)
    f = cdf[1:]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        h = np.where(f > 0.0, np.minimum(1.0, (t / f) ** (1.0 / g)), 1.0)
    return float(np.max(np.sum(pmf[:-1] * h, axis=1)))


#: Largest n with the certified threshold; above it t is the continuous one (a valid,
#: wider interval).
CERTIFY_MAX_N = 400


@functools.lru_cache(maxsize=256)
def combine_t(beta: float, n: int, g: float = 0.5) -> float:
    """Threshold scale t of ``discordant_exact``'s combination min(1, t p_s^-g) for n pairs
    at level beta: the largest t found by bisection (40 steps between t0 and 4 t0, t0 of
    :func:`combine_t0`) whose :func:`certified_level` is at most beta; t0 when none is
    (or n > :data:`CERTIFY_MAX_N`), valid because t0's continuous level beta bounds the
    level of super-uniform p-values. t depends on (n, beta, g) only, never on the data."""
    t0 = combine_t0(beta, g)
    if n > CERTIFY_MAX_N or certified_level(t0, n, g) > beta:
        return t0
    lo, hi = t0, 4.0 * t0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if certified_level(mid, n, g) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


@functools.lru_cache(maxsize=32)
def combine_grid(t: float, g: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The simulated p-value grid u (1 down to t^(1/g), where the threshold reaches 1) and
    the pair-p-value threshold min(1, t u^-g) at each point."""
    j = COMBINE_GRID
    near_one = 1.0 - np.geomspace(1e-12, 0.5, j)
    near_zero = np.geomspace(0.5, t * t if g == 0.5 else t ** (1.0 / g), j)[1:]
    u = np.concatenate([[1.0], near_one, near_zero])
    return u, np.minimum(t / np.sqrt(u) if g == 0.5 else t * u**-g, 1.0)


def sim_levels(x, n_sim: int, u: np.ndarray) -> np.ndarray:
    """s at which P_s(K <= x) = u_j, K ~ Binomial(N, s): rows x, columns j (0 at u = 1; 1
    for x = N, where the p-value is 1 at every s)."""
    x = np.asarray(x, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        a = special.betaincinv(x + 1.0, n_sim - x, 1.0 - u[None, :])
    a = np.where(x >= n_sim, 1.0, a)
    a[:, 0] = np.where(x[:, 0] >= n_sim, 1.0, 0.0)
    return a


def pair_levels(n: int, c: np.ndarray, y=None) -> np.ndarray:
    """b at which P_b(Y <= y) = c_j, Y ~ Binomial(n, b): rows y (default 0..n); 0 where
    c = 1 (no b is accepted), 1 for y = n below c = 1."""
    y = np.arange(n + 1) if y is None else y
    y = np.asarray(y, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        b = special.betaincinv(y + 1.0, n - y, 1.0 - c[None, :])
    b = np.where(y >= n, 1.0, b)
    return np.where(c[None, :] >= 1.0, 0.0, b)


@functools.lru_cache(maxsize=64)
def pair_table(n: int, t: float, g: float) -> np.ndarray:
    """:func:`pair_levels` of every count 0..n at the threshold ``(t, g)``, read only: one
    evaluation serves every interval at the same (n, t, g) (T37 resamples thousands)."""
    b = pair_levels(n, combine_grid(t, g)[1])
    b.setflags(write=False)
    return b


#: Rows of sim_levels already computed, by (N, t): the operating characteristics of a
#: grid revisit the same simulated counts many times.
_SIM_ROWS: dict = {}
_SIM_ROWS_MAX = 400_000


def _sim_levels_cached(x: np.ndarray, n_sim: int, t: float, u: np.ndarray) -> np.ndarray:
    key = (n_sim, t, u.size, float(u[-1]))
    rows = _SIM_ROWS.get(key)
    if rows is None:
        if sum(len(v) for v in _SIM_ROWS.values()) > _SIM_ROWS_MAX:
            _SIM_ROWS.clear()
        rows = _SIM_ROWS[key] = {}
    missing = [int(v) for v in x if int(v) not in rows]
    if missing:
        for v, row in zip(missing, sim_levels(missing, n_sim, u), strict=True):
            rows[v] = row
    return np.stack([rows[int(v)] for v in x])


def raw_bounds(k_sim: int, n_sim: int, n10: int, n01: int, n: int, beta: float):
    """(lower, upper) of ``discordant_exact`` before the real-only intersection."""
    g = combine_power(n, n_sim)
    t = combine_t(beta, n, g)
    u, _ = combine_grid(t, g)
    b = pair_table(n, t, g)[[n10, n01]]
    a = _sim_levels_cached(np.array([k_sim, n_sim - k_sim]), n_sim, t, u)
    up = _K.discordant_upper(a, b)
    return 1.0 - float(up[1, 1]), float(up[0, 0])


def interval(d, alpha: float, real_share: float) -> tuple[float, float]:
    """``discordant_exact``'s (lower, upper) for the data ``d`` (a
    :class:`~evalsim.stats.simreal.methods.SimRealData`) at level 1 - alpha."""
    alpha_r = real_share * alpha
    r_lo, r_hi = blaker_bounds(d.k_real, d.n, alpha_r)
    lo, hi = raw_bounds(d.k_sim, d.n_sim, d.n10, d.n01, d.n, (alpha - alpha_r) / 2.0)
    return _K.intersect_or_real(lo, hi, float(r_lo), float(r_hi))


def tables(n: int, n_sim: int, ks_lo: int, ks_hi: int, beta: float):
    """``discordant_exact``'s raw bounds for every simulated count ks_lo..ks_hi (rows) and
    discordant count 0..n (columns): lower by n01, upper by n10."""
    ks = np.arange(ks_lo, ks_hi + 1)
    g = combine_power(n, n_sim)
    t = combine_t(beta, n, g)
    u, _ = combine_grid(t, g)
    b = pair_table(n, t, g)
    hi = _K.discordant_upper(_sim_levels_cached(ks, n_sim, t, u), b)
    lo = 1.0 - _K.discordant_upper(_sim_levels_cached(n_sim - ks, n_sim, t, u), b)
    return lo, hi

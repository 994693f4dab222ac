"""Simulated plus real trials: intervals for the real success rate p_R.

The data: ``n`` real trials with outcomes Y_i, each with a simulated *twin* (the same initial
condition run in simulation) with outcome Yhat_i, and ``N`` further simulated trials with
``k_sim`` successes, independent of the pairs and drawn from the same simulated law (rate
p_S). The methods (registry :data:`METHODS`, validity class in :data:`VALIDITY`):

``clopper_pearson``, ``wilson``
    Real trials only (:mod:`evalsim.stats.proportion.intervals`); the baselines.
``ppi``
    Prediction-powered inference (Angelopoulos et al. 2023 [1]_): p_S_hat + mean(Y - Yhat)
    -+ z se. **Asymptotic.** Identical to ``ppi_py.ppi_mean_ci(..., lam=1)``.
``ppi_plus``
    PPI++ (Angelopoulos, Duchi and Zrnic 2023 [2]_) with the power-tuned lambda estimated
    from the data and clipped to [0, 1]: lambda p_S_hat + mean(Y - lambda Yhat) -+ z se.
    **Asymptotic.** Identical to ``ppi_py.ppi_mean_ci(..., lam=None)`` (when the pooled
    simulated outcomes are not all equal; there ppi_py divides 0 by 0 and this module uses
    lambda = 0, the real-only estimate).
``stratified_exact``
    **Finite-sample**, valid at every n >= 1 and every joint law of (Y, Yhat). Write
    p_R = a p_S + b (1 - p_S) with a = P(Y = 1 | Yhat = 1), b = P(Y = 1 | Yhat = 0). Given the
    twins' outcomes, the real successes among the n1 successful twins are exactly
    Binomial(n1, a) and those among the n0 failed twins Binomial(n0, b); the N simulated
    trials give Binomial(N, p_S) independently. Clopper-Pearson intervals for a, b (at
    ``alpha_c`` * :data:`STRATUM_SHARE` each; an empty stratum gives [0, 1]) and p_S (at
    ``alpha_c`` * :data:`SIM_SHARE`) make a box whose image under the (multi-linear) map is
    the interval B. It is intersected with the real-only Clopper-Pearson interval A at
    ``alpha_r = real_share * alpha``, ``alpha_c = alpha - alpha_r``; if A and B are disjoint
    the result is A. By the union bound P(p_R not in A and B) <= alpha_r + alpha_c = alpha
    for every law, and the exact enumeration (:func:`operating_characteristics`) shows it.
    No parameter is chosen from the data, so nothing breaks the guarantee; the width adapts
    because B is short when the twins predict the real outcome (a near 1, b near 0) and A
    bounds the width when they do not (then the result is at most A, the real-only interval
    at the slightly higher level 1 - alpha_r).

``discordant_exact``
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
    threshold; a weighted form of Fisher's combination [4]_), so t = 1 - sqrt(1 - beta)
    makes it beta = alpha_c / 2. The pair p-value is discrete, which leaves part of beta
    unspent; t is therefore the largest value whose *certified* level is at most beta
    (:func:`_certified_level`: for every pair rate b, the level is at most
    E_b[min(1, t^2 / F_b(N10)^2)] with the simulated p-value only super-uniform, bounded on
    each cell of a grid of b by monotonicity; bisection on t, a function of (n, beta)
    only): 1.3x the continuous t at n = 50, 1.2x at n = 100. The threshold's exponent is
    g in t p_s^-g (1/2 above), a function of the design (n, N) only
    (:func:`_combine_power`, 0.25 to 0.75: larger when N is small against n, where the
    simulated rate is the less precise part); the level bounds hold for every g. Unlike a
    Bonferroni box, the region lets the well measured p_S sit near its estimate while p10
    takes most of beta.
    The lower bound is the same construction on the failures, 1 - p_R <= (1 - p_S) + p01.
    The supremum is certified, not searched: on a grid of simulated p-values (geometric
    towards both ends) each segment is bounded by its right end plus the pair bound at its
    left end (:data:`COMBINE_GRID`).
    The result is intersected with the real-only interval of Blaker [5]_ (exact, inside
    Clopper-Pearson's at the same level, a few percent shorter; Clopper-Pearson's for
    n > :data:`MAX_OC_N`) at
    ``alpha_r = real_share * alpha`` (default :data:`DISCORDANT_REAL_SHARE`), the real-only
    interval if they are disjoint; by the union bound the miss probability is at most
    alpha_r + 2 beta = alpha at every law. The simulated p-values use the N further trials
    only (not the twins), which keeps them independent of the pairs. Nothing is chosen
    from the data.

``joint_exact``
    **Finite-sample**, valid at every n >= 1 and every joint law; the recommended interval
    (:data:`RECOMMENDED`). One exact test of p_R over the real successes and the
    discordant pairs together, the least favourable discordant rate in closed form and the
    simulated rate bounded by Berger and Boos's device (:mod:`.joint`). Above
    :data:`evalsim.stats.simreal.joint.MAX_N` real trials it is ``discordant_exact``'s
    interval.

Every result (:class:`SimRealResult`) carries the interval, the validity class, the
effective number of real trials n (CP width / width)^2 (CP at the same confidence), the
estimated sim-real correlation (phi coefficient of the pairs) and the sim bias
k_sim/N - k_real/n.

References
----------
.. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic,
   "Prediction-powered inference", Science 382 (6671), 669-674, 2023.
.. [2] A. N. Angelopoulos, J. C. Duchi, T. Zrnic, "PPI++: Efficient prediction-powered
   inference", arXiv:2311.01453, 2023.
.. [3] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26 (4), 404-413, 1934.
.. [4] R. A. Fisher, *Statistical Methods for Research Workers*, 4th ed., section 21.1,
   Oliver and Boyd, 1932; combination functions of independent p-values and their level:
   T. M. Loughin, "A systematic comparison of methods for combining p-values from
   independent tests", Computational Statistics & Data Analysis 47 (3), 467-485, 2004.
.. [5] H. Blaker, "Confidence curves and improved exact confidence intervals for discrete
   distributions", Canadian Journal of Statistics 28 (4), 783-798, 2000.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evalsim.stats import names as _names
from evalsim.stats._validate import (
    MAX_COUNT,
    check_confidence,
    check_open_interval,
    check_outcomes,
    check_probability,
)
from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval
from evalsim.stats.simreal import _kernels as _K
from evalsim.stats.simreal import joint as _joint

__all__ = [
    "COMBINE_GRID",
    "DEFAULT_REAL_SHARE",
    "DISCORDANT_REAL_SHARE",
    "METHODS",
    "RECOMMENDED",
    "SIM_SHARE",
    "STRATUM_SHARE",
    "VALIDITY",
    "SimRealData",
    "SimRealOC",
    "SimRealResult",
    "joint_law",
    "operating_characteristics",
    "simreal_data",
    "simreal_interval",
    "simreal_intervals",
]

#: Interval methods, in the order of the kernels' outputs.
METHODS = _names.SIMREAL_METHODS
#: Each method's validity class.
VALIDITY = {
    "clopper_pearson": "finite-sample",
    "wilson": "asymptotic",
    "ppi": "asymptotic",
    "ppi_plus": "asymptotic",
    "stratified_exact": "finite-sample",
    "discordant_exact": "finite-sample",
    "joint_exact": "finite-sample",
}
#: The finite-sample sim + real method to use by default (the command's verdict uses it):
#: the narrowest at high correlation on issue 27's grid (``benchmarks/bench_simreal.py``).
RECOMMENDED = "joint_exact"
#: Default share of alpha on the real-only (Blaker) interval for ``discordant_exact``. On
#: issue 27's grid at 95% (``benchmarks/bench_simreal.py``), 0.7 against 0.6: at
#: correlation 0 at most 1.044x against 1.077x real-only Clopper-Pearson's expected width,
#: at correlation 0.9 and n >= 50 at most 0.909x against 0.917x (means 0.857/0.846 against
#: 0.851/0.843 at n = 50/100).
DISCORDANT_REAL_SHARE = 0.7
#: Points per half of the simulated p-value grid of ``discordant_exact``'s certified
#: supremum (geometric towards 0 and towards 1).
COMBINE_GRID = 96
#: Default share of alpha spent on the real-only Clopper-Pearson interval A.
DEFAULT_REAL_SHARE = _names.SIMREAL_DEFAULT_REAL_SHARE
#: Shares of the remaining alpha_c spent on each twin stratum (two strata) and on p_S.
STRATUM_SHARE = 0.4
SIM_SHARE = 0.2
#: Largest n the exact operating characteristics enumerate (O(n^3 N) work).
MAX_OC_N = 400


def _count(x, name: str, minimum: int) -> int:
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if not minimum <= int(x) <= MAX_COUNT:
        raise ValueError(f"{name} must be an integer in [{minimum}, {MAX_COUNT}], got {x!r}")
    return int(x)


@dataclass(frozen=True)
class SimRealData:
    """Validated pairs and simulated counts (build with :func:`simreal_data`).

    Attributes
    ----------
    n11, n10, n01, n00 : int
        Pairs by (real, twin) outcome: both succeed, real only, twin only, both fail.
    k_sim, n_sim : int
        Successes among the N further simulated trials, and N.
    """

    n11: int
    n10: int
    n01: int
    n00: int
    k_sim: int
    n_sim: int

    @property
    def n(self) -> int:
        """Number of real trials (pairs)."""
        return self.n11 + self.n10 + self.n01 + self.n00

    @property
    def k_real(self) -> int:
        """Real successes."""
        return self.n11 + self.n10

    @property
    def k_twin(self) -> int:
        """Twin successes."""
        return self.n11 + self.n01

    @property
    def correlation(self) -> float:
        """Phi coefficient of (real, twin) over the pairs; NaN when either is constant."""
        n = self.n
        den = self.k_real * (n - self.k_real) * self.k_twin * (n - self.k_twin)
        if den == 0:
            return math.nan
        return (n * self.n11 - self.k_real * self.k_twin) / math.sqrt(den)

    @property
    def sim_bias(self) -> float:
        """k_sim / N - k_real / n: the simulated rate minus the real rate."""
        return self.k_sim / self.n_sim - self.k_real / self.n


def simreal_data(real, twin, k_sim, n_sim) -> SimRealData:
    """Validate paired outcomes and the simulated count.

    Parameters
    ----------
    real, twin : sequence of 0/1
        The real outcomes and their twins' simulated outcomes, aligned (same length n >= 1).
    k_sim, n_sim : int
        Successes among N further simulated trials; N >= n (the simulated set is the cheap,
        large one).

    Raises
    ------
    ValueError
        Non-binary outcomes, different lengths, n = 0, k_sim outside [0, N], N < n.
    """
    y = check_outcomes(real, "real")
    t = check_outcomes(twin, "twin")
    if y.shape != t.shape:
        raise ValueError(f"real and twin must have the same length, got {y.size} and {t.size}")
    if y.size == 0:
        raise ValueError("real must hold at least one trial, got n = 0")
    n_sim = _count(n_sim, "n_sim", 1)
    k_sim = _count(k_sim, "k_sim", 0)
    if k_sim > n_sim:
        raise ValueError(f"k_sim must be in [0, n_sim = {n_sim}], got {k_sim}")
    if n_sim < y.size:
        raise ValueError(f"n_sim must be >= n = {y.size} real trials, got {n_sim}")
    return SimRealData(
        n11=int(np.sum((y == 1) & (t == 1))),
        n10=int(np.sum((y == 1) & (t == 0))),
        n01=int(np.sum((y == 0) & (t == 1))),
        n00=int(np.sum((y == 0) & (t == 0))),
        k_sim=k_sim,
        n_sim=n_sim,
    )


@dataclass(frozen=True)
class SimRealResult:
    """One interval for p_R and what it says about the simulation's worth.

    Attributes
    ----------
    method, validity : str
        The method (:data:`METHODS`) and its validity class (``finite-sample`` or
        ``asymptotic``).
    lower, upper, estimate : float
        The interval and the method's point estimate.
    confidence : float
    lam : float
        The weight of the simulation (PPI: 1, PPI++: tuned, real-only: 0, the stratified
        interval: NaN, it has no lambda; the discordant interval: 1, it bounds
        p_S + (p_R - p_S)).
    cp_lower, cp_upper : float
        Real-only Clopper-Pearson at the same confidence.
    effective_n : float
        n (CP width / width)^2: the real trials this interval is worth (inf at zero width).
    correlation, sim_bias : float
        :attr:`SimRealData.correlation` and :attr:`SimRealData.sim_bias`.
    n_real, n_sim : int
    """

    method: str
    validity: str
    lower: float
    upper: float
    estimate: float
    confidence: float
    lam: float
    cp_lower: float
    cp_upper: float
    effective_n: float
    correlation: float
    sim_bias: float
    n_real: int
    n_sim: int

    @property
    def width(self) -> float:
        return self.upper - self.lower


def _cp(k, n, alpha: float):
    """Clopper-Pearson bounds at level 1 - alpha, arrays; n = 0 gives [0, 1]."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    tail = alpha / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = special.betaincinv(k, n - k + 1.0, tail)
        hi = special.betainccinv(k + 1.0, n - k, tail)
    lo = np.where(k == 0, 0.0, lo)
    hi = np.where(k == n, 1.0, hi)
    return lo, hi


def _stratified(d: SimRealData, alpha: float, real_share: float) -> tuple[float, float]:
    alpha_r = real_share * alpha
    alpha_c = alpha - alpha_r
    r_lo, r_hi = _cp(d.k_real, d.n, alpha_r)
    a_lo, a_hi = _cp(d.n11, d.k_twin, alpha_c * STRATUM_SHARE)
    b_lo, b_hi = _cp(d.n10, d.n - d.k_twin, alpha_c * STRATUM_SHARE)
    s_lo, s_hi = _cp(d.k_sim, d.n_sim, alpha_c * SIM_SHARE)
    lo, hi = _K.stratified_bounds(
        float(a_lo), float(a_hi), float(b_lo), float(b_hi), float(s_lo), float(s_hi)
    )
    return _K.intersect_or_real(lo, hi, float(r_lo), float(r_hi))


def _combine_power(n: int, n_sim: int) -> float:
    """The exponent g of the combination's threshold min(1, t p_s^-g), a function of the
    design (n, N) only: 0.25 + 1.15 (sqrt(n / N) - 0.1), clipped to [0.25, 0.75] and
    rounded to 0.05. A larger g leans on the pairs when the simulated rate is less
    precise than the pair bound (its sd 1 / (2 sqrt(N)) against about 1 / sqrt(n)); g = 0.5
    is 1 / sqrt(p_s). Set from issue 27's grid (correlation 0.9, n >= 50), where each N
    has its own best g; any g is valid."""
    g = 0.25 + 1.15 * (math.sqrt(n / n_sim) - 0.1)
    return round(min(max(g, 0.25), 0.75) * 20.0) / 20.0


def _continuous_level(t: float, g: float) -> float:
    """P(p_b <= min(1, t p_s^-g)) for independent uniforms: u* + t (1 - u*^(1 - g)) / (1 - g)
    with u* = t^(1/g), where the threshold reaches 1 (2 t - t^2 at g = 1/2)."""
    us = t ** (1.0 / g)
    return us + t * (1.0 - us ** (1.0 - g)) / (1.0 - g)


def _combine_t0(beta: float, g: float = 0.5) -> float:
    """Threshold scale t of the combination for continuous p-values: the level
    :func:`_continuous_level` is beta for independent uniforms, and at most beta for
    super-uniform ones (1 - sqrt(1 - beta) at g = 1/2; bisection, the lower end, else)."""
    if g == 0.5:
        return 1.0 - math.sqrt(1.0 - beta)
    lo, hi = 0.0, beta
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if _continuous_level(mid, g) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def _rate_grid(low: float, high_gap: float, k: int) -> np.ndarray:
    """Rates in [0, 1]: 4001 uniform points, plus ``k`` geometric ones from ``low`` to 0.01
    and ``k`` from 1 - 0.01 to 1 - ``high_gap`` (the binomial moves fastest near the ends)."""
    return np.unique(
        np.concatenate(
            [
                np.linspace(0.0, 1.0, 4001),
                np.geomspace(low, 0.01, k),
                1.0 - np.geomspace(high_gap, 0.01, k),
            ]
        )
    )


#: Pair rates b at which :func:`_certified_level` bounds the level (uniform, and geometric
#: towards both ends, where the binomial CDF moves fastest).
_LEVEL_GRID = _rate_grid(1e-12, 1e-14, 300)


@functools.lru_cache(maxsize=64)
def _level_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """pmf and CDF of Binomial(n, b) on :data:`_LEVEL_GRID` (rows) at 0..n (columns)."""
    y = np.arange(n + 1)[None, :]
    b = _LEVEL_GRID[:, None]
    return stats.binom.pmf(y, n, b), np.minimum(stats.binom.cdf(y, n, b), 1.0)


def _certified_level(t: float, n: int, g: float = 0.5) -> float:
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
_CERTIFY_MAX_N = 400


@functools.lru_cache(maxsize=256)
def _combine_t(beta: float, n: int, g: float = 0.5) -> float:
    """Threshold scale t of ``discordant_exact``'s combination min(1, t p_s^-g) for n pairs
    at level beta: the largest t found by bisection (40 steps between t0 and 4 t0, t0 of
    :func:`_combine_t0`) whose :func:`_certified_level` is at most beta; t0 when none is
    (or n > :data:`_CERTIFY_MAX_N`), valid because t0's continuous level beta bounds the
    level of super-uniform p-values. t depends on (n, beta, g) only, never on the data."""
    t0 = _combine_t0(beta, g)
    if n > _CERTIFY_MAX_N or _certified_level(t0, n, g) > beta:
        return t0
    lo, hi = t0, 4.0 * t0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if _certified_level(mid, n, g) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


@functools.lru_cache(maxsize=32)
def _combine_grid(t: float, g: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The simulated p-value grid u (1 down to t^(1/g), where the threshold reaches 1) and
    the pair-p-value threshold min(1, t u^-g) at each point."""
    j = COMBINE_GRID
    near_one = 1.0 - np.geomspace(1e-12, 0.5, j)
    near_zero = np.geomspace(0.5, t * t if g == 0.5 else t ** (1.0 / g), j)[1:]
    u = np.concatenate([[1.0], near_one, near_zero])
    return u, np.minimum(t / np.sqrt(u) if g == 0.5 else t * u**-g, 1.0)


def _sim_levels(x, n_sim: int, u: np.ndarray) -> np.ndarray:
    """s at which P_s(K <= x) = u_j, K ~ Binomial(N, s): rows x, columns j (0 at u = 1; 1
    for x = N, where the p-value is 1 at every s)."""
    x = np.asarray(x, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        a = special.betaincinv(x + 1.0, n_sim - x, 1.0 - u[None, :])
    a = np.where(x >= n_sim, 1.0, a)
    a[:, 0] = np.where(x[:, 0] >= n_sim, 1.0, 0.0)
    return a


def _pair_levels(n: int, c: np.ndarray, y=None) -> np.ndarray:
    """b at which P_b(Y <= y) = c_j, Y ~ Binomial(n, b): rows y (default 0..n); 0 where
    c = 1 (no b is accepted), 1 for y = n below c = 1."""
    y = np.arange(n + 1) if y is None else y
    y = np.asarray(y, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        b = special.betaincinv(y + 1.0, n - y, 1.0 - c[None, :])
    b = np.where(y >= n, 1.0, b)
    return np.where(c[None, :] >= 1.0, 0.0, b)


@functools.lru_cache(maxsize=64)
def _pair_table(n: int, t: float, g: float) -> np.ndarray:
    """:func:`_pair_levels` of every count 0..n at the threshold ``(t, g)``, read only: one
    evaluation serves every interval at the same (n, t, g) (T37 resamples thousands)."""
    b = _pair_levels(n, _combine_grid(t, g)[1])
    b.setflags(write=False)
    return b


#: Rows of _sim_levels already computed, by (N, t): the operating characteristics of a
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
        for v, row in zip(missing, _sim_levels(missing, n_sim, u), strict=True):
            rows[v] = row
    return np.stack([rows[int(v)] for v in x])


def _discordant_raw(k_sim: int, n_sim: int, n10: int, n01: int, n: int, beta: float):
    """(lower, upper) of ``discordant_exact`` before the real-only intersection."""
    g = _combine_power(n, n_sim)
    t = _combine_t(beta, n, g)
    u, _ = _combine_grid(t, g)
    b = _pair_table(n, t, g)[[n10, n01]]
    a = _sim_levels_cached(np.array([k_sim, n_sim - k_sim]), n_sim, t, u)
    up = _K.discordant_upper(a, b)
    return 1.0 - float(up[1, 1]), float(up[0, 0])


def _blaker_gamma(p: np.ndarray, n: int) -> np.ndarray:
    """Blaker's acceptability gamma[g, k] of rate p[g] at count k of Binomial(n):
    P_p(min(F(X), S(X)) <= min(F(k), S(k))), F and S the lower and upper tail
    probabilities; ties (relative 1e-10) count as <=, which only enlarges the set."""
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x[None, :], n, np.asarray(p, dtype=np.float64)[:, None])
    m = np.minimum(np.cumsum(pmf, axis=1), np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1])
    order = np.argsort(m, axis=1, kind="stable")
    ms = np.take_along_axis(m, order, axis=1)
    cum = np.cumsum(np.take_along_axis(pmf, order, axis=1), axis=1)
    rows = p.size
    off = 4.0 * np.arange(rows)[:, None]  # m is in [0, 1]: rows do not overlap
    idx = np.searchsorted((ms + off).ravel(), (m * (1.0 + 1e-10) + off).ravel(), side="right")
    return cum.ravel()[idx - 1].reshape(rows, n + 1)


#: Rate grid of the Blaker table: uniform plus geometric towards 0 and 1.
_BLAKER_GRID = _rate_grid(1e-10, 1e-10, 400)


@functools.lru_cache(maxsize=64)
def _blaker_table(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Blaker's exact interval [5]_ at level 1 - alpha for every count 0..n: the convex hull
    of {p : gamma(p, k) > alpha}, its ends found on :data:`_BLAKER_GRID` and refined by
    bisection (50 steps; the returned end is the outer one). Contained in Clopper-Pearson's
    interval at the same level. Clopper-Pearson for n > :data:`MAX_OC_N`."""
    if n > MAX_OC_N:
        return _cp(np.arange(n + 1), n, alpha)
    g = _BLAKER_GRID
    gam = _blaker_gamma(g, n)
    lo, hi = np.zeros(n + 1), np.ones(n + 1)
    for k in range(n + 1):
        acc = np.nonzero(gam[:, k] > alpha)[0]
        i, j = int(acc[0]), int(acc[-1])
        if i > 0:
            lo[k] = _blaker_edge(g[i - 1], g[i], k, n, alpha, accepted_above=True)[0]
        if j < g.size - 1:
            hi[k] = _blaker_edge(g[j], g[j + 1], k, n, alpha, accepted_above=False)[1]
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


def _blaker_edge(a: float, b: float, k: int, n: int, alpha: float, accepted_above: bool):
    """Bisect [a, b] (50 steps) for where Blaker's gamma(., k) of Binomial(n) crosses alpha;
    the accepted rates lie above the crossing (a lower end) or below it (an upper end).
    Returns the final bracket (a, b)."""
    for _ in range(50):
        mid = 0.5 * (a + b)
        if (_blaker_gamma(np.array([mid]), n)[0, k] > alpha) == accepted_above:
            b = mid
        else:
            a = mid
    return a, b


def _real_only(k, n: int, alpha: float):
    """Blaker's bounds (:func:`_blaker_table`) at count(s) k of n, level 1 - alpha."""
    lo, hi = _blaker_table(int(n), float(alpha))
    return lo[k], hi[k]


def _discordant(d: SimRealData, alpha: float, real_share: float) -> tuple[float, float]:
    alpha_r = real_share * alpha
    r_lo, r_hi = _real_only(d.k_real, d.n, alpha_r)
    lo, hi = _discordant_raw(d.k_sim, d.n_sim, d.n10, d.n01, d.n, (alpha - alpha_r) / 2.0)
    return _K.intersect_or_real(lo, hi, float(r_lo), float(r_hi))


def simreal_interval(
    data: SimRealData,
    method: str = "stratified_exact",
    confidence: float = 0.95,
    real_share: float | None = None,
) -> SimRealResult:
    """Interval for the real rate p_R from pairs and simulated trials.

    Parameters
    ----------
    data : SimRealData
        From :func:`simreal_data`.
    method : str
        One of :data:`METHODS` (see the module docstring).
    confidence : float
        In (0, 1).
    real_share : float or None
        ``stratified_exact`` and ``discordant_exact``: the share of alpha on the real-only
        interval, in (0, 1); None (default) takes the method's own default,
        :data:`DEFAULT_REAL_SHARE` or :data:`DISCORDANT_REAL_SHARE`.

    Returns
    -------
    SimRealResult

    Raises
    ------
    ValueError
        Unknown method, confidence or real_share out of range, data not a SimRealData.

    Examples
    --------
    >>> d = simreal_data([1, 1, 0, 1, 1] * 4, [1, 1, 0, 1, 0] * 4, 1600, 2000)
    >>> r = simreal_interval(d, "stratified_exact")
    >>> r.validity, round(r.lower, 3) <= 0.8 <= round(r.upper, 3)
    ('finite-sample', True)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(data, SimRealData):
        raise ValueError(f"data must be a SimRealData (see simreal_data), got {type(data)!r}")
    c = check_confidence(confidence)
    if real_share is None:
        discordant = method in ("discordant_exact", "joint_exact")
        real_share = DISCORDANT_REAL_SHARE if discordant else DEFAULT_REAL_SHARE
    share = check_open_interval(real_share, "real_share")
    alpha = 1.0 - c
    cp = _real_interval("clopper_pearson", data.k_real, data.n, c)
    lam = 0.0
    est = data.k_real / data.n
    if method == "clopper_pearson":
        lo, hi = cp.lower, cp.upper
    elif method == "wilson":
        lo, hi = _real_interval("wilson", data.k_real, data.n, c)
    elif method in ("ppi", "ppi_plus"):
        z = float(-special.ndtri(alpha / 2.0))
        lo, hi, lam = _K.ppi_bounds(
            data.n11, data.n10, data.n01, data.n00, data.k_sim, data.n_sim, z, method == "ppi_plus"
        )
        est = (lo + hi) / 2.0
    elif method in ("discordant_exact", "joint_exact"):
        if method == "joint_exact" and data.n <= _joint.MAX_N:
            lo, hi = _joint.bounds(
                data.k_real, data.n01, data.n10, data.n, data.k_sim, data.n_sim, alpha
            )
        else:  # joint_exact above MAX_N is discordant_exact's interval (see joint)
            lo, hi = _discordant(data, alpha, share)
        lam = 1.0
        est = min(max(data.k_sim / data.n_sim + (data.n10 - data.n01) / data.n, 0.0), 1.0)
    else:
        lo, hi = _stratified(data, alpha, share)
        lam = math.nan
        est = _stratified_estimate(data)
    width = hi - lo
    cp_w = cp.upper - cp.lower
    eff = math.inf if width <= 0.0 else data.n * (cp_w / width) ** 2
    return SimRealResult(
        method=method,
        validity=VALIDITY[method],
        lower=float(lo),
        upper=float(hi),
        estimate=float(est),
        confidence=c,
        lam=float(lam),
        cp_lower=float(cp.lower),
        cp_upper=float(cp.upper),
        effective_n=float(eff),
        correlation=float(data.correlation),
        sim_bias=float(data.sim_bias),
        n_real=data.n,
        n_sim=data.n_sim,
    )


@functools.lru_cache(maxsize=4096)
def _real_interval(method: str, k: int, n: int, confidence: float):
    """The real-only interval (``clopper_pearson`` or ``wilson``) of k of n, memoised: every
    method's result carries Clopper-Pearson's, and resampling revisits the same counts."""
    f = clopper_pearson_interval if method == "clopper_pearson" else wilson_interval
    return f(k, n, confidence)


def _stratified_estimate(d: SimRealData) -> float:
    """Post-stratified estimate a_hat p_S_hat + b_hat (1 - p_S_hat); k_real/n if a stratum
    is empty."""
    n1, n0 = d.k_twin, d.n - d.k_twin
    if n1 == 0 or n0 == 0:
        return d.k_real / d.n
    ps = d.k_sim / d.n_sim
    return d.n11 / n1 * ps + d.n10 / n0 * (1.0 - ps)


def simreal_intervals(
    data: SimRealData, confidence: float = 0.95, real_share: float | None = None
) -> dict[str, SimRealResult]:
    """Every method of :data:`METHODS` on the same data, keyed by method (``real_share`` as
    in :func:`simreal_interval`)."""
    return {m: simreal_interval(data, m, confidence, real_share) for m in METHODS}


def joint_law(p_real: float, p_sim: float, correlation: float) -> tuple[float, float, float, float]:
    """Cell probabilities (p11, p10, p01, p00) of (real, twin) with the given marginals and
    phi correlation.

    Raises
    ------
    ValueError
        A rate outside [0, 1], or a correlation outside the range the marginals allow
        (quoted in the message).
    """
    pr = check_probability(p_real, "p_real")
    ps = check_probability(p_sim, "p_sim")
    if isinstance(correlation, bool | np.bool_) or not isinstance(correlation, numbers.Real):
        raise ValueError(f"correlation must be a number in [-1, 1], got {correlation!r}")
    rho = float(correlation)
    sd = math.sqrt(pr * (1 - pr) * ps * (1 - ps))
    lo11, hi11 = max(0.0, pr + ps - 1.0), min(pr, ps)
    if sd == 0.0:
        if rho != 0.0:
            raise ValueError(f"correlation must be 0 when a rate is 0 or 1, got {correlation!r}")
        p11 = pr * ps
    else:
        p11 = pr * ps + rho * sd
        tol = 1e-12
        if not (lo11 - tol <= p11 <= hi11 + tol):
            rmin, rmax = (lo11 - pr * ps) / sd, (hi11 - pr * ps) / sd
            raise ValueError(
                f"correlation must be in [{rmin:.6g}, {rmax:.6g}] for p_real={pr}, "
                f"p_sim={ps}, got {correlation!r}"
            )
        p11 = min(max(p11, lo11), hi11)
    p10 = max(pr - p11, 0.0)
    p01 = max(ps - p11, 0.0)
    p00 = max(1.0 - p11 - p10 - p01, 0.0)
    return p11, p10, p01, p00


@dataclass(frozen=True)
class SimRealOC:
    """Exact operating characteristics at one joint law.

    Attributes
    ----------
    coverage, width : dict[str, float]
        P(p_R in interval) and E[width], per method of :data:`METHODS` (lower bounds: the
        enumeration skips outcomes of total probability ``skipped_mass``).
    skipped_mass : float
        Probability of the outcomes not enumerated (below 1e-12 by construction).
    p_real, p_sim, correlation : float
    n, n_sim : int
    confidence, real_share : float
        ``real_share`` is the share ``stratified_exact`` used.
    discordant_share : float
        The share ``discordant_exact`` used.
    """

    coverage: dict
    width: dict
    skipped_mass: float
    p_real: float
    p_sim: float
    correlation: float
    n: int
    n_sim: int
    confidence: float
    real_share: float
    discordant_share: float = DISCORDANT_REAL_SHARE


def _pmf_table(n: int, p: float) -> np.ndarray:
    """T[m, k] = Binomial(m, p) pmf at k, for 0 <= k <= m <= n."""
    m = np.arange(n + 1)[:, None]
    k = np.arange(n + 1)[None, :]
    with np.errstate(invalid="ignore"):
        t = stats.binom.pmf(k, m, p)
    return np.where(k <= m, np.nan_to_num(t), 0.0)


def _cp_table(n: int, alpha: float):
    m = np.arange(n + 1)[:, None] * np.ones((1, n + 1))
    k = np.minimum(np.arange(n + 1)[None, :] * np.ones((n + 1, 1)), m)
    return _cp(k, m, alpha)


#: Outcome probabilities below this are skipped; the tails of the simulated binomial
#: beyond it on either side too. The skipped total is returned.
_PRUNE = 1e-16


def operating_characteristics(
    p_real: float,
    p_sim: float,
    correlation: float,
    n: int,
    n_sim: int,
    confidence: float = 0.95,
    real_share: float | None = None,
    joint: bool = True,
) -> SimRealOC:
    """Exact coverage and expected width of every method, by enumeration of all outcomes.

    The outcomes are the pair table (multinomial over the joint law of :func:`joint_law`)
    times the simulated count (Binomial(N, p_S)); nothing is simulated. Work is about
    n^3/6 table cells times the simulated window (about 16 sd of Binomial(N, p_S)).

    Parameters
    ----------
    p_real, p_sim, correlation : float
        The joint law of (real, twin); the further simulated trials have rate p_sim.
    n : int
        Real trials, 1 <= n <= :data:`MAX_OC_N`.
    n_sim : int
        Simulated trials N >= n.
    confidence : float
        As in :func:`simreal_interval`.
    real_share : float or None
        The share of alpha on the real-only interval of both finite-sample sim + real
        methods; None (default) gives each its own default, as in :func:`simreal_interval`.
    joint : bool
        False leaves ``joint_exact`` out of ``coverage`` and ``width`` (its tables are most
        of the work at large n).

    Raises
    ------
    ValueError
        Infeasible law, n or N out of range, bad confidence or real_share.
    """
    p11, p10, p01, p00 = joint_law(p_real, p_sim, correlation)
    n = _count(n, "n", 1)
    if n > MAX_OC_N:
        raise ValueError(f"n must be in [1, {MAX_OC_N}] for the exact enumeration, got {n}")
    big_n = _count(n_sim, "n_sim", n)
    c = check_confidence(confidence)
    share = check_open_interval(
        DEFAULT_REAL_SHARE if real_share is None else real_share, "real_share"
    )
    dshare = check_open_interval(
        DISCORDANT_REAL_SHARE if real_share is None else real_share, "real_share"
    )
    alpha = 1.0 - c
    pr, ps = float(p_real), float(p_sim)
    a = p11 / ps if ps > 0 else 0.0
    b = p10 / (1.0 - ps) if ps < 1 else 0.0
    pmf_n1 = stats.binom.pmf(np.arange(n + 1), n, ps)
    pmf_a = _pmf_table(n, min(max(a, 0.0), 1.0))
    pmf_b = _pmf_table(n, min(max(b, 0.0), 1.0))
    ks = np.arange(big_n + 1)
    pmf_s = stats.binom.pmf(ks, big_n, ps)
    ks_lo = int(stats.binom.ppf(_PRUNE, big_n, ps))
    ks_hi = int(stats.binom.isf(_PRUNE, big_n, ps))
    ks_lo, ks_hi = max(ks_lo - 1, 0), min(ks_hi + 1, big_n)
    tail_s = max(1.0 - float(pmf_s[ks_lo : ks_hi + 1].sum()), 0.0)
    kr = np.arange(n + 1)
    cp_lo, cp_hi = _cp(kr, n, alpha)
    wil = wilson_interval(kr, n, c)
    alpha_c = alpha * (1.0 - share)
    share_lo, share_hi = _cp(kr, n, alpha * share)
    ca_lo, ca_hi = _cp_table(n, alpha_c * STRATUM_SHARE)
    s_lo, s_hi = _cp(ks, big_n, alpha_c * SIM_SHARE)
    z = float(-special.ndtri(alpha / 2.0))
    dis_lo, dis_hi = _discordant_tables(n, big_n, ks_lo, ks_hi, (alpha - alpha * dshare) / 2.0)
    dshare_lo, dshare_hi = _real_only(kr, n, alpha * dshare)
    cov, wid, skipped = _K.operating_characteristics(
        n,
        big_n,
        pr,
        pmf_n1,
        pmf_a,
        pmf_b,
        pmf_s,
        ks_lo,
        ks_hi,
        cp_lo,
        cp_hi,
        np.asarray(wil.lower, dtype=np.float64),
        np.asarray(wil.upper, dtype=np.float64),
        share_lo,
        share_hi,
        ca_lo,
        ca_hi,
        ca_lo,
        ca_hi,
        s_lo,
        s_hi,
        dis_lo,
        dis_hi,
        dshare_lo,
        dshare_hi,
        z,
        _PRUNE,
    )
    coverage = {m: float(cov[i]) for i, m in enumerate(METHODS[: len(cov)])}
    width = {m: float(wid[i]) for i, m in enumerate(METHODS[: len(wid)])}
    if joint:  # joint_exact: its own exact enumeration (joint.py), same simulated window
        j_cov, j_wid, j_tot = _joint.operating_characteristics(
            pr, p11, p10, p01, p00, n, big_n, pmf_s[ks_lo : ks_hi + 1], ks_lo, alpha
        )
        coverage["joint_exact"], width["joint_exact"] = float(j_cov), float(j_wid)
        mass_s = float(pmf_s[ks_lo : ks_hi + 1].sum())
        skipped = max(float(skipped), mass_s - float(j_tot))
    return SimRealOC(
        coverage=coverage,
        width=width,
        skipped_mass=float(skipped + tail_s),
        p_real=pr,
        p_sim=ps,
        correlation=float(correlation),
        n=n,
        n_sim=big_n,
        confidence=c,
        real_share=share,
        discordant_share=dshare,
    )


def _discordant_tables(n: int, n_sim: int, ks_lo: int, ks_hi: int, beta: float):
    """``discordant_exact``'s raw bounds for every simulated count ks_lo..ks_hi (rows) and
    discordant count 0..n (columns): lower by n01, upper by n10."""
    ks = np.arange(ks_lo, ks_hi + 1)
    g = _combine_power(n, n_sim)
    t = _combine_t(beta, n, g)
    u, _ = _combine_grid(t, g)
    b = _pair_table(n, t, g)
    hi = _K.discordant_upper(_sim_levels_cached(ks, n_sim, t, u), b)
    lo = 1.0 - _K.discordant_upper(_sim_levels_cached(n_sim - ks, n_sim, t, u), b)
    return lo, hi

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
    **Finite-sample**, valid at every n >= 1 and every joint law: p_R = p_S + p10 - p01
    bounded through a joint confidence region for the simulated rate and each discordant
    rate, intersected with Blaker's real-only interval (:mod:`.discordant`).

``joint_exact``
    **Finite-sample**, valid at every n >= 1 and every joint law; the recommended interval
    when N > 20 n (:func:`recommended`). One exact test of p_R over the real successes and the
    discordant pairs together, the least favourable discordant rate in closed form and the
    simulated rate bounded by Berger and Boos's device (:mod:`.joint`). Above
    :data:`evalsim.stats.simreal.joint.MAX_N` real trials it is ``discordant_exact``'s
    interval.

``full_joint_exact``
    **Finite-sample**, valid at every n >= 1 and every joint law. One exact test of p_R
    over the real successes, the discordant pairs and the simulated count together, the
    simulated rate maximised out on certified cells instead of bounded first
    (:mod:`.full_joint`): narrower than ``joint_exact`` when N is small against n, and the
    recommended interval when N <= 20 n (:func:`recommended`). Above
    :data:`evalsim.stats.simreal.full_joint.MAX_N` real trials it is ``joint_exact``'s
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
    check_confidence,
    check_open_interval,
    check_probability,
)
from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval
from evalsim.stats.simreal import _kernels as _K
from evalsim.stats.simreal import discordant as _dis
from evalsim.stats.simreal import full_joint as _full
from evalsim.stats.simreal import joint as _joint
from evalsim.stats.simreal import real_only as _ro
from evalsim.stats.simreal.data import SimRealData, check_count, simreal_data
from evalsim.stats.simreal.discordant import COMBINE_GRID, DISCORDANT_REAL_SHARE

__all__ = [
    "COMBINE_GRID",
    "FULL_JOINT_RATIO",
    "DEFAULT_REAL_SHARE",
    "DISCORDANT_REAL_SHARE",
    "LABELS",
    "METHODS",
    "SIM_SHARE",
    "STRATUM_SHARE",
    "VALIDITY",
    "SimRealData",
    "SimRealOC",
    "SimRealResult",
    "joint_law",
    "operating_characteristics",
    "recommended",
    "simreal_data",
    "simreal_interval",
    "simreal_intervals",
]

#: Interval methods, in the order of the kernels' outputs.
METHODS = _names.SIMREAL_METHODS
#: Each method's name in figure legends (the registry's labels).
LABELS = _names.SIMREAL_METHOD_LABELS
#: Each method's validity class.
VALIDITY = {
    "clopper_pearson": "finite-sample",
    "wilson": "asymptotic",
    "ppi": "asymptotic",
    "ppi_plus": "asymptotic",
    "stratified_exact": "finite-sample",
    "discordant_exact": "finite-sample",
    "joint_exact": "finite-sample",
    "full_joint_exact": "finite-sample",
}
#: ``full_joint_exact`` is the recommended method while N <= FULL_JOINT_RATIO n, and
#: ``joint_exact`` above (:func:`recommended`).
FULL_JOINT_RATIO = _names.SIMREAL_FULL_JOINT_RATIO
#: Default share of alpha spent on the real-only Clopper-Pearson interval A.
DEFAULT_REAL_SHARE = _names.SIMREAL_DEFAULT_REAL_SHARE
#: Shares of the remaining alpha_c spent on each twin stratum (two strata) and on p_S.
STRATUM_SHARE = 0.4
SIM_SHARE = 0.2
#: Largest n the exact operating characteristics enumerate (O(n^3 N) work).
MAX_OC_N = 400


def recommended(n: int, n_sim: int) -> str:
    """The finite-sample sim + real method to use for n real and N simulated trials (the
    command's default and its verdict's).

    ``full_joint_exact`` while N <= :data:`FULL_JOINT_RATIO` n, where the simulated rate is
    the less precise part and maximising it out costs less than bounding it first;
    ``joint_exact`` above, where Berger and Boos's bound of the simulated rate costs little.
    The choice is a function of the design (n, N) only, made before any outcome is seen, so
    the interval it picks keeps its exact coverage. On issue 27's grid
    (``benchmarks/bench_simreal.py``) the pair meets the gain target at every point, where
    each alone misses some (``joint_exact`` at N = 500, ``full_joint_exact`` at n = 50,
    N = 10,000).

    Examples
    --------
    >>> recommended(50, 500), recommended(50, 10_000)
    ('full_joint_exact', 'joint_exact')
    """
    return "full_joint_exact" if n_sim <= FULL_JOINT_RATIO * n else "joint_exact"


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


def _stratified(d: SimRealData, alpha: float, real_share: float) -> tuple[float, float]:
    alpha_r = real_share * alpha
    alpha_c = alpha - alpha_r
    r_lo, r_hi = _ro.cp_bounds(d.k_real, d.n, alpha_r)
    a_lo, a_hi = _ro.cp_bounds(d.n11, d.k_twin, alpha_c * STRATUM_SHARE)
    b_lo, b_hi = _ro.cp_bounds(d.n10, d.n - d.k_twin, alpha_c * STRATUM_SHARE)
    s_lo, s_hi = _ro.cp_bounds(d.k_sim, d.n_sim, alpha_c * SIM_SHARE)
    lo, hi = _K.stratified_bounds(
        float(a_lo), float(a_hi), float(b_lo), float(b_hi), float(s_lo), float(s_hi)
    )
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
        discordant = method in ("discordant_exact", "joint_exact", "full_joint_exact")
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
    elif method in ("discordant_exact", "joint_exact", "full_joint_exact"):
        if method == "full_joint_exact" and data.n <= _full.MAX_N:
            lo, hi = _full.bounds(
                data.k_real, data.n01, data.n10, data.n, data.k_sim, data.n_sim, alpha
            )
        elif method != "discordant_exact" and data.n <= _joint.MAX_N:
            lo, hi = _joint.bounds(
                data.k_real, data.n01, data.n10, data.n, data.k_sim, data.n_sim, alpha
            )
        else:  # above their MAX_N the joint methods fall back (see joint, full_joint)
            lo, hi = _dis.interval(data, alpha, share)
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
    return _ro.cp_bounds(k, m, alpha)


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
        False leaves ``joint_exact`` and ``full_joint_exact`` out of ``coverage`` and
        ``width`` (their tables are most of the work at large n).

    Raises
    ------
    ValueError
        Infeasible law, n or N out of range, bad confidence or real_share.
    """
    p11, p10, p01, p00 = joint_law(p_real, p_sim, correlation)
    n = check_count(n, "n", 1)
    if n > MAX_OC_N:
        raise ValueError(f"n must be in [1, {MAX_OC_N}] for the exact enumeration, got {n}")
    big_n = check_count(n_sim, "n_sim", n)
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
    cp = _ro.cp_bounds(kr, n, alpha)
    wil = wilson_interval(kr, n, c)
    alpha_c = alpha * (1.0 - share)
    share_bounds = _ro.cp_bounds(kr, n, alpha * share)
    strata = _cp_table(n, alpha_c * STRATUM_SHARE)
    sim = _ro.cp_bounds(ks, big_n, alpha_c * SIM_SHARE)
    z = float(-special.ndtri(alpha / 2.0))
    dis = _dis.tables(n, big_n, ks_lo, ks_hi, (alpha - alpha * dshare) / 2.0)
    dshare_bounds = _ro.blaker_bounds(kr, n, alpha * dshare)
    real = (
        cp,
        (np.asarray(wil.lower, dtype=np.float64), np.asarray(wil.upper, dtype=np.float64)),
        share_bounds,
        dshare_bounds,
    )
    cov, wid, skipped = _K.operating_characteristics(
        n,
        big_n,
        pr,
        (pmf_n1, pmf_a, pmf_b, pmf_s),
        (ks_lo, ks_hi),
        real,
        strata,
        sim,
        dis,
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
        if n <= _full.MAX_N:  # full_joint_exact: its own enumeration (full_joint.py)
            f_cov, f_wid, f_tot = _full.operating_characteristics(
                pr, p11, p10, p01, p00, n, big_n, pmf_s[ks_lo : ks_hi + 1], ks_lo, alpha
            )
            skipped = max(float(skipped), mass_s - float(f_tot))
        else:  # above its MAX_N the method is joint_exact's interval
            f_cov, f_wid = j_cov, j_wid
        coverage["full_joint_exact"], width["full_joint_exact"] = float(f_cov), float(f_wid)
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

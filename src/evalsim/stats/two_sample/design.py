"""Planning an evaluation before it runs: sample sizes, detectable effects, bench time.

Every function here answers a design question of documents 001 ("Statistics you can
defend") and 004 ("Why 90% vs 92% proves little"): how many trials per arm a two-proportion
comparison needs (normal approximation, and exact Fisher power), the smallest gap a given
n can detect (MDE), Cohen's h, the n that estimates one rate to a stated half-width, and
what it all costs in hours at the bench. What pairing buys (pairs needed by the correlation
of paired outcomes or by the probability of a discordant pair, exact McNemar power) is
:mod:`evalsim.stats.two_sample.paired_design`.

Conventions: ``alpha`` is two-sided; ``power`` is ``1 - beta``; ``z_alpha = Phi^-1(1 -
alpha/2)``, ``z_beta = Phi^-1(power)``. A required n is the smallest integer at or above
the real-valued solution (``ceil``); the unrounded value is kept in ``n_real`` so a
document that rounds to the nearest integer can be checked.

References
----------
.. [1] Fleiss, J. L., Levin, B. and Paik, M. C. (2003). *Statistical Methods for Rates and
   Proportions*, 3rd ed., section 4.2 (sample size for comparing two proportions).
.. [2] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.,
   chapter 6 (the arcsine effect size h).
.. [3] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
   inference. *JASA* 22, 209-212.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri  # norm.cdf, norm.ppf without loading scipy.stats

from evalsim.stats._validate import (
    check_alpha,
    check_confidence,
    check_n,
    check_probability,
    check_z,
)

VARIANCES = ("fleiss", "pbar", "unpooled")
MDE_CONVENTIONS = ("centered", "from_baseline")
ESTIMATE_METHODS = ("normal", "wilson")

#: mde_exact builds the (n + 1)^2 rejection region once up to this n per arm (fast per
#: power evaluation); above it each evaluation runs the exact power kernel instead.
MDE_REGION_MAX_N = 1000


@dataclass(frozen=True)
class SampleSize:
    """A required number of trials (per arm, or pairs for a paired design).

    Attributes
    ----------
    n : int
        Smallest integer that meets the requirement.
    n_real : float
        The real-valued solution before rounding up (nan for a search over integers).
    method : str
        Which formula or exact search produced it.
    """

    n: int
    n_real: float
    method: str

    def __repr__(self) -> str:
        return f"SampleSize(n={self.n}, n_real={self.n_real:.3f}, method={self.method!r})"


@dataclass(frozen=True)
class MDEResult:
    """The minimum detectable effect at a fixed n per arm, by exact power.

    Attributes
    ----------
    mde : float
        Smallest gap ``p2 - p1`` whose power reaches the target (nan if none does).
    p1, p2 : float
        The two rates at the MDE under ``convention``.
    power : float
        Exact power at the MDE (>= the target, up to the search tolerance).
    convention : str
        ``"centered"``: p1, p2 = baseline -/+ mde/2; ``"from_baseline"``: p1 = baseline,
        p2 = baseline + mde.
    """

    mde: float
    p1: float
    p2: float
    power: float
    convention: str


def _z(alpha: float, power: float) -> tuple[float, float]:
    check_alpha(alpha)
    check_probability(power, "power")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    return float(ndtri(1.0 - alpha / 2.0)), float(ndtri(power))


def _rate(p: float, name: str) -> float:
    check_probability(p, name)
    if not 0.0 < p < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {p!r}")
    return float(p)


def _ceil(x: float) -> int:
    # A solution like 42.0000000001 from floating point is 42, not 43.
    return int(math.ceil(x - 1e-9))


def n_per_arm_normal(
    p1: float,
    p2: float,
    alpha: float = 0.05,
    power: float = 0.8,
    variance: str = "fleiss",
    z_alpha: float | None = None,
    z_beta: float | None = None,
) -> SampleSize:
    """Trials per arm for a two-sided two-proportion z-test (normal approximation).

    Parameters
    ----------
    p1, p2 : float
        The two true success rates, each in (0, 1), ``p1 != p2``.
    alpha, power : float
        Two-sided significance level and target power.
    variance : {"fleiss", "pbar", "unpooled"}
        ``"fleiss"``: ``[z_a sqrt(2 pbar qbar) + z_b sqrt(p1 q1 + p2 q2)]^2 / d^2`` (pooled
        variance under the null, unpooled under the alternative; document 001's
        ``n_per_arm``, Fleiss [1]_ without continuity correction). ``"pbar"``:
        ``(z_a + z_b)^2 2 pbar qbar / d^2`` (document 001's worked example).
        ``"unpooled"``: ``(z_a + z_b)^2 (p1 q1 + p2 q2) / d^2``.
    z_alpha, z_beta : float, optional
        Override the critical values (the worked example uses the rounded 1.96 and 0.84).

    Returns
    -------
    SampleSize
    """
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    if p1 == p2:
        raise ValueError(f"p1 and p2 must differ, got p1 = p2 = {p1!r}")
    if variance not in VARIANCES:
        raise ValueError(f"variance must be one of {VARIANCES}, got {variance!r}")
    za, zb = _z(alpha, power)
    za = za if z_alpha is None else check_z(z_alpha, "z_alpha")
    zb = zb if z_beta is None else check_z(z_beta, "z_beta", positive=False)
    d = abs(p1 - p2)
    pbar = 0.5 * (p1 + p2)
    if variance == "fleiss":
        n = (
            (
                za * math.sqrt(2.0 * pbar * (1.0 - pbar))
                + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
            )
            / d
        ) ** 2
    elif variance == "pbar":
        n = (za + zb) ** 2 * 2.0 * pbar * (1.0 - pbar) / d**2
    else:
        n = (za + zb) ** 2 * (p1 * (1 - p1) + p2 * (1 - p2)) / d**2
    return SampleSize(_ceil(n), float(n), f"normal ({variance})")


def mde_normal(n_per_arm, pbar: float = 0.5, alpha: float = 0.05, power: float = 0.8):
    """Minimum detectable effect of a two-proportion z-test with ``n_per_arm`` per arm.

    ``MDE = (z_a + z_b) sqrt(2 pbar (1 - pbar) / n)``, document 001's ``mde``; the worst
    case (largest MDE) is ``pbar = 0.5``.

    Parameters
    ----------
    n_per_arm : int or array of int
        Trials per arm, >= 1.
    pbar : float
        The average of the two rates, in (0, 1).

    Returns
    -------
    float or ndarray
        The MDE as a difference of proportions (0.29 = 29 points).
    """
    za, zb = _z(alpha, power)
    pbar = _rate(pbar, "pbar")
    n = np.asarray(n_per_arm)
    for v in np.atleast_1d(n).ravel():
        check_n(v.item(), "n_per_arm")
    out = (za + zb) * np.sqrt(2.0 * pbar * (1.0 - pbar) / n.astype(float))
    return float(out) if out.ndim == 0 else out


def _exact_power_from_region(reject: np.ndarray, p1: float, p2: float) -> float:
    """Exact power: the binomial probability of the rejection region ``reject[k1, k2]``."""
    from evalsim.stats.proportion.binomial import binom_pmf

    n1, n2 = reject.shape[0] - 1, reject.shape[1] - 1
    pmf1 = np.asarray(binom_pmf(np.arange(n1 + 1), n1, p1), dtype=float)
    pmf2 = np.asarray(binom_pmf(np.arange(n2 + 1), n2, p2), dtype=float)
    return float(pmf1 @ reject.astype(float) @ pmf2)


def _mde_pair(d: float, baseline: float, convention: str) -> tuple[float, float]:
    if convention == "centered":
        return baseline - d / 2.0, baseline + d / 2.0
    return baseline, baseline + d


def mde_exact(
    n_per_arm: int,
    alpha: float = 0.05,
    power: float = 0.8,
    baseline: float = 0.5,
    convention: str = "centered",
    tol: float = 1e-6,
    region=None,
) -> MDEResult:
    """Smallest gap that Fisher's exact test detects with ``power`` at ``n_per_arm`` per arm.

    The rejection region ``{(k1, k2): fisher p < alpha}`` of the two-sided test is computed
    once (``evalsim.stats.two_sample.fisher.fisher_rejects``); the exact power of a gap ``d`` is its
    binomial probability, and ``d`` is found by bisection (power grows with the gap).

    Parameters
    ----------
    n_per_arm : int
        Trials per arm.
    baseline : float
        With ``convention="centered"`` the midpoint of the two rates (0.5 is the worst case,
        as in :func:`mde_normal`); with ``"from_baseline"`` the lower rate.
    convention : {"centered", "from_baseline"}
        Where the two rates sit, see :class:`MDEResult`.
    tol : float
        Bisection tolerance on the gap.
    region : numpy.ndarray of bool, optional
        Another test's rejection region at ``n_per_arm`` per arm and ``alpha``, shape
        ``(n + 1, n + 1)`` (e.g. Boschloo's, from
        :func:`evalsim.stats.two_sample.unconditional_power.rejection_region`): the MDE of that
        test. Default: Fisher's.

    Returns
    -------
    MDEResult
        ``mde`` is nan when even the largest possible gap misses the target power.
    """
    from evalsim.stats.two_sample.fisher import fisher_rejects

    check_n(n_per_arm, "n_per_arm")
    n = int(n_per_arm)
    _z(alpha, power)
    baseline = _rate(baseline, "baseline")
    if convention not in MDE_CONVENTIONS:
        raise ValueError(f"convention must be one of {MDE_CONVENTIONS}, got {convention!r}")
    if region is not None:
        reject = np.asarray(region, dtype=bool)
        if reject.shape != (n + 1, n + 1):
            raise ValueError(f"region must have shape {(n + 1, n + 1)}, got {reject.shape}")

        def exact_power(p1: float, p2: float) -> float:
            return _exact_power_from_region(reject, p1, p2)
    elif n <= MDE_REGION_MAX_N:
        reject = np.asarray(fisher_rejects(n, n, alpha), dtype=bool)

        def exact_power(p1: float, p2: float) -> float:
            return _exact_power_from_region(reject, p1, p2)
    else:  # no (n + 1)^2 region: the power kernel visits only the margins that matter
        from evalsim.stats.two_sample.power import _power

        def exact_power(p1: float, p2: float) -> float:
            return _power(p1, n, p2, n, alpha)

    d_max = 2.0 * min(baseline, 1.0 - baseline) if convention == "centered" else 1.0 - baseline
    if exact_power(*_mde_pair(d_max, baseline, convention)) < power:
        return MDEResult(float("nan"), float("nan"), float("nan"), float("nan"), convention)
    lo, hi = 0.0, d_max
    if n > MDE_REGION_MAX_N:  # bracket around the normal approximation: fewer evaluations
        guess = float(mde_normal(n, pbar=baseline, alpha=alpha, power=power))
        a, b = 0.9 * guess, min(1.1 * guess, d_max)
        if exact_power(*_mde_pair(a, baseline, convention)) < power:
            lo = a
            if b < d_max and exact_power(*_mde_pair(b, baseline, convention)) >= power:
                hi = b
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if exact_power(*_mde_pair(mid, baseline, convention)) >= power:
            hi = mid
        else:
            lo = mid
    p1, p2 = _mde_pair(hi, baseline, convention)
    return MDEResult(hi, p1, p2, exact_power(p1, p2), convention)


def normal_power(p1: float, p2: float, n_per_arm: int, alpha: float = 0.05) -> float:
    """Approximate power of the two-sided pooled two-proportion z-test (normal theory).

    ``Phi((|d| sqrt(n) - z_a sqrt(2 pbar qbar)) / sqrt(p1 q1 + p2 q2))`` plus the (tiny)
    opposite tail; the inverse of :func:`n_per_arm_normal` with ``variance="fleiss"``.
    """
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    check_n(n_per_arm, "n_per_arm")
    n = int(n_per_arm)
    check_alpha(alpha)
    za = float(ndtri(1.0 - alpha / 2.0))
    d = abs(p1 - p2)
    pbar = 0.5 * (p1 + p2)
    s0 = math.sqrt(2.0 * pbar * (1.0 - pbar))
    s1 = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    up = ndtr((d * math.sqrt(n) - za * s0) / s1)
    down = ndtr((-d * math.sqrt(n) - za * s0) / s1)
    return float(up + down)


def cohens_h(p1, p2):
    """Cohen's effect size h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)) [2]_.

    By Cohen's rule of thumb |h| = 0.2 is "small", 0.5 "medium", 0.8 "large".
    """
    a = np.asarray(p1, dtype=float)
    b = np.asarray(p2, dtype=float)
    for v, name in ((a, "p1"), (b, "p2")):
        bad = ~((v >= 0.0) & (v <= 1.0))
        if bad.any():
            raise ValueError(f"{name} must be in [0, 1], got {v[bad].ravel()[0]!r}")
    h = 2.0 * np.arcsin(np.sqrt(a)) - 2.0 * np.arcsin(np.sqrt(b))
    return float(h) if h.ndim == 0 else h


def n_per_arm_from_h(h: float, alpha: float = 0.05, power: float = 0.8) -> SampleSize:
    """Trials per arm to detect effect size ``h`` (arcsine normal approximation).

    ``2 asin sqrt(p_hat)`` has variance ``1/n``, so the difference of two arms has variance
    ``2/n`` and ``n = 2 (z_a + z_b)^2 / h^2`` (what ``statsmodels``' ``NormalIndPower``
    solves for).
    """
    za, zb = _z(alpha, power)
    if not np.isfinite(h) or h == 0:
        raise ValueError(f"h must be finite and non-zero, got {h!r}")
    n = 2.0 * (za + zb) ** 2 / float(h) ** 2
    return SampleSize(_ceil(n), float(n), "arcsine (Cohen's h)")


def n_for_estimate(
    p: float, half_width: float, confidence: float = 0.95, method: str = "normal"
) -> SampleSize:
    """Trials to estimate a rate near ``p`` to within ``+/- half_width``.

    ``"normal"``: ``n = z^2 p (1 - p) / half_width^2`` (Wald). ``"wilson"``: the smallest n
    whose Wilson interval at observed rate p has half-width <= ``half_width``
    (``evalsim.stats.proportion.budget.half_width_budget(...).first_n``) [3]_.
    """
    p = _rate(p, "p")
    check_confidence(confidence)
    if not 0.0 < half_width < 0.5:
        raise ValueError(f"half_width must be in (0, 0.5), got {half_width!r}")
    if method not in ESTIMATE_METHODS:
        raise ValueError(f"method must be one of {ESTIMATE_METHODS}, got {method!r}")
    if method == "normal":
        z = float(ndtri(0.5 + confidence / 2.0))
        n = z * z * p * (1.0 - p) / half_width**2
        return SampleSize(_ceil(n), float(n), "normal (Wald half-width)")
    from evalsim.stats.proportion.budget import half_width_budget

    n = half_width_budget(p, half_width, confidence=confidence, method="wilson").first_n
    return SampleSize(n, float("nan"), "Wilson half-width")


def bench_hours(trials, minutes_per_trial: float = 3.0):
    """Hours at the bench for ``trials`` trials at ``minutes_per_trial`` minutes each."""
    t = np.asarray(trials, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError(f"trials must be finite and >= 0, got {trials!r}")
    if not (np.isfinite(minutes_per_trial) and minutes_per_trial > 0):
        raise ValueError(f"minutes_per_trial must be > 0, got {minutes_per_trial!r}")
    h = t * float(minutes_per_trial) / 60.0
    return float(h) if h.ndim == 0 else h

"""Planning a paired evaluation: pairs needed, exact McNemar power and detectable gaps.

When both policies try the same initial conditions the comparison is paired, and what pairing
buys depends on how often the two policies disagree on a pair. The functions here answer the
paired design questions of documents 001 ("Statistics you can defend") and 004 ("Why 90% vs
92% proves little"): the probability of a discordant pair implied by a correlation of paired
outcomes, the pairs a normal-theory paired comparison or Connor's McNemar formula needs, and,
exactly, the power, the detectable gap and the smallest number of pairs of the two-sided exact
(conditional) McNemar test, summed over the number of discordant pairs.

Conventions as in :mod:`evalsim.stats.two_sample.design` (two-sided ``alpha``, ``power = 1 -
beta``, a required n is the ``ceil`` of the real-valued solution, kept in ``n_real``); ``p10``
and ``p01`` are the probabilities of the two discordant outcomes of a pair (A only, B only).

References
----------
.. [1] Connor, R. J. (1987). Sample size for testing differences in proportions for the
   paired-sample design. *Biometrics* 43(1), 207-211.
.. [2] McNemar, Q. (1947). Note on the sampling error of the difference between correlated
   proportions or percentages. *Psychometrika* 12(2), 153-157.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from evalsim.stats._validate import check_alpha, check_n, check_probability, check_z
from evalsim.stats.decision import rejects
from evalsim.stats.two_sample.design import SampleSize, _ceil, _rate, _z

PAIRED_VARIANCES = ("separate", "pbar")


def discordance_from_rho(p1: float, p2: float, rho: float) -> float:
    """Probability that a pair is discordant when paired outcomes correlate with ``rho``.

    With ``P(both succeed) = p1 p2 + rho sqrt(p1 q1 p2 q2)``, the discordance probability
    is ``psi = p1 + p2 - 2 P(both succeed)``. Raises if ``rho`` is outside the range two
    Bernoulli margins allow.
    """
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
    p11 = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    if p11 < max(0.0, p1 + p2 - 1.0) - 1e-12 or p11 > min(p1, p2) + 1e-12:
        raise ValueError(f"rho = {rho!r} is impossible for margins p1 = {p1!r}, p2 = {p2!r}")
    return float(p1 + p2 - 2.0 * p11)


def paired_n(
    p1: float,
    p2: float,
    rho: float | None = None,
    discordance: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    variance: str = "separate",
    z_alpha: float | None = None,
    z_beta: float | None = None,
) -> SampleSize:
    """Pairs needed for a paired comparison of two rates, by ``rho`` or by discordance.

    Give exactly one of ``rho`` and ``discordance``.

    * ``rho``: normal approximation on the paired difference,
      ``n = (z_a + z_b)^2 Var / d^2`` with ``Var = p1 q1 + p2 q2 - 2 rho sqrt(p1 q1 p2 q2)``
      (``variance="separate"``) or ``2 pbar qbar (1 - rho)`` (``variance="pbar"``, the
      form of document 001's worked example).
    * ``discordance`` (``psi = P(A and B disagree)``): Connor's (1987) [1]_ McNemar
      sample size ``n = [z_a sqrt(psi) + z_b sqrt(psi - d^2)]^2 / d^2``.

    Returns
    -------
    SampleSize
        ``n`` is the number of pairs (= trials per policy).
    """
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    if p1 == p2:
        raise ValueError(f"p1 and p2 must differ, got p1 = p2 = {p1!r}")
    if (rho is None) == (discordance is None):
        raise ValueError(f"give exactly one of rho and discordance, got {rho!r}, {discordance!r}")
    za, zb = _z(alpha, power)
    za = za if z_alpha is None else check_z(z_alpha, "z_alpha")
    zb = zb if z_beta is None else check_z(z_beta, "z_beta", positive=False)
    d = abs(p1 - p2)
    if rho is not None:
        if variance not in PAIRED_VARIANCES:
            raise ValueError(f"variance must be one of {PAIRED_VARIANCES}, got {variance!r}")
        if not -1.0 <= rho <= 1.0:
            raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
        if variance == "separate":
            v1, v2 = p1 * (1 - p1), p2 * (1 - p2)
            var = v1 + v2 - 2.0 * rho * math.sqrt(v1 * v2)
        else:
            pbar = 0.5 * (p1 + p2)
            var = 2.0 * pbar * (1.0 - pbar) * (1.0 - rho)
        if var <= 0:
            raise ValueError(f"rho = {rho!r} leaves no variance in the paired difference")
        n = (za + zb) ** 2 * var / d**2
        return SampleSize(_ceil(n), float(n), f"paired normal, rho ({variance})")
    psi = float(discordance)
    lo_psi = d
    hi_psi = min(p1 + p2, 2.0 - p1 - p2)
    if not lo_psi < psi <= hi_psi + 1e-12:
        raise ValueError(
            f"discordance must be in ({lo_psi:g}, {hi_psi:g}] for p1 = {p1!r}, p2 = {p2!r}, "
            f"got {discordance!r}"
        )
    n = (za * math.sqrt(psi) + zb * math.sqrt(psi - d * d)) ** 2 / d**2
    return SampleSize(_ceil(n), float(n), "paired McNemar, discordance (Connor 1987)")


def _binom_ppf(q: float, n: np.ndarray, p: float) -> np.ndarray:
    """``scipy.stats.binom.ppf(q, n, p)`` for 0 < q < 1, n >= 1: the SciPy ufunc that it
    calls, without loading scipy.stats (about a second of the command's start-up)."""
    ufunc = getattr(special._ufuncs, "_binom_ppf", None)  # private; present in SciPy 1.17
    if ufunc is None or not 0.0 < q < 1.0:
        from scipy.stats import binom  # heavy: only where the ufunc is missing

        return binom.ppf(q, n, p)
    return ufunc(q, n, p) + 0.0


def mcnemar_critical_values(d_max: int, alpha: float) -> np.ndarray:
    """Critical values ``c_D`` of the two-sided exact McNemar test for D = 0..d_max.

    ``c_D`` is the largest m with ``2 P(X <= m) < alpha`` for ``X ~ Bin(D, 1/2)`` under the
    tie rule of :func:`evalsim.stats.decision.rejects` (-1 when no m qualifies, as for small
    D): the test rejects when ``min(b, D - b) <= c_D``. O(d_max): SciPy's binomial quantile
    gives a start within one of ``c_D`` and the project's exact tails settle it among the
    candidates ``start - 2 .. start + 1``.
    """
    from evalsim.stats.proportion.binomial import binom_cdf

    dd = np.arange(d_max + 1, dtype=np.int64)
    half = dd // 2
    start = np.nan_to_num(_binom_ppf(alpha / 2.0, np.maximum(dd, 1), 0.5), nan=0.0)
    start = start.astype(np.int64)
    crit = np.full(d_max + 1, -1, dtype=np.int64)
    for shift in (-2, -1, 0, 1):
        m = np.minimum(start + shift, half)
        ok = (m >= 0) & (dd >= 1)
        cdf = np.zeros(d_max + 1)
        if ok.any():
            cdf[ok] = binom_cdf(m[ok], dd[ok], 0.5)
        hit = ok & rejects(2.0 * cdf, alpha)
        crit = np.where(hit, np.maximum(crit, m), crit)
    return crit


def _mcnemar_reject_given_d(d_max: int, theta: float, alpha: float) -> np.ndarray:
    """``P(exact McNemar rejects | D discordant pairs)`` for D = 0..d_max, b ~ Bin(D, theta).

    The two-sided exact test rejects when ``min(b, D - b) <= c_D``
    (:func:`mcnemar_critical_values`): ``P(b <= c_D) + P(b > D - c_D - 1)``, both tails
    summed directly (no subtraction from 1).
    """
    from evalsim.stats.proportion.binomial import binom_cdf, binom_sf

    crit = mcnemar_critical_values(d_max, alpha)
    out = np.zeros(d_max + 1)
    ok = crit >= 0
    if ok.any():
        dd = np.arange(d_max + 1, dtype=np.int64)[ok]
        c = crit[ok]
        out[ok] = binom_cdf(c, dd, theta) + binom_sf(dd - c - 1, dd, theta)
    return out


def _check_discordant(p10: float, p01: float) -> tuple[float, float]:
    check_probability(p10, "p10")
    check_probability(p01, "p01")
    psi = p10 + p01
    if not 0.0 < psi <= 1.0 + 1e-12:
        raise ValueError(f"p10 + p01 must be in (0, 1], got {psi!r}")
    return min(psi, 1.0), p10 / psi


def mcnemar_power_exact(n_pairs: int, p10: float, p01: float, alpha: float = 0.05) -> float:
    """Exact power of the exact (conditional) McNemar test [2]_ with ``n_pairs`` pairs.

    The number of discordant pairs ``D`` is ``Binomial(n, p10 + p01)``; given ``D``, the
    count ``b`` of A-only successes is ``Binomial(D, p10 / (p10 + p01))``; the test rejects
    when the two-sided exact binomial p-value of ``b`` out of ``D`` at 1/2 is below alpha
    (:func:`evalsim.stats.two_sample.paired.mcnemar_exact`, tie rule of
    :func:`evalsim.stats.decision.rejects`). Power is summed over D exactly, O(n).
    """
    from evalsim.stats.proportion.binomial import binom_pmf

    check_n(n_pairs, "n_pairs")
    n = int(n_pairs)
    check_alpha(alpha)
    psi, theta = _check_discordant(p10, p01)
    g = _mcnemar_reject_given_d(n, theta, alpha)
    pd_ = np.asarray(binom_pmf(np.arange(n + 1), n, psi), dtype=float)
    return float(pd_ @ g)


def mcnemar_mde_exact(
    n_pairs: int, discordance: float, alpha: float = 0.05, power: float = 0.8, tol: float = 1e-6
) -> float:
    """Smallest gap ``|p_A - p_B|`` the exact McNemar test detects with ``power``.

    At a fixed discordance ``psi`` (share of pairs where exactly one policy succeeds) the
    gap ``d`` splits the discordant pairs as ``p10 = (psi + d)/2``, ``p01 = (psi - d)/2``;
    exact power (:func:`mcnemar_power_exact`) rises with ``d``, so ``d`` is found by
    bisection to ``tol`` (the critical values and the law of D are computed once).

    Returns
    -------
    float
        The gap (a fraction; the upper end of the final bracket, so its power reaches the
        target), or nan when even ``d = psi`` (every discordant pair for one policy) misses.
    """
    from evalsim.stats.proportion.binomial import binom_cdf, binom_pmf, binom_sf

    check_n(n_pairs, "n_pairs")
    n = int(n_pairs)
    _z(alpha, power)
    psi = check_probability(discordance, "discordance")
    if not 0.0 < psi:
        raise ValueError(f"discordance must be > 0, got {discordance!r}")
    if not (isinstance(tol, int | float) and 0.0 < tol < 0.1):
        raise ValueError(f"tol must be in (0, 0.1), got {tol!r}")
    crit = mcnemar_critical_values(n, alpha)
    ok = crit >= 0
    dd = np.arange(n + 1, dtype=np.int64)[ok]
    c = crit[ok]
    pd_ = np.asarray(binom_pmf(np.arange(n + 1), n, psi), dtype=float)[ok]

    def pw(d: float) -> float:
        if dd.size == 0:
            return 0.0
        theta = min(max((psi + d) / (2.0 * psi), 0.0), 1.0)
        g = binom_cdf(c, dd, theta) + binom_sf(dd - c - 1, dd, theta)
        return float(pd_ @ g)

    if pw(psi) < power:
        return float("nan")
    lo, hi = 0.0, psi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
    return hi


def mcnemar_n_exact(
    p10: float, p01: float, alpha: float = 0.05, power: float = 0.8, n_max: int = 5000
) -> SampleSize:
    """Smallest number of pairs whose exact McNemar power reaches ``power``.

    Exact power saw-tooths in n (the test is discrete), so a slightly larger n can fall
    back below the target; this returns the first n that reaches it. Raises if no
    ``n <= n_max`` does.
    """
    from evalsim.stats.proportion.binomial import binom_pmf

    _z(alpha, power)
    check_n(n_max, "n_max")
    psi, theta = _check_discordant(p10, p01)
    if p10 == p01:
        raise ValueError(f"p10 and p01 must differ, got p10 = p01 = {p10!r}")
    za, zb = _z(alpha, power)
    d = p10 - p01
    connor = (za * math.sqrt(psi) + zb * math.sqrt(max(psi - d * d, 0.0))) ** 2 / d**2
    # Search up to 3x Connor's normal-theory n first; only a miss pays for the full range.
    for hi in (min(int(n_max), max(50, _ceil(3.0 * connor))), int(n_max)):
        g = _mcnemar_reject_given_d(hi, theta, alpha)
        for n in range(1, hi + 1):
            pd_ = np.asarray(binom_pmf(np.arange(n + 1), n, psi), dtype=float)
            if float(pd_ @ g[: n + 1]) >= power:
                return SampleSize(n, float("nan"), "exact McNemar power")
    raise ValueError(f"no n <= n_max = {n_max!r} reaches power {power!r}")

"""Plain-Python references for the sim + real intervals (no NumPy, no numba).

Written from the formulas: PPI / PPI++ from Angelopoulos et al. (means of the per-trial
values, population standard deviations), the stratified interval from its definition (a
Clopper-Pearson box mapped through p_R = a p_S + b (1 - p_S), intersected with the real-only
Clopper-Pearson interval), and the exact operating characteristics by brute-force
enumeration of every pair table and simulated count with ``math.comb``. Clopper-Pearson
bounds come from SciPy's Beta quantiles (a reference, not evalsim's code).
"""

from __future__ import annotations

import itertools
import math
import statistics

from scipy.stats import beta, norm


def cp(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Clopper-Pearson via scipy.stats.beta.ppf; [0, 1] for n = 0."""
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def ppi(real, twin, sims, alpha, tuned):
    """(lower, upper, lambda) from the raw 0/1 lists, the published formulas."""
    n, big_n = len(real), len(sims)
    lam = 1.0
    if tuned:
        ybar, tbar = statistics.fmean(real), statistics.fmean(twin)
        cov = sum((y - ybar) * (t - tbar) for y, t in zip(real, twin, strict=True)) / n
        var = statistics.variance(list(twin) + list(sims))
        lam = 0.0 if var == 0 else min(max(cov / ((1 + n / big_n) * var), 0.0), 1.0)
    rect = [y - lam * t for y, t in zip(real, twin, strict=True)]
    est = lam * statistics.fmean(sims) + statistics.fmean(rect)
    se = math.sqrt((lam**2) * statistics.pvariance(sims) / big_n + statistics.pvariance(rect) / n)
    z = float(norm.ppf(1 - alpha / 2))
    return est - z * se, est + z * se, lam


def stratified(real, twin, k_sim, n_sim, alpha, real_share, stratum_share, sim_share):
    """The stratified exact interval from its definition (vertices of the box)."""
    n = len(real)
    alpha_r = real_share * alpha
    alpha_c = alpha - alpha_r
    r = cp(sum(real), n, alpha_r)
    y1 = [y for y, t in zip(real, twin, strict=True) if t == 1]
    y0 = [y for y, t in zip(real, twin, strict=True) if t == 0]
    a = cp(sum(y1), len(y1), alpha_c * stratum_share)
    b = cp(sum(y0), len(y0), alpha_c * stratum_share)
    s = cp(k_sim, n_sim, alpha_c * sim_share)
    vals = [aa * ss + bb * (1 - ss) for aa in a for bb in b for ss in s]
    lo, hi = max(min(vals), r[0]), min(max(vals), r[1])
    return (lo, hi) if lo <= hi else r


def joint(p_real, p_sim, rho):
    sd = math.sqrt(p_real * (1 - p_real) * p_sim * (1 - p_sim))
    p11 = p_real * p_sim + rho * sd
    return p11, p_real - p11, p_sim - p11, 1 - p_real - p_sim + p11


def exact_oc(interval_of, p_real, p_sim, rho, n, n_sim):
    """Coverage and expected width of ``interval_of(n11, n10, n01, n00, k_sim)`` by
    enumerating every multinomial table and every simulated count."""
    p = joint(p_real, p_sim, rho)
    cover = width = 0.0
    for n11, n10, n01 in itertools.product(range(n + 1), repeat=3):
        n00 = n - n11 - n10 - n01
        if n00 < 0:
            continue
        coef = math.factorial(n) // (
            math.factorial(n11) * math.factorial(n10) * math.factorial(n01) * math.factorial(n00)
        )
        pt = coef * p[0] ** n11 * p[1] ** n10 * p[2] ** n01 * p[3] ** n00
        for ks in range(n_sim + 1):
            q = pt * math.comb(n_sim, ks) * p_sim**ks * (1 - p_sim) ** (n_sim - ks)
            lo, hi = interval_of(n11, n10, n01, n00, ks)
            cover += q * (lo <= p_real <= hi)
            width += q * (hi - lo)
    return cover, width


def lists(n11, n10, n01, n00):
    """Aligned real/twin 0/1 lists for a pair table."""
    real = [1] * n11 + [1] * n10 + [0] * n01 + [0] * n00
    twin = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
    return real, twin

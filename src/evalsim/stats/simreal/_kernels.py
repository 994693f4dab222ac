"""Numba kernels behind :mod:`evalsim.stats.simreal.methods` (no validation, no I/O).

A real/twin pair sample is enumerated by its table (n11, n10, n01, n00) written as
``n1`` (twins that succeeded), ``k1`` (real successes among them) and ``k0`` (real successes
among the ``n - n1`` failed twins): n11 = k1, n01 = n1 - k1, n10 = k0, n00 = n - n1 - k0.
The simulated trials contribute ``ks`` successes of ``N``.

Method indices (the order of ``simreal.METHODS``): 0 Clopper-Pearson, 1 Wilson (real
only), 2 PPI, 3 PPI++, 4 the finite-sample stratified interval, 5 the finite-sample
discordant interval.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

N_METHODS = 6


@njit(cache=True)
def ppi_bounds(n11, n10, n01, n00, ks, big_n, z, tuned):
    """(lower, upper, lambda) of PPI (``tuned`` False, lambda = 1) or PPI++ (``tuned`` True).

    The formulas of ``ppi_py.ppi_mean_ci`` (0.2.3) for binary outcomes: population (ddof 0)
    standard deviations, lambda = cov_n(Y, Yhat) / ((1 + n/N) var_{n+N-1}(Yhat pooled))
    clipped to [0, 1]; a pooled variance of 0 gives lambda = 0 (ppi_py returns NaN there).
    """
    n = n11 + n10 + n01 + n00
    nf = float(n)
    nn = float(big_n)
    ybar = (n11 + n10) / nf
    tbar = (n11 + n01) / nf
    ps = ks / nn
    lam = 1.0
    if tuned:
        cov = n11 / nf - ybar * tbar
        m = (n11 + n01 + ks) / (nf + nn)
        var1 = (nf + nn) / (nf + nn - 1.0) * m * (1.0 - m)
        if var1 > 0.0:
            lam = cov / ((1.0 + nf / nn) * var1)
            if lam < 0.0:
                lam = 0.0
            elif lam > 1.0:
                lam = 1.0
        else:
            lam = 0.0
    mu = ybar - lam * tbar
    ex2 = (n11 * (1.0 - lam) ** 2 + n10 + n01 * lam * lam) / nf
    var_r = ex2 - mu * mu
    if var_r < 0.0:
        var_r = 0.0
    var_i = lam * lam * ps * (1.0 - ps) / nn
    est = lam * ps + mu
    half = z * math.sqrt(var_i + var_r / nf)
    return est - half, est + half, lam


@njit(cache=True)
def stratified_bounds(a_lo, a_hi, b_lo, b_hi, s_lo, s_hi):
    """Box bounds of p_R = a p_S + b (1 - p_S) over a in [a_lo, a_hi], b in [b_lo, b_hi],
    p_S in [s_lo, s_hi] (linear in each coordinate: the extremes are at vertices)."""
    if a_lo >= b_lo:
        lo = b_lo + (a_lo - b_lo) * s_lo
    else:
        lo = b_lo + (a_lo - b_lo) * s_hi
    if a_hi >= b_hi:
        hi = b_hi + (a_hi - b_hi) * s_hi
    else:
        hi = b_hi + (a_hi - b_hi) * s_lo
    return lo, hi


@njit(cache=True)
def intersect_or_real(lo, hi, r_lo, r_hi):
    """[lo, hi] intersected with the real-only [r_lo, r_hi]; the latter if they are disjoint."""
    a = lo if lo > r_lo else r_lo
    b = hi if hi < r_hi else r_hi
    if a > b:
        return r_lo, r_hi
    return a, b


@njit(cache=True)
def discordant_upper(a_lv, b_lv):
    """Certified upper bounds of s + b over the combined confidence region, one per
    (simulated row, pair count).

    ``a_lv[i, j]`` is the simulated rate s at which the simulated p-value of row ``i`` equals
    the grid level ``u_j`` (u decreasing from 1, so s increasing in j); ``b_lv[y, j]`` the
    rate b at which the pair p-value of count ``y`` equals the combination's threshold at
    ``u_j``. On the segment s in [a_lv[i, j], a_lv[i, j + 1]] the threshold is at least the
    one at u_j, so b <= b_lv[y, j]: the supremum is at most
    ``max_j a_lv[i, j + 1] + b_lv[y, j]`` (capped at 1). Returns U[i, y].
    """
    rows = a_lv.shape[0]
    m = b_lv.shape[0]
    nj = a_lv.shape[1]
    out = np.empty((rows, m))
    for i in range(rows):
        for y in range(m):
            best = 0.0
            for j in range(nj - 1):
                v = a_lv[i, j + 1] + b_lv[y, j]
                if v > best:
                    best = v
            out[i, y] = best if best < 1.0 else 1.0
    return out


@njit(cache=True)
def operating_characteristics(n, big_n, p_r, pmfs, ks_window, real, stratum, sim, dis, z, prune):
    """Exact coverage and expected width of the six methods at one joint law.

    Parameters
    ----------
    n, big_n : int
        Real and simulated trials.
    p_r : float
        The true real success rate.
    pmfs : tuple of arrays
        ``(pmf_n1, pmf_a, pmf_b, pmf_s)``: ``pmf_n1[n1]`` = P(n1 twins succeed);
        ``pmf_a[m, k]`` = Binomial(m, a) pmf at k (real given twin success), ``pmf_b[m, k]``
        likewise for a failed twin; ``pmf_s[ks]`` the simulated binomial, summed over
        ``ks_lo..ks_hi`` only (the caller accounts for the tails).
    ks_window : tuple of int
        ``(ks_lo, ks_hi)``.
    real : tuple of (lo, hi) pairs of arrays
        The bounds indexed by the real count: Clopper-Pearson, Wilson, the stratified
        method's real-only interval, the discordant method's real-only interval.
    stratum : (lo, hi)
        The stratified tables ``lo[m, k]`` by stratum size and successes (the same table for
        both strata).
    sim : (lo, hi)
        The stratified method's simulated bounds by the simulated count.
    dis : (lo, hi)
        The discordant interval's bounds ``lo[ks - ks_lo, n01]`` and ``hi[ks - ks_lo, n10]``,
        by the simulated count (from ``ks_lo``) and the discordant count.
    z : float
        The normal quantile of the prediction-powered intervals.
    prune : float
        Outcomes whose table probability is below ``prune`` are skipped.

    Returns
    -------
    coverage, width : float64[6]
        Sums over the enumerated outcomes, so the true coverage lies in
        [coverage, coverage + skipped_mass].
    skipped_mass : float
    """
    pmf_n1, pmf_a, pmf_b, pmf_s = pmfs
    ks_lo, ks_hi = ks_window
    (cp_lo, cp_hi), (wil_lo, wil_hi), (share_lo, share_hi), (dshare_lo, dshare_hi) = real
    ca_lo, ca_hi = stratum
    s_lo, s_hi = sim
    dis_lo, dis_hi = dis
    cov = np.zeros(N_METHODS)
    wid = np.zeros(N_METHODS)
    skipped = 0.0
    for n1 in range(n + 1):
        p1 = pmf_n1[n1]
        n0 = n - n1
        if p1 < prune:
            skipped += p1
            continue
        for k1 in range(n1 + 1):
            p2 = p1 * pmf_a[n1, k1]
            if p2 < prune:
                skipped += p2
                continue
            for k0 in range(n0 + 1):
                pt = p2 * pmf_b[n0, k0]
                if pt < prune:
                    skipped += pt
                    continue
                kr = k1 + k0
                # real-only: no simulated count involved
                if cp_lo[kr] <= p_r <= cp_hi[kr]:
                    cov[0] += pt
                wid[0] += pt * (cp_hi[kr] - cp_lo[kr])
                if wil_lo[kr] <= p_r <= wil_hi[kr]:
                    cov[1] += pt
                wid[1] += pt * (wil_hi[kr] - wil_lo[kr])
                n11 = k1
                n01 = n1 - k1
                n10 = k0
                n00 = n0 - k0
                c2 = 0.0
                w2 = 0.0
                c3 = 0.0
                w3 = 0.0
                c4 = 0.0
                w4 = 0.0
                c5 = 0.0
                w5 = 0.0
                for ks in range(ks_lo, ks_hi + 1):
                    q = pmf_s[ks]
                    lo, hi, _ = ppi_bounds(n11, n10, n01, n00, ks, big_n, z, False)
                    if lo <= p_r <= hi:
                        c2 += q
                    w2 += q * (hi - lo)
                    lo, hi, _ = ppi_bounds(n11, n10, n01, n00, ks, big_n, z, True)
                    if lo <= p_r <= hi:
                        c3 += q
                    w3 += q * (hi - lo)
                    lo, hi = stratified_bounds(
                        ca_lo[n1, k1],
                        ca_hi[n1, k1],
                        ca_lo[n0, k0],
                        ca_hi[n0, k0],
                        s_lo[ks],
                        s_hi[ks],
                    )
                    lo, hi = intersect_or_real(lo, hi, share_lo[kr], share_hi[kr])
                    if lo <= p_r <= hi:
                        c4 += q
                    w4 += q * (hi - lo)
                    i = ks - ks_lo
                    lo, hi = intersect_or_real(
                        dis_lo[i, n01], dis_hi[i, n10], dshare_lo[kr], dshare_hi[kr]
                    )
                    if lo <= p_r <= hi:
                        c5 += q
                    w5 += q * (hi - lo)
                cov[2] += pt * c2
                wid[2] += pt * w2
                cov[3] += pt * c3
                wid[3] += pt * w3
                cov[4] += pt * c4
                wid[4] += pt * w4
                cov[5] += pt * c5
                wid[5] += pt * w5
    return cov, wid, skipped

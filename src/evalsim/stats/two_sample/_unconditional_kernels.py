"""Numba kernels of the exact unconditional tests' statistics and rejection regions (Boschloo,
Barnard, Berger-Boos).

Kernels only: int64 counts, float64 values, no validation
(:mod:`evalsim.stats.two_sample.unconditional` validates). Tables are flattened as
``t = x1 * (n2 + 1) + x2``.

Here: per margin, the hypergeometric pmf and both one-sided Fisher p-values, Boschloo's
statistic (:func:`hyper_all`); Barnard's pooled score statistic (:func:`barnard_all`,
:func:`barnard_z`); a table's rejection region as the coefficients ``beta`` of its tail
polynomial (:func:`boschloo_betas`, :func:`barnard_beta`, :func:`region_beta`). The supremum
of the tail polynomial over the nuisance parameter is
:mod:`evalsim.stats.two_sample._nuisance_sup_kernels`, with the bounds of
:mod:`evalsim.stats.two_sample._tail_polynomial_kernels`.

The tail polynomial. For a rejection region ``R`` (a set of tables) and a common success rate
``pi`` of both arms, ``P_pi(R) = sum_{(x1, x2) in R} b(x1; n1, pi) b(x2; n2, pi)``. Grouping
tables by their margin ``k = x1 + x2`` gives ``P_pi(R) = sum_k beta[k] b(k; N, pi)`` with
``N = n1 + n2`` and ``beta[k]`` the hypergeometric probability of ``R`` given the margin ``k``,
a polynomial in Bernstein form whose coefficients lie in [0, 1] (as in
:func:`evalsim.stats.sequential._kernels.unpaired_null_bernstein`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.two_sample._fisher_kernels import margin_scratch, margin_weights

_LEVEL_BITS = 500


@njit(cache=True)
def _add_level(s, sl, w, lev):
    """(s, sl) + (w, lev) for values ``s * 2**(-500 sl)``; keeps the larger level scale."""
    if lev < sl:
        s = math.ldexp(s, int(-_LEVEL_BITS * (sl - lev))) + w
        sl = lev
    else:
        s += math.ldexp(w, int(-_LEVEL_BITS * (lev - sl)))
    return s, sl


@njit(cache=True)
def hyper_all(n1, n2, hyp, fisher_less, fisher_greater):
    """Per table: hypergeometric pmf given its margin and both one-sided Fisher p-values.

    ``fisher_less[t] = P(X <= x1 | k)``, ``fisher_greater[t] = P(X >= x1 | k)`` with ``X`` the
    arm-1 count of a table of margin ``k`` (``scipy.stats.hypergeom`` cdf and sf), accurate to
    a few ulp down to the subnormal range (weights carry a power-of-two level).
    """
    w, lev = margin_scratch(n1, n2)
    m2 = n2 + 1
    for kk in range(n1 + n2 + 1):
        lo, hi, mode = margin_weights(n1, n2, kk, w, lev)
        m = hi - lo + 1
        total = 0.0
        tl = 0
        for i in range(m):
            total, tl = _add_level(total, tl, w[i], lev[i])
        # total has level 0 (the mode's weight is 1)
        for i in range(m):
            hyp[(lo + i) * m2 + kk - lo - i] = math.ldexp(w[i] / total, int(-_LEVEL_BITS * lev[i]))
        s = 0.0
        sl = lev[0]
        for i in range(m):
            s, sl = _add_level(s, sl, w[i], lev[i])
            t = (lo + i) * m2 + kk - lo - i
            fisher_less[t] = min(math.ldexp(s / total, int(-_LEVEL_BITS * sl)), 1.0)
        s = 0.0
        sl = lev[m - 1]
        for i in range(m - 1, -1, -1):
            s, sl = _add_level(s, sl, w[i], lev[i])
            t = (lo + i) * m2 + kk - lo - i
            fisher_greater[t] = min(math.ldexp(s / total, int(-_LEVEL_BITS * sl)), 1.0)


@njit(cache=True)
def _margin_fisher(n1, n2, kk, w, lev, hyp, f_less, f_greater):
    """One margin of :func:`hyper_all`: ``hyp``, ``f_less``, ``f_greater`` at ``x1 - lo``
    (the same float values). Returns ``(lo, hi)``."""
    lo, hi, mode = margin_weights(n1, n2, kk, w, lev)
    m = hi - lo + 1
    if lev[0] == 0 and lev[m - 1] == 0:
        # no weight below 2**-500 (levels grow away from the mode): plain sums, same values
        total = 0.0
        for i in range(m):
            total += w[i]
        s = 0.0
        for i in range(m):
            hyp[i] = w[i] / total
            s += w[i]
            f_less[i] = min(s / total, 1.0)
        s = 0.0
        for i in range(m - 1, -1, -1):
            s += w[i]
            f_greater[i] = min(s / total, 1.0)
        return lo, hi
    total = 0.0
    tl = 0
    for i in range(m):
        total, tl = _add_level(total, tl, w[i], lev[i])
    for i in range(m):
        hyp[i] = math.ldexp(w[i] / total, int(-_LEVEL_BITS * lev[i]))
    s = 0.0
    sl = lev[0]
    for i in range(m):
        s, sl = _add_level(s, sl, w[i], lev[i])
        f_less[i] = min(math.ldexp(s / total, int(-_LEVEL_BITS * sl)), 1.0)
    s = 0.0
    sl = lev[m - 1]
    for i in range(m - 1, -1, -1):
        s, sl = _add_level(s, sl, w[i], lev[i])
        f_greater[i] = min(math.ldexp(s / total, int(-_LEVEL_BITS * sl)), 1.0)
    return lo, hi


@njit(cache=True)
def boschloo_betas(n1, n2, k1, k2, rtol_tie, beta_less, beta_greater):
    """``beta`` of Boschloo's two one-sided regions of the table (k1, k2), in one pass.

    Equals :func:`region_beta` on :func:`hyper_all`'s arrays bit for bit (same values, same
    order of summation), without the arrays of every table. Returns the observed one-sided
    Fisher p-values ``(less, greater)``.
    """
    w, lev = margin_scratch(n1, n2)
    hyp = np.empty_like(w)
    fl = np.empty_like(w)
    fg = np.empty_like(w)
    lo, _ = _margin_fisher(n1, n2, k1 + k2, w, lev, hyp, fl, fg)
    obs_l = fl[k1 - lo]
    obs_g = fg[k1 - lo]
    thr_l = obs_l * (1.0 + rtol_tie)
    thr_g = obs_g * (1.0 + rtol_tie)
    for kk in range(n1 + n2 + 1):
        lo, hi = _margin_fisher(n1, n2, kk, w, lev, hyp, fl, fg)
        bl = 0.0
        bg = 0.0
        for i in range(hi - lo + 1):
            if fl[i] <= thr_l:
                bl += hyp[i]
            if fg[i] <= thr_g:
                bg += hyp[i]
        beta_less[kk] = min(bl, 1.0)
        beta_greater[kk] = min(bg, 1.0)
    return obs_l, obs_g


@njit(cache=True)
def _margin_total(n1, n2, kk, w, lev):
    """One margin's weights (:func:`margin_weights`) and their total as :func:`hyper_all`
    sums it. Returns ``(lo, hi, total)``; the pmf at ``x1`` is :func:`_hyp_at`."""
    lo, hi, mode = margin_weights(n1, n2, kk, w, lev)
    m = hi - lo + 1
    total = 0.0
    tl = 0
    if lev[0] == 0 and lev[m - 1] == 0:
        for i in range(m):
            total += w[i]
        return lo, hi, total
    for i in range(m):
        total, tl = _add_level(total, tl, w[i], lev[i])
    return lo, hi, total


@njit(cache=True)
def _hyp_at(w, lev, total, i):
    """The pmf at index ``i`` of a margin (:func:`hyper_all`'s value)."""
    if lev[i] == 0:
        return w[i] / total
    return math.ldexp(w[i] / total, int(-_LEVEL_BITS * lev[i]))


@njit(cache=True)
def tie_threshold(score, rtol):
    """``score + rtol |score|``: a table whose score is at most this ties or beats ``score``.

    For ``score >= 0`` it is ``score * (1 + rtol)``, bit for bit (SciPy's Boschloo rule)."""
    if score >= 0.0:
        return score * (1.0 + rtol)
    return score * (1.0 - rtol)


@njit(cache=True)
def barnard_z(x1, n1, x2, n2):
    """Pooled score statistic of one table, the float operations of :func:`barnard_all`."""
    d = x1 * n2 - x2 * n1
    if d == 0:
        return 0.0
    kk = x1 + x2
    return d / math.sqrt(float(kk * (n1 + n2 - kk)) * float(n1 * n2) / (n1 + n2))


@njit(cache=True)
def barnard_beta(n1, n2, k1, k2, side, rtol_tie, beta):
    """``beta`` of Barnard's region of the table (k1, k2): ``side`` 0 is ``z <= z_obs``, 1 is
    ``z >= z_obs``, 2 is ``|z| >= |z_obs|``, each with the relative tie tolerance
    ``rtol_tie`` (:func:`tie_threshold`).

    Within a margin ``z`` is non-decreasing in ``x1`` in floating point too (the numerator
    ``x1 n2 - (k - x1) n1`` is an exact integer over one common denominator), so the region
    there is a prefix, a suffix, or both; only their ends' ``z`` are computed. Equals
    :func:`region_beta` on :func:`barnard_all` and :func:`hyper_all` with the threshold
    :func:`tie_threshold` bit for bit. Returns ``z_obs``.
    """
    w, lev = margin_scratch(n1, n2)
    z0 = barnard_z(k1, n1, k2, n2)
    thr = tie_threshold(-abs(z0) if side == 2 else (z0 if side == 0 else -z0), rtol_tie)
    for kk in range(n1 + n2 + 1):
        lo, hi, total = _margin_total(n1, n2, kk, w, lev)
        # prefix: x1 = lo..pe-1; suffix: x1 = ss..hi
        pe = lo
        ss = hi + 1
        if side == 0 or side == 2:
            while pe <= hi:
                z = barnard_z(pe, n1, kk - pe, n2)
                sc = z if side == 0 else -abs(z)
                if sc > thr:
                    break
                pe += 1
        if side == 1 or side == 2:
            while ss - 1 >= pe:
                z = barnard_z(ss - 1, n1, kk - ss + 1, n2)
                sc = -z if side == 1 else -abs(z)
                if sc > thr:
                    break
                ss -= 1
        b = 0.0
        for x1 in range(lo, pe):
            b += _hyp_at(w, lev, total, x1 - lo)
        for x1 in range(ss, hi + 1):
            b += _hyp_at(w, lev, total, x1 - lo)
        beta[kk] = min(b, 1.0)
    return z0


@njit(cache=True)
def barnard_all(n1, n2, out):
    """Pooled score statistic of every table, with SciPy's NaN rule.

    ``z = (x1/n1 - x2/n2) / sqrt(p (1 - p) (1/n1 + 1/n2))``, ``p = (x1 + x2) / (n1 + n2)``, 0
    where ``x1/n1 == x2/n2`` (``scipy.stats.barnard_exact``, ``pooled=True``), evaluated as
    ``(x1 n2 - x2 n1) / sqrt(k (N - k) n1 n2 / N)``: the numerator is an exact integer, so
    ``z`` is within a few ulp of its exact value whatever n (SciPy's difference of two
    rounded rates loses up to ``log10(n1 n2)`` digits), and tables tied in exact arithmetic
    differ by far less than :data:`evalsim.stats.two_sample.unconditional.BARNARD_TIE_RTOL`.
    """
    for x1 in range(n1 + 1):
        for x2 in range(n2 + 1):
            out[x1 * (n2 + 1) + x2] = barnard_z(x1, n1, x2, n2)


@njit(cache=True)
def region_beta(n1, n2, score, thr, hyp, beta):
    """``beta[k]`` = hypergeometric probability of ``{t: score[t] <= thr}`` given margin k."""
    beta[:] = 0.0
    m2 = n2 + 1
    for x1 in range(n1 + 1):
        for x2 in range(m2):
            t = x1 * m2 + x2
            if score[t] <= thr:
                beta[x1 + x2] += hyp[t]
    for k in range(beta.shape[0]):
        if beta[k] > 1.0:
            beta[k] = 1.0

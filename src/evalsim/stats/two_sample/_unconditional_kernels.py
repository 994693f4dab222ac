"""Numba kernels of the exact unconditional tests (Boschloo, Barnard, Berger-Boos).

Kernels only: int64 counts, float64 values, no validation
(:mod:`evalsim.stats.two_sample.unconditional`
validates). Tables are flattened as ``t = x1 * (n2 + 1) + x2``.

The tail polynomial. For a rejection region ``R`` (a set of tables) and a common success rate
``pi`` of both arms, ``P_pi(R) = sum_{(x1, x2) in R} b(x1; n1, pi) b(x2; n2, pi)``. Grouping
tables by their margin ``k = x1 + x2`` gives ``P_pi(R) = sum_k beta[k] b(k; N, pi)`` with
``N = n1 + n2`` and ``beta[k]`` the hypergeometric probability of ``R`` given the margin ``k``,
a polynomial in Bernstein form whose coefficients lie in [0, 1] (as in
:func:`evalsim.stats.sequential._kernels.unpaired_null_bernstein`).

Certified supremum. On an interval ``[a, b]`` a function whose second derivative is bounded
below by ``-M`` lies under its chord plus ``M (pi - a)(b - pi) / 2``, so its maximum there is at
most ``max(f(a), f(b)) + M (b - a)^2 / 8``. For the tail polynomial
``f''(pi) = N (N - 1) sum_j d2[j] b(j; N - 2, pi)`` with ``d2`` the second differences of
``beta``, so ``M = N (N - 1) sum_j max(-d2[j], 0) max_{pi in [a, b]} b(j; N - 2, pi)``, and the
binomial pmf's maximum on ``[a, b]`` is at ``clip(j / (N - 2), a, b)``. Branch and bound
splits every interval whose bound exceeds the best value found by more than the tolerance;
what is left bounds the supremum from above, and the best value found is attained.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_logpmf, binom_pmf_vector
from evalsim.stats.two_sample._fisher_kernels import margin_weights

_LEVEL_BITS = 500
_EPS = 2.0**-53


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
    size = min(n1, n2) + 1
    w = np.empty(size, dtype=np.float64)
    lev = np.empty(size, dtype=np.int64)
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
    size = min(n1, n2) + 1
    w = np.empty(size, dtype=np.float64)
    lev = np.empty(size, dtype=np.int64)
    hyp = np.empty(size, dtype=np.float64)
    fl = np.empty(size, dtype=np.float64)
    fg = np.empty(size, dtype=np.float64)
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
def barnard_z(x1, n1, x2, n2):
    """Pooled score statistic of one table, the float operations of :func:`barnard_all`."""
    p1 = x1 / n1
    p2 = x2 / n2
    if p1 == p2:
        return 0.0
    p = (x1 + x2) / (n1 + n2)
    return (p1 - p2) / math.sqrt(p * (1.0 - p) * (1.0 / n1 + 1.0 / n2))


@njit(cache=True)
def barnard_beta(n1, n2, k1, k2, side, beta):
    """``beta`` of Barnard's region of the table (k1, k2): ``side`` 0 is ``z <= z_obs``, 1 is
    ``z >= z_obs``, 2 is ``|z| >= |z_obs|``.

    Within a margin ``z`` is non-decreasing in ``x1`` in floating point too (``x1 / n1`` up,
    ``(k - x1) / n2`` down, a rounded difference of them, one common denominator), so the
    region there is a prefix, a suffix, or both; only their ends' ``z`` are computed. Equals
    :func:`region_beta` on :func:`barnard_all` and :func:`hyper_all` bit for bit. Returns
    ``z_obs``.
    """
    size = min(n1, n2) + 1
    w = np.empty(size, dtype=np.float64)
    lev = np.empty(size, dtype=np.int64)
    z0 = barnard_z(k1, n1, k2, n2)
    thr = -abs(z0) if side == 2 else (z0 if side == 0 else -z0)
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
    """Pooled score statistic of every table, with SciPy's float operations and NaN rule.

    ``(x1/n1 - x2/n2) / sqrt(p (1 - p) (1/n1 + 1/n2))``, ``p = (x1 + x2) / (n1 + n2)``, and 0
    where ``x1/n1 == x2/n2`` (``scipy.stats.barnard_exact``, ``pooled=True``).
    """
    nn = n1 + n2
    inv = 1.0 / n1 + 1.0 / n2
    for x1 in range(n1 + 1):
        p1 = x1 / n1
        for x2 in range(n2 + 1):
            p2 = x2 / n2
            t = x1 * (n2 + 1) + x2
            if p1 == p2:
                out[t] = 0.0
            else:
                p = (x1 + x2) / nn
                out[t] = (p1 - p2) / math.sqrt(p * (1.0 - p) * inv)


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


@njit(cache=True)
def binom_ratios(nn):
    """Ratios of the binomial pmf's recurrence: ``up[k] = (nn - k) / (k + 1)`` and
    ``dn[k] = k / (nn - k + 1)``."""
    up = np.empty(nn + 1, dtype=np.float64)
    dn = np.empty(nn + 1, dtype=np.float64)
    for k in range(nn + 1):
        up[k] = (nn - k) / (k + 1.0)
        dn[k] = k / (nn - k + 1.0)
    return up, dn


@njit(cache=True)
def binom_row_r(nn, pi, up, dn, out):
    """``out[k] = b(k; nn, pi)`` for k = 0..nn, by the ratio recurrence from the mode, with
    the ratios of :func:`binom_ratios` (one multiplication per entry on the chain)."""
    if pi <= 0.0:
        out[: nn + 1] = 0.0
        out[0] = 1.0
        return
    if pi >= 1.0:
        out[: nn + 1] = 0.0
        out[nn] = 1.0
        return
    mode = min(int((nn + 1) * pi), nn)
    out[mode] = math.exp(binom_logpmf(mode, nn, pi))
    r = pi / (1.0 - pi)
    ri = (1.0 - pi) / pi
    for k in range(mode, nn):
        out[k + 1] = out[k] * (up[k] * r)
    for k in range(mode, 0, -1):
        out[k - 1] = out[k] * (dn[k] * ri)


@njit(cache=True)
def _tail_at(beta, klo, khi, pi, up, dn, row):
    """f(pi) of the tail polynomial; fills ``row = b(.; N, pi)`` (``up``, ``dn``:
    :func:`binom_ratios`)."""
    nn = beta.shape[0] - 1
    binom_row_r(nn, pi, up, dn, row)
    s = 0.0
    for k in range(klo, khi + 1):
        s += beta[k] * row[k]
    return s


@njit(cache=True)
def _tail_d(beta, klo, khi, pi, up, dn, row):
    """f(pi), f'(pi), f''(pi) of the tail polynomial (0 < pi < 1)."""
    nn = beta.shape[0] - 1
    binom_row_r(nn, pi, up, dn, row)
    q = 1.0 - pi
    ipq = 1.0 / (pi * q)
    ip2 = 1.0 / (pi * pi)
    iq2 = 1.0 / (q * q)
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    for k in range(klo, khi + 1):
        v = beta[k] * row[k]
        u = (k - nn * pi) * ipq
        f0 += v
        f1 += v * u
        f2 += v * (u * u - k * ip2 - (nn - k) * iq2)
    return f0, f1, f2


@njit(cache=True)
def _polish(beta, klo, khi, a, b, x0, up, dn, row, x_seen):
    """Newton on f' = 0 inside [a, b] from x0, kept in a shrinking bracket; returns (x, f(x)).

    Stops once a step or the bracket is below 1e-10 relative (the value is then within
    about 1e-20 relative of the local maximum's), or when a step lands within 1e-8 relative
    of ``x_seen``, a local maximum polished already (< 0: none): Newton would end there.
    """
    x = min(max(x0, a), b)
    fx, d1, d2 = _tail_d(beta, klo, khi, x, up, dn, row)
    best_x = x
    best_f = fx
    for _ in range(60):
        if d1 > 0.0:
            a = x
        else:
            b = x
        if d2 < 0.0:
            xn = x - d1 / d2
        else:
            xn = 0.5 * (a + b)
        if not (a < xn < b):
            xn = 0.5 * (a + b)
        if xn == x or abs(xn - x_seen) <= 1e-8 * x_seen:
            break
        small = abs(xn - x) <= 1e-10 * x or b - a <= 1e-10 * x
        x = xn
        fx, d1, d2 = _tail_d(beta, klo, khi, x, up, dn, row)
        if fx > best_f:
            best_f = fx
            best_x = x
        if small:
            break
    return best_x, best_f


@njit(cache=True)
def _lower_rows(row, nn, x, cf, jlo, jhi, out):
    """``out[j] = b(j; nn - 2, x)`` on ``jlo..jhi`` from ``row = b(.; nn, x)``.

    ``b(j; nn - 2, x) = b(j + 1; nn, x) (j + 1)(nn - 1 - j) / (nn (nn - 1) x (1 - x))``,
    ``cf[j] = (j + 1)(nn - 1 - j)``.
    """
    mdeg = nn - 2
    if 0.0 < x < 1.0:
        g = 1.0 / (nn * (nn - 1.0) * (x * (1.0 - x)))
        for j in range(jlo, jhi + 1):
            out[j] = row[j + 1] * cf[j] * g
    else:
        for j in range(jlo, jhi + 1):
            out[j] = 0.0
        if x <= 0.0 and jlo == 0:
            out[0] = 1.0
        if x >= 1.0 and jhi == mdeg:
            out[mdeg] = 1.0


@njit(cache=True)
def _pmf_max(j, m, c, a, b, ra, rb, peak):
    """Max of ``b(j; m, pi)`` over ``pi`` in [a, b]: at the peak ``c = j / m`` when it lies
    inside (cached in ``peak[j]``, < 0 meaning not yet computed), else at an end.

    Parameters
    ----------
    j, m : int
        Successes and trials.
    c : float
        The peak ``j / m``.
    a, b : float
        The ends of the interval.
    ra, rb : float64[m + 1]
        ``b(.; m, a)`` and ``b(.; m, b)``.
    peak : float64[m + 1]
        Cache of ``b(j; m, j / m)``, filled on first use.

    Returns
    -------
    float
        The maximum.
    """
    if a < c < b:
        v = peak[j]
        if v < 0.0:
            v = math.exp(binom_logpmf(j, m, c))
            peak[j] = v
        return v
    return max(ra[j], rb[j])


@njit(cache=True)
def _curv_lower(d, jlo, jhi, a, b, ra, rb, peak):
    """Lower bound of ``sum_j d[j] b(j; m, pi)`` over ``pi`` in [a, b], ``m = len(d) - 1``.

    ``b(j; m, .)`` is unimodal with its peak at ``j / m``: on [a, b] its minimum is at an
    end, its maximum at an end or the peak (``peak[j]``, filled on first use; < 0 means not
    yet). ``ra``, ``rb``: ``b(.; m, a)`` and ``b(.; m, b)``. Rounding: minima deflated and
    maxima inflated by 1e-10 relative (the rows are accurate to about 1e-13).
    """
    m = d.shape[0] - 1
    sp = 0.0
    sn = 0.0
    for j in range(jlo, jhi + 1):
        dj = d[j]
        if dj > 0.0:
            sp += dj * min(ra[j], rb[j])
        elif dj < 0.0:
            c = j / m if m > 0 else 0.5
            sn -= dj * _pmf_max(j, m, c, a, b, ra, rb, peak)
    return sp * (1.0 - 1e-10) - sn * (1.0 + 1e-10)


@njit(cache=True)
def _curv_lower_w(beta, klo, khi, a, b, ra, rb, peak):
    """Lower bound of ``f''`` over ``pi`` in [a, b] (0 < a < b < 1), term by term in ``beta``.

    ``f'' = sum_k beta[k] b(k; N, pi) P_k(pi) / (pi (1 - pi))^2`` with ``P_k(pi) = N (N - 1)
    pi^2 - 2 k (N - 1) pi + k (k - 1)`` (convex, least at ``clip(k / N, a, b)``); ``beta >=
    0``, so each term is bounded below by its own least value: ``P_min / max (pi (1 -
    pi))^2 * min b`` when ``P_min >= 0``, else ``P_min / min (pi (1 - pi))^2 * max b``. The
    sawtooth of ``beta`` in ``k`` cancels in ``f''`` but not in its differences; this form
    keeps that cancellation out of the bound. Rounding as :func:`_curv_lower`.
    """
    nn = beta.shape[0] - 1
    qa = a * (1.0 - a)
    qb = b * (1.0 - b)
    qmin = min(qa, qb)
    qmax = 0.25 if a <= 0.5 <= b else max(qa, qb)
    idmin = 1.0 / (qmin * qmin * (1.0 - 1e-12))
    idmax = 1.0 / (qmax * qmax * (1.0 + 1e-12))
    c2 = nn * (nn - 1.0)
    sp = 0.0
    sn = 0.0
    for k in range(klo, khi + 1):
        bk = beta[k]
        if bk == 0.0:
            continue
        xv = k / nn
        x = min(max(xv, a), b)
        c1 = 2.0 * k * (nn - 1.0)
        c0 = k * (k - 1.0)
        pmin = c2 * x * x - c1 * x + c0
        pmin -= 8.0 * _EPS * (c2 * x * x + c1 * x + c0)
        if pmin >= 0.0:
            sp += bk * pmin * idmax * min(ra[k], rb[k])
        else:
            sn -= bk * pmin * idmin * _pmf_max(k, nn, xv, a, b, ra, rb, peak)
    return sp * (1.0 - 1e-10) - sn * (1.0 + 1e-10)


@njit(cache=True)
def _quad_bound(fa, fb, c):
    """Max over [a, b] of ``chord + c t (1 - t)``, ``t = (pi - a) / (b - a)``.

    With ``f'' >= -2 c / (b - a)^2`` on [a, b], ``f - chord - c t (1 - t)`` is convex and zero
    at both ends, so this maximum bounds ``f`` on [a, b] from above; it is exact when ``f``
    is that quadratic.
    """
    s = fb - fa
    if c > 0.0 and abs(s) < c:
        return 0.5 * (fa + fb) + 0.25 * c + s * s / (4.0 * c)
    return max(fa, fb)


@njit(cache=True)
def _tail_row(beta, klo, khi, x, up, dn, row):
    """f(x); fills ``row = b(.; N, x)`` (``up``, ``dn``: :func:`binom_ratios`)."""
    binom_row_r(beta.shape[0] - 1, x, up, dn, row)
    f = 0.0
    for k in range(klo, khi + 1):
        f += beta[k] * row[k]
    return f


@njit(cache=True)
def _interval_bound(
    beta, klo, khi, d2, j2lo, j2hi, cf2, a, b, fa, fb, ra, rb, peak_n, peak_2, t2a, t2b, target
):
    """Upper bound of f on [a, b] (:func:`_quad_bound`) from the lower bounds of ``f''`` of
    :func:`_curv_lower_w` (inside (0, 1)) and, when that one does not bring the bound to
    ``target``, of :func:`_curv_lower` on the second differences (the larger is used)."""
    nn = beta.shape[0] - 1
    if j2hi < j2lo:
        return max(fa, fb)  # no negative second difference: f is convex
    hh = 0.5 * (b - a) * (b - a)
    low = -np.inf
    if 0.0 < a and b < 1.0:
        low = _curv_lower_w(beta, klo, khi, a, b, ra, rb, peak_n)
        bound = _quad_bound(fa, fb, max(-low, 0.0) * hh)
        if bound <= target:
            return bound
    _lower_rows(ra, nn, a, cf2, j2lo, j2hi, t2a)
    _lower_rows(rb, nn, b, cf2, j2lo, j2hi, t2b)
    low = max(low, nn * (nn - 1.0) * _curv_lower(d2, j2lo, j2hi, a, b, t2a, t2b, peak_2))
    return _quad_bound(fa, fb, max(-low, 0.0) * hh)


@njit(cache=True)
def _support(beta):
    """The first and last k with ``beta[k] != 0``, ``k`` in ``0 .. nn = len(beta) - 1``
    (``klo = nn`` and ``khi = 0`` when every ``beta`` is 0).

    Parameters
    ----------
    beta : float64[nn + 1]
        Coefficients of the tail polynomial.

    Returns
    -------
    klo, khi : int
        The ends of the coefficients' support.
    """
    nn = beta.shape[0] - 1
    klo = 0
    while klo < nn and beta[klo] == 0.0:
        klo += 1
    khi = nn
    while khi > 0 and beta[khi] == 0.0:
        khi -= 1
    return klo, khi


@njit(cache=True)
def certified_sup(beta, lo, hi, n_init, rtol, max_intervals):
    """Certified supremum: :func:`certified_sup_stop` with no stop."""
    return certified_sup_stop(beta, lo, hi, n_init, rtol, max_intervals, np.inf)


@njit(cache=True)
def certified_sup_stop(beta, lo, hi, n_init, rtol, max_intervals, stop):
    """Certified supremum of ``sum_k beta[k] b(k; N, pi)`` over ``pi`` in [lo, hi].

    A grid of ``n_init`` intervals (even in arcsine scale, where a peak's width is about
    ``1 / sqrt(N)`` anywhere), Newton polishing of the best grid point, then branch and
    bound over intervals [a, b]. On [a, b] the second derivative is bounded below, term by
    term, in two forms (:func:`_interval_bound`): in ``beta`` with the weights ``b(k; N, pi)
    P_k(pi) / (pi (1 - pi))^2`` (:func:`_curv_lower_w`), and in the second differences
    ``d2`` with ``f'' = N (N - 1) sum_j d2[j] b(j; N - 2, pi)`` (:func:`_curv_lower`). With
    ``f'' >= L``, ``f <= chord + max(-L, 0) (pi - a)(b - pi) / 2``, whose maximum
    (:func:`_quad_bound`) is exact for a quadratic. An interval is dropped once that bound is
    ``<= best (1 + rtol)``, else split at its midpoint. Returns ``(p, upper, pi_at,
    n_intervals, converged)``: ``p`` is attained at ``pi_at`` (Newton-polished to machine
    precision), ``upper`` bounds the supremum from above, with an allowance of ``8 (N + 2)``
    ulp for the rounding of the sums; ``converged`` is false when ``max_intervals`` ran out.

    ``stop``: return as soon as a value ``>= stop`` is attained (``upper`` is then 1 and
    ``converged`` false): the caller only needs to know the supremum is at least ``stop``.
    """
    nn = beta.shape[0] - 1
    klo, khi = _support(beta)
    row = np.empty(nn + 1, dtype=np.float64)
    allow = 1.0 + 8.0 * (nn + 2) * _EPS
    if khi < klo or (khi == klo and beta[klo] == 0.0):
        return 0.0, 0.0, lo, 0, True
    up_r, dn_r = binom_ratios(nn)
    m2 = max(nn - 2, 0)
    d2 = np.zeros(m2 + 1, dtype=np.float64)
    cf2 = np.zeros(m2 + 1, dtype=np.float64)
    j2lo, j2hi = 1, 0
    if nn >= 2:
        # second differences, rounded down: |error| <= 8 eps (beta[j] + 2 beta[j+1] + beta[j+2])
        for j in range(max(klo - 2, 0), min(khi, m2) + 1):
            v = beta[j + 2] - 2.0 * beta[j + 1] + beta[j]
            v -= 8.0 * _EPS * (beta[j] + 2.0 * beta[j + 1] + beta[j + 2])
            d2[j] = v
            if v < 0.0:
                j2lo = min(j2lo, j) if j2hi >= j2lo else j
                j2hi = max(j2hi, j)
        if j2hi >= j2lo:
            j2lo = max(klo - 2, 0)
            j2hi = min(khi, m2)
        for j in range(m2 + 1):
            cf2[j] = (j + 1.0) * (nn - 1.0 - j)
    # rows are kept on rlo..rhi: f needs klo..khi, the rows of N - 2 one more each side
    rlo = max(klo - 1, 0)
    rhi = min(khi + 1, nn)
    peak_n = np.full(nn + 1, -1.0)
    peak_2 = np.full(m2 + 1, -1.0)
    t2a = np.empty(m2 + 1, dtype=np.float64)
    t2b = np.empty(m2 + 1, dtype=np.float64)
    cap = n_init + 2 * 64 + 8
    # per stack entry: its ends, f there and the rows b(.; N, .) there
    st_a = np.empty(cap, dtype=np.float64)
    st_b = np.empty(cap, dtype=np.float64)
    st_fa = np.empty(cap, dtype=np.float64)
    st_fb = np.empty(cap, dtype=np.float64)
    st_ra = np.empty((cap, nn + 1), dtype=np.float64)
    st_rb = np.empty((cap, nn + 1), dtype=np.float64)
    st_d = np.empty(cap, dtype=np.int64)
    xs = np.empty(n_init + 1, dtype=np.float64)
    fs = np.empty(n_init + 1, dtype=np.float64)
    rows = np.empty((n_init + 1, nn + 1), dtype=np.float64)
    best = -1.0
    best_pi = lo
    ib = 0
    th_lo = math.asin(math.sqrt(lo))
    th_hi = math.asin(math.sqrt(hi))
    for i in range(n_init + 1):
        x = math.sin(th_lo + (th_hi - th_lo) * i / n_init) ** 2
        if i == 0:
            x = lo
        elif i == n_init:
            x = hi
        xs[i] = x
        fs[i] = _tail_row(beta, klo, khi, x, up_r, dn_r, rows[i])
        if fs[i] > best:
            best = fs[i]
            best_pi = x
            ib = i
    if best >= stop:
        return best, 1.0, best_pi, 0, False
    if hi <= lo:
        return best, best * allow, best_pi, 0, True
    # Newton polish inside the best grid point's two cells
    a0 = xs[max(ib - 1, 0)]
    b0 = xs[min(ib + 1, n_init)]
    x0 = min(max(best_pi, a0 + 0.25 * (b0 - a0)), b0 - 0.25 * (b0 - a0))
    if max(a0, 1e-12) < min(b0, 1.0 - 1e-12):
        xp, fp = _polish(
            beta, klo, khi, max(a0, 1e-12), min(b0, 1.0 - 1e-12), x0, up_r, dn_r, row, -1.0
        )
        if fp > best:
            best = fp
            best_pi = xp
    keys = np.empty(n_init, dtype=np.float64)
    for i in range(n_init):
        keys[i] = max(fs[i], fs[i + 1])
    order = np.argsort(keys)
    top = -1
    for r in range(n_init):
        i = order[r]
        top += 1
        st_a[top] = xs[i]
        st_b[top] = xs[i + 1]
        st_fa[top] = fs[i]
        st_fb[top] = fs[i + 1]
        st_ra[top, rlo : rhi + 1] = rows[i, rlo : rhi + 1]
        st_rb[top, rlo : rhi + 1] = rows[i + 1, rlo : rhi + 1]
        st_d[top] = 0
    upper = 0.0
    n_int = 0
    converged = True
    while top >= 0:
        a = st_a[top]
        b = st_b[top]
        fa = st_fa[top]
        fb = st_fb[top]
        dep = st_d[top]
        ra = st_ra[top]
        rb = st_rb[top]
        target = best * (1.0 + rtol)
        bound = _interval_bound(
            beta, klo, khi, d2, j2lo, j2hi, cf2, a, b, fa, fb, ra, rb, peak_n, peak_2, t2a, t2b,
            target,
        )  # fmt: skip
        n_int += 1
        if bound <= target:
            top -= 1
            upper = max(upper, bound)
            continue
        mid = 0.5 * (a + b)
        if n_int >= max_intervals or dep >= 60 or not (a < mid < b) or top + 2 >= cap:
            top -= 1
            upper = max(upper, bound)
            converged = False
            continue
        t1 = top + 1
        fm = _tail_row(beta, klo, khi, mid, up_r, dn_r, row)
        if fm > best:
            best = fm
            best_pi = mid
            if best >= stop:
                return best, 1.0, best_pi, n_int, False
        # the entry at top becomes one child, top + 1 the other (the larger end on top)
        st_a[t1] = a
        st_b[t1] = b
        st_fa[t1] = fa
        st_fb[t1] = fb
        st_ra[t1, rlo : rhi + 1] = ra[rlo : rhi + 1]
        st_rb[t1, rlo : rhi + 1] = rb[rlo : rhi + 1]
        left_top = max(fa, fm) >= max(fm, fb)
        left = t1 if left_top else top
        right = top if left_top else t1
        st_b[left] = mid
        st_fb[left] = fm
        st_rb[left, rlo : rhi + 1] = row[rlo : rhi + 1]
        st_a[right] = mid
        st_fa[right] = fm
        st_ra[right, rlo : rhi + 1] = row[rlo : rhi + 1]
        st_d[top] = dep + 1
        st_d[t1] = dep + 1
        top = t1
    # polish again where the search ended (another peak may have won)
    w = 2.0 * (hi - lo) / n_init
    if max(lo, best_pi - w, 1e-12) < min(hi, best_pi + w, 1.0 - 1e-12):
        xp, fp = _polish(
            beta, klo, khi, max(lo, best_pi - w, 1e-12), min(hi, best_pi + w, 1.0 - 1e-12),
            best_pi, up_r, dn_r, row, -1.0,
        )  # fmt: skip
        if fp > best:
            best = fp
            best_pi = xp
    upper = max(upper, best) * allow
    return best, upper, best_pi, n_int, converged


@njit(cache=True)
def _scan_polish(beta, fs, xs, x_prev, up, dn, row):
    """Best of a scan held in ``fs`` (values at ``xs``, even in arcsine scale), attained.

    The previous maximiser is Newton-polished first, then every local maximum of the scan
    within a factor 4 of its best; a polish heading into the first one's point stops there.
    Every value returned is computed afresh at its point. Returns ``(value, maximiser)``.
    """
    n_scan = xs.shape[0] - 1
    klo, khi = _support(beta)
    top = -1.0
    for i in range(n_scan + 1):
        top = max(top, fs[i])
    best = -1.0
    best_x = xs[0]
    th_lo = 0.0
    dth = 0.5 * math.pi / n_scan
    x_star = -1.0  # the previous maximiser, polished first; the scan's peaks after it
    for c in range(-1, n_scan + 1):
        if c >= 0:
            left = fs[c - 1] if c > 0 else -1.0
            right = fs[c + 1] if c < n_scan else -1.0
            if not (fs[c] >= left and fs[c] >= right and fs[c] >= 0.25 * top):
                continue
            x0 = xs[c]
        else:
            x0 = x_prev
        th = math.asin(math.sqrt(x0))
        a = max(math.sin(max(th - dth, th_lo)) ** 2, 1e-12)
        b = min(math.sin(min(th + dth, 0.5 * math.pi)) ** 2, 1.0 - 1e-12)
        if a < b:
            xp, fp = _polish(beta, klo, khi, a, b, x0, up, dn, row, x_star)
        else:
            xp = x0
            fp = _tail_at(beta, klo, khi, x0, up, dn, row)
        if c < 0:
            x_star = xp
        if fp > best:
            best = fp
            best_x = xp
    return best, best_x


@njit(cache=True)
def all_tables_sup(
    n1, n2, order, score, rtol_tie, hyp, n_scan, stride, rtol, max_int, other, p, up
):
    """Supremum over [0, 1] of every table's tail polynomial, in one walk of the sorted tables.

    The region of table ``t`` is ``{u: score[u] <= score[t] (1 + rtol_tie)}``, a prefix of
    ``order``; ``beta`` grows one table at a time, and so does the tail polynomial's value at
    ``n_scan + 1`` points even in arcsine scale (a table of margin ``k`` adds its ``hyp``
    times ``b(k; N, x)``, kept in a table of those rows). Each distinct region's local maxima
    of that scan and the previous region's maximiser are Newton-polished (``p``, attained).
    A region gets a certified supremum when its ``p`` doubled since the last certified one,
    after ``stride`` regions, and at the end; regions are nested, so a region's supremum is
    at most the next certified one's upper bound (``up``, within a factor of about 2).

    ``other``: per table, a value below which this side does not matter (two-sided Boschloo:
    the other side's ``p``; ``inf`` everywhere for none). The walk stops once the attained
    ``p`` of a region is at least ``other`` of every table left (their supremum here is at
    least that), certifying the last region; the tables left get ``p = up = inf``.
    """
    m = order.shape[0]
    m2 = n2 + 1
    nn = n1 + n2
    beta = np.zeros(nn + 1, dtype=np.float64)
    row = np.empty(nn + 1, dtype=np.float64)
    up_r, dn_r = binom_ratios(nn)
    xs = np.empty(n_scan + 1, dtype=np.float64)
    rows = np.empty((nn + 1, n_scan + 1), dtype=np.float64)  # rows[k, i] = b(k; N, xs[i])
    for i in range(n_scan + 1):
        x = math.sin(0.5 * math.pi * i / n_scan) ** 2
        if i == 0:
            x = 0.0
        elif i == n_scan:
            x = 1.0
        xs[i] = x
        binom_row_r(nn, x, up_r, dn_r, row)
        for k in range(nn + 1):
            rows[k, i] = row[k]
    fs = np.zeros(n_scan + 1, dtype=np.float64)
    gp = np.empty(m, dtype=np.float64)  # per distinct region
    gup = np.full(m, np.inf)
    gcert = np.zeros(m, dtype=np.bool_)
    gid = np.empty(m, dtype=np.int64)
    ng = 0
    jj = -1
    last_jj = -2
    x_prev = 0.5
    since = 0
    last_cert = 0.0
    smax = np.empty(m + 1, dtype=np.float64)  # largest ``other`` of the tables from i on
    smax[m] = -np.inf
    for i in range(m - 1, -1, -1):
        smax[i] = max(smax[i + 1], other[order[i]])
    prev = -1.0
    stop_at = m
    for i in range(m):
        t = order[i]
        if ng > 0 and prev >= smax[i]:
            stop_at = i
            if not gcert[ng - 1]:
                res = certified_sup(beta, 0.0, 1.0, 32, rtol, max_int)
                gp[ng - 1] = max(gp[ng - 1], min(res[0], 1.0))
                gup[ng - 1] = res[1]
                gcert[ng - 1] = True
            break
        thr = score[t] * (1.0 + rtol_tie)
        while jj + 1 < m and score[order[jj + 1]] <= thr:
            jj += 1
            u = order[jj]
            k = (u // m2) + (u % m2)
            new = min(beta[k] + hyp[u], 1.0)
            dlt = new - beta[k]
            beta[k] = new
            for g in range(n_scan + 1):
                fs[g] += dlt * rows[k, g]
        if jj != last_jj:
            last_jj = jj
            best, x_prev = _scan_polish(beta, fs, xs, x_prev, up_r, dn_r, row)
            since += 1
            if since >= stride or jj == m - 1 or best > 2.0 * last_cert:
                since = 0
                res = certified_sup(beta, 0.0, 1.0, 32, rtol, max_int)
                if res[0] > best:
                    best = res[0]
                    x_prev = res[2]
                gup[ng] = res[1]
                gcert[ng] = True
                last_cert = best
            gp[ng] = min(best, 1.0)
            prev = best
            ng += 1
        gid[t] = ng - 1
    # nested regions: sup(g) <= sup(g') <= up(g') for the next certified g' >= g
    cur = np.inf
    for g in range(ng - 1, -1, -1):
        if gcert[g]:
            cur = min(cur, gup[g])
        gup[g] = max(min(cur, 1.0), gp[g])
    for i in range(m):
        t = order[i]
        if i < stop_at:
            p[t] = gp[gid[t]]
            up[t] = gup[gid[t]]
        else:
            p[t] = np.inf
            up[t] = np.inf


@njit(cache=True)
def all_tables_sup_bb(n1, n2, order, score, rtol_tie, hyp, lo_k, hi_k, rtol, max_int, p, up):
    """As :func:`all_tables_sup` with a nuisance range per margin (Berger-Boos): every table
    is certified on its own range ``[lo_k[k], hi_k[k]]`` (tables of one region and margin
    share the result)."""
    m = order.shape[0]
    m2 = n2 + 1
    nn = n1 + n2
    beta = np.zeros(nn + 1, dtype=np.float64)
    seen_g = np.full(nn + 1, -1, dtype=np.int64)
    seen_p = np.zeros(nn + 1, dtype=np.float64)
    seen_u = np.zeros(nn + 1, dtype=np.float64)
    jj = -1
    g = -1
    last_jj = -2
    for i in range(m):
        t = order[i]
        thr = score[t] * (1.0 + rtol_tie)
        while jj + 1 < m and score[order[jj + 1]] <= thr:
            jj += 1
            u = order[jj]
            k = (u // m2) + (u % m2)
            beta[k] = min(beta[k] + hyp[u], 1.0)
        if jj != last_jj:
            last_jj = jj
            g += 1
        k = (t // m2) + (t % m2)
        if seen_g[k] != g:
            res = certified_sup(beta, lo_k[k], hi_k[k], 16, rtol, max_int)
            seen_g[k] = g
            seen_p[k] = min(res[0], 1.0)
            seen_u[k] = min(max(res[1], res[0]), 1.0)
        p[t] = seen_p[k]
        up[t] = seen_u[k]


@njit(cache=True)
def region_mass(mask, b1, b2, n2):
    """``sum_t mask[t] b1[x1] b2[x2]``: the probability of a region under independent arms."""
    m2 = n2 + 1
    s = 0.0
    for t in range(mask.shape[0]):
        if mask[t]:
            s += b1[t // m2] * b2[t % m2]
    return s


@njit(cache=True)
def prefix_over_on_grid(margin, hyp, cands, nn, grid, thr):
    """Smallest ``j`` such that the prefix of length ``cands[j]`` has probability at least
    ``thr`` at some rate of ``grid``; ``len(cands)`` if none.

    ``margin`` and ``hyp`` are the tables' margins ``k`` and hypergeometric probabilities in
    the order of the prefixes; a prefix's probability at ``pi`` is
    ``sum_t hyp[t] b(margin[t]; N, pi)`` (the tail polynomial, summed table by table). A grid
    value is attained by the supremum, so (up to the rounding of the sums, which the caller's
    margin on ``thr`` covers) no prefix from ``cands[j]`` on has a p-value supremum below
    ``thr``.
    """
    best = cands.shape[0]
    for g in range(grid.shape[0]):
        pmf = binom_pmf_vector(nn, grid[g])
        cum = 0.0
        t = 0
        for j in range(best):
            stop = cands[j]
            while t < stop:
                cum += hyp[t] * pmf[margin[t]]
                t += 1
            if cum >= thr:
                best = j
                break
    return best

"""Numba kernels of the exact unconditional tests' tail polynomial: its value, its
derivatives and an upper bound of it on an interval of the nuisance parameter.

Kernels only: int64 counts, float64 values, no validation
(:mod:`evalsim.stats.two_sample.unconditional` validates). The tail polynomial of a region
with coefficients ``beta`` (:mod:`evalsim.stats.two_sample._unconditional_kernels`) is
``f(pi) = sum_k beta[k] b(k; N, pi)``, ``N = len(beta) - 1``; the rows ``b(.; N, pi)`` come
from the pmf at the mode and the ratio recurrence (:func:`binom_ratios`, :func:`binom_row_r`).
The search that uses these bounds is :mod:`evalsim.stats.two_sample._nuisance_sup_kernels`.

The bound on an interval. On an interval ``[a, b]`` a function whose second derivative is
bounded below by ``-M`` lies under its chord plus ``M (pi - a)(b - pi) / 2``, so its maximum
there is at most ``max(f(a), f(b)) + M (b - a)^2 / 8`` (:func:`_quad_bound` takes the maximum
of that chord-plus-quadratic itself). For the tail polynomial
``f''(pi) = N (N - 1) sum_j d2[j] b(j; N - 2, pi)`` with ``d2`` the second differences of
``beta``, so ``M = N (N - 1) sum_j max(-d2[j], 0) max_{pi in [a, b]} b(j; N - 2, pi)``, and the
binomial pmf's maximum on ``[a, b]`` is at ``clip(j / (N - 2), a, b)`` (:func:`_curv_lower`);
:func:`_curv_lower_w` bounds ``f''`` term by term in ``beta`` instead, and
:func:`interval_bound` uses the better of the two.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_logpmf

EPS = 2.0**-53


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
def tail_at(beta, klo, khi, pi, up, dn, row):
    """f(pi) of the tail polynomial; fills ``row = b(.; N, pi)`` (``up``, ``dn``:
    :func:`binom_ratios`)."""
    nn = beta.shape[0] - 1
    binom_row_r(nn, pi, up, dn, row)
    s = 0.0
    for k in range(klo, khi + 1):
        s += beta[k] * row[k]
    return s


@njit(cache=True)
def tail_d(beta, klo, khi, pi, up, dn, row):
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
        pmin -= 8.0 * EPS * (c2 * x * x + c1 * x + c0)
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
def tail_row(beta, klo, khi, x, up, dn, row):
    """f(x); fills ``row = b(.; N, x)`` (``up``, ``dn``: :func:`binom_ratios`)."""
    binom_row_r(beta.shape[0] - 1, x, up, dn, row)
    f = 0.0
    for k in range(klo, khi + 1):
        f += beta[k] * row[k]
    return f


@njit(cache=True)
def interval_bound(
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
def support(beta):
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

"""Numba kernels of the exact unconditional tests' certified supremum over the nuisance
parameter.

Kernels only: int64 counts, float64 values, no validation
(:mod:`evalsim.stats.two_sample.unconditional` validates). Tables are flattened as
``t = x1 * (n2 + 1) + x2``.

Certified supremum. A table's p-value is the supremum over ``pi`` of its region's tail
polynomial ``sum_k beta[k] b(k; N, pi)`` (``beta``:
:mod:`evalsim.stats.two_sample._unconditional_kernels`). Branch and bound
(:func:`certified_sup`) splits every interval whose bound
(:mod:`evalsim.stats.two_sample._tail_polynomial_kernels`) exceeds the best value found by
more than the tolerance; what is left bounds the supremum from above, and the best value
found (Newton-polished, :func:`_polish`) is attained. :func:`all_tables_sup` and
:func:`all_tables_sup_bb` give every table's supremum in one walk of the tables sorted by the
statistic (nested regions); :func:`prefix_over_on_grid` finds where those prefixes' values on
a grid of rates, attained lower bounds of the supremum, first reach a threshold.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_pmf_vector
from evalsim.stats.two_sample._tail_polynomial_kernels import (
    EPS,
    binom_ratios,
    binom_row_r,
    interval_bound,
    support,
    tail_at,
    tail_d,
    tail_row,
)
from evalsim.stats.two_sample._unconditional_kernels import tie_threshold


@njit(cache=True)
def _polish(beta, klo, khi, a, b, x0, up, dn, row, x_seen):
    """Newton on f' = 0 inside [a, b] from x0, kept in a shrinking bracket; returns (x, f(x)).

    Stops once a step or the bracket is below 1e-10 relative (the value is then within
    about 1e-20 relative of the local maximum's), or when a step lands within 1e-8 relative
    of ``x_seen``, a local maximum polished already (< 0: none): Newton would end there.
    """
    x = min(max(x0, a), b)
    fx, d1, d2 = tail_d(beta, klo, khi, x, up, dn, row)
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
        fx, d1, d2 = tail_d(beta, klo, khi, x, up, dn, row)
        if fx > best_f:
            best_f = fx
            best_x = x
        if small:
            break
    return best_x, best_f


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
    term, in two forms (:func:`interval_bound`, with the helpers of
    :mod:`evalsim.stats.two_sample._tail_polynomial_kernels`): in ``beta`` with the weights
    ``b(k; N, pi) P_k(pi) / (pi (1 - pi))^2`` (``_curv_lower_w``), and in the second
    differences ``d2`` with ``f'' = N (N - 1) sum_j d2[j] b(j; N - 2, pi)`` (``_curv_lower``).
    With ``f'' >= L``, ``f <= chord + max(-L, 0) (pi - a)(b - pi) / 2``, whose maximum
    (``_quad_bound``) is exact for a quadratic. An interval is dropped once that bound is
    ``<= best (1 + rtol)``, else split at its midpoint. Returns ``(p, upper, pi_at,
    n_intervals, converged)``: ``p`` is attained at ``pi_at`` (Newton-polished to machine
    precision), ``upper`` bounds the supremum from above, with an allowance of ``8 (N + 2)``
    ulp for the rounding of the sums; ``converged`` is false when ``max_intervals`` ran out.

    ``stop``: return as soon as a value ``>= stop`` is attained (``upper`` is then 1 and
    ``converged`` false): the caller only needs to know the supremum is at least ``stop``.
    """
    nn = beta.shape[0] - 1
    klo, khi = support(beta)
    row = np.empty(nn + 1, dtype=np.float64)
    allow = 1.0 + 8.0 * (nn + 2) * EPS
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
            v -= 8.0 * EPS * (beta[j] + 2.0 * beta[j + 1] + beta[j + 2])
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
        fs[i] = tail_row(beta, klo, khi, x, up_r, dn_r, rows[i])
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
        bound = interval_bound(
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
        fm = tail_row(beta, klo, khi, mid, up_r, dn_r, row)
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
    klo, khi = support(beta)
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
            fp = tail_at(beta, klo, khi, x0, up, dn, row)
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

    The region of table ``t`` is ``{u: score[u] <= score[t] + rtol_tie |score[t]|}``, a prefix of
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
        thr = tie_threshold(score[t], rtol_tie)
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
        thr = tie_threshold(score[t], rtol_tie)
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

"""Numba kernels of the exact unconditional tests (Boschloo, Barnard, Berger-Boos).

Kernels only: int64 counts, float64 values, no validation (:mod:`evalsim.stats.unconditional`
validates). Tables are flattened as ``t = x1 * (n2 + 1) + x2``.

The tail polynomial. For a rejection region ``R`` (a set of tables) and a common success rate
``pi`` of both arms, ``P_pi(R) = sum_{(x1, x2) in R} b(x1; n1, pi) b(x2; n2, pi)``. Grouping
tables by their margin ``k = x1 + x2`` gives ``P_pi(R) = sum_k beta[k] b(k; N, pi)`` with
``N = n1 + n2`` and ``beta[k]`` the hypergeometric probability of ``R`` given the margin ``k``,
a polynomial in Bernstein form whose coefficients lie in [0, 1] (as in
:func:`evalsim.stats._sequential_kernels.unpaired_null_bernstein`).

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

from evalsim.stats._binom_kernels import binom_logpmf
from evalsim.stats._fisher_kernels import margin_weights

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
def binom_row(nn, pi, out):
    """``out[k] = b(k; nn, pi)`` for k = 0..nn, by the ratio recurrence from the mode."""
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
    for k in range(mode, nn):
        out[k + 1] = out[k] * ((nn - k) / (k + 1.0)) * r
    for k in range(mode, 0, -1):
        out[k - 1] = out[k] * (k / (nn - k + 1.0)) / r


@njit(cache=True)
def _tail_at(beta, klo, khi, pi, row):
    nn = beta.shape[0] - 1
    binom_row(nn, pi, row)
    s = 0.0
    for k in range(klo, khi + 1):
        s += beta[k] * row[k]
    return s


@njit(cache=True)
def _tail_d(beta, klo, khi, pi, row):
    """f(pi), f'(pi), f''(pi) of the tail polynomial (0 < pi < 1)."""
    nn = beta.shape[0] - 1
    binom_row(nn, pi, row)
    q = 1.0 - pi
    pq = pi * q
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    for k in range(klo, khi + 1):
        v = beta[k] * row[k]
        if v == 0.0:
            continue
        u = (k - nn * pi) / pq
        f0 += v
        f1 += v * u
        f2 += v * (u * u - k / (pi * pi) - (nn - k) / (q * q))
    return f0, f1, f2


@njit(cache=True)
def _polish(beta, klo, khi, a, b, x0, row):
    """Newton on f' = 0 inside [a, b] from x0, kept in a shrinking bracket; returns (x, f(x))."""
    x = min(max(x0, a), b)
    fx, d1, d2 = _tail_d(beta, klo, khi, x, row)
    best_x = x
    best_f = fx
    for _ in range(40):
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
        if abs(xn - x) <= 1e-15 * max(x, 1e-300) or b - a <= 1e-16:
            break
        x = xn
        fx, d1, d2 = _tail_d(beta, klo, khi, x, row)
        if fx > best_f:
            best_f = fx
            best_x = x
    return best_x, best_f


@njit(cache=True)
def _curv_rows(d2neg, jlo, jhi, a, b, row_a, row_b):
    """``sum_j d2neg[j] max_{pi in [a, b]} b(j; m, pi)`` from the rows at a and b (m = N - 2)."""
    m = d2neg.shape[0] - 1
    s = 0.0
    for j in range(jlo, jhi + 1):
        if d2neg[j] == 0.0:
            continue
        c = j / m if m > 0 else 0.0
        if c <= a:
            v = row_a[j]
        elif c >= b:
            v = row_b[j]
        else:
            v = math.exp(binom_logpmf(j, m, c))
        s += d2neg[j] * v
    return s


@njit(cache=True)
def certified_sup(beta, lo, hi, n_init, rtol, max_intervals):
    """Certified supremum of ``sum_k beta[k] b(k; N, pi)`` over ``pi`` in [lo, hi].

    A grid of ``n_init`` intervals, Newton polishing of the best grid point, then branch and
    bound: an interval is dropped once ``max(f(a), f(b)) + M (b - a)^2 / 8 <= best (1 +
    rtol)`` with ``M`` the curvature bound (recomputed every third split, else inherited from
    the parent interval, which contains the child). Returns ``(p, upper, pi_at, n_intervals,
    converged)``: ``p`` is attained at ``pi_at`` (Newton-polished to machine precision),
    ``upper`` bounds the supremum from above, with an allowance of ``8 (N + 2)`` ulp for the
    rounding of the sums; ``converged`` is false when ``max_intervals`` ran out first.
    """
    nn = beta.shape[0] - 1
    klo = 0
    while klo < nn and beta[klo] == 0.0:
        klo += 1
    khi = nn
    while khi > 0 and beta[khi] == 0.0:
        khi -= 1
    row = np.empty(nn + 1, dtype=np.float64)
    mm = max(nn - 2, 0)
    d2neg = np.zeros(mm + 1, dtype=np.float64)
    jlo = mm + 1
    jhi = -1
    if nn >= 2:
        for j in range(mm + 1):
            v = -(beta[j + 2] - 2.0 * beta[j + 1] + beta[j])
            if v > 0.0:
                d2neg[j] = v
                jlo = min(jlo, j)
                jhi = max(jhi, j)
    curved = jhi >= jlo
    row_a = np.empty(mm + 1, dtype=np.float64)
    row_b = np.empty(mm + 1, dtype=np.float64)
    scale = nn * (nn - 1.0)
    allow = 1.0 + 8.0 * (nn + 2) * _EPS
    xs = np.empty(n_init + 1, dtype=np.float64)
    fs = np.empty(n_init + 1, dtype=np.float64)
    rows_m = np.empty((n_init + 1, mm + 1), dtype=np.float64)
    best = -1.0
    best_pi = lo
    ib = 0
    for i in range(n_init + 1):
        x = lo + (hi - lo) * i / n_init
        if i == n_init:
            x = hi
        xs[i] = x
        fs[i] = _tail_at(beta, klo, khi, x, row)
        if curved:
            binom_row(mm, x, rows_m[i])
        if fs[i] > best:
            best = fs[i]
            best_pi = x
            ib = i
    if hi <= lo:
        return best, best * allow, best_pi, 0, True
    # Newton polish inside the best grid point's two cells
    a0 = xs[max(ib - 1, 0)]
    b0 = xs[min(ib + 1, n_init)]
    x0 = min(max(best_pi, a0 + 0.25 * (b0 - a0)), b0 - 0.25 * (b0 - a0))
    if max(a0, 1e-12) < min(b0, 1.0 - 1e-12):
        xp, fp = _polish(beta, klo, khi, max(a0, 1e-12), min(b0, 1.0 - 1e-12), x0, row)
        if fp > best:
            best = fp
            best_pi = xp
    cap = n_init + 2 * 64 + 8
    st_a = np.empty(cap, dtype=np.float64)
    st_b = np.empty(cap, dtype=np.float64)
    st_fa = np.empty(cap, dtype=np.float64)
    st_fb = np.empty(cap, dtype=np.float64)
    st_m = np.empty(cap, dtype=np.float64)
    st_d = np.empty(cap, dtype=np.int64)
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
        st_m[top] = (
            scale * _curv_rows(d2neg, jlo, jhi, xs[i], xs[i + 1], rows_m[i], rows_m[i + 1])
            if curved
            else 0.0
        )
        st_d[top] = 0
    upper = 0.0
    n_int = 0
    converged = True
    while top >= 0:
        a = st_a[top]
        b = st_b[top]
        fa = st_fa[top]
        fb = st_fb[top]
        curv = st_m[top]
        dep = st_d[top]
        top -= 1
        n_int += 1
        h = b - a
        bound = max(fa, fb) + curv * h * h / 8.0
        if bound <= best * (1.0 + rtol):
            upper = max(upper, bound)
            continue
        if curved and dep > 0 and dep % 3 == 0:
            binom_row(mm, a, row_a)
            binom_row(mm, b, row_b)
            curv = min(curv, scale * _curv_rows(d2neg, jlo, jhi, a, b, row_a, row_b))
            bound = max(fa, fb) + curv * h * h / 8.0
            if bound <= best * (1.0 + rtol):
                upper = max(upper, bound)
                continue
        mid = 0.5 * (a + b)
        if n_int >= max_intervals or dep >= 60 or not (a < mid < b) or top + 2 >= cap:
            upper = max(upper, bound)
            converged = False
            continue
        fm = _tail_at(beta, klo, khi, mid, row)
        if fm > best:
            best = fm
            best_pi = mid
        left_first = max(fa, fm) >= max(fm, fb)
        for s in range(2):
            use_left = (s == 1) == left_first
            top += 1
            if use_left:
                st_a[top] = a
                st_b[top] = mid
                st_fa[top] = fa
                st_fb[top] = fm
            else:
                st_a[top] = mid
                st_b[top] = b
                st_fa[top] = fm
                st_fb[top] = fb
            st_m[top] = curv
            st_d[top] = dep + 1
    # polish again where the search ended (another peak may have won)
    w = (hi - lo) / n_init
    if max(lo, best_pi - w, 1e-12) < min(hi, best_pi + w, 1.0 - 1e-12):
        xp, fp = _polish(
            beta, klo, khi, max(lo, best_pi - w, 1e-12), min(hi, best_pi + w, 1.0 - 1e-12),
            best_pi, row,
        )  # fmt: skip
        if fp > best:
            best = fp
            best_pi = xp
    upper = max(upper, best) * allow
    return best, upper, best_pi, n_int, converged


@njit(cache=True)
def _scan_polish(beta, lo, hi, n_scan, x_prev, row):
    """Best of a scan of ``n_scan`` cells (even in arcsine scale): every local maximum of the
    scan within a factor 4 of the best, and the previous maximiser, Newton-polished.

    Returns ``(value, maximiser)``.
    """
    nn = beta.shape[0] - 1
    klo = 0
    while klo < nn and beta[klo] == 0.0:
        klo += 1
    khi = nn
    while khi > 0 and beta[khi] == 0.0:
        khi -= 1
    xs = np.empty(n_scan + 2, dtype=np.float64)
    fs = np.empty(n_scan + 2, dtype=np.float64)
    best = -1.0
    best_x = lo
    th_lo = math.asin(math.sqrt(lo))
    th_hi = math.asin(math.sqrt(hi))
    for i in range(n_scan + 1):
        # even steps in arcsine scale: a peak's width there is about 1 / sqrt(N) anywhere
        x = math.sin(th_lo + (th_hi - th_lo) * i / n_scan) ** 2
        if i == 0:
            x = lo
        elif i == n_scan:
            x = hi
        xs[i] = x
        fs[i] = _tail_at(beta, klo, khi, x, row)
        if fs[i] > best:
            best = fs[i]
            best_x = x
    cands = np.empty(n_scan + 2, dtype=np.float64)
    nc = 0
    for i in range(n_scan + 1):
        left = fs[i - 1] if i > 0 else -1.0
        right = fs[i + 1] if i < n_scan else -1.0
        if fs[i] >= left and fs[i] >= right and fs[i] >= 0.25 * best:
            cands[nc] = xs[i]
            nc += 1
    if lo <= x_prev <= hi:
        cands[nc] = x_prev
        nc += 1
    dth = (th_hi - th_lo) / n_scan
    for c in range(nc):
        x0 = cands[c]
        th = math.asin(math.sqrt(x0))
        a = max(lo, math.sin(max(th - dth, 0.0)) ** 2, 1e-12)
        b = min(hi, math.sin(min(th + dth, 0.5 * math.pi)) ** 2, 1.0 - 1e-12)
        if a < b:
            xp, fp = _polish(beta, klo, khi, a, b, x0, row)
            if fp > best:
                best = fp
                best_x = xp
    return best, best_x


@njit(cache=True)
def all_tables_sup(n1, n2, order, score, rtol_tie, hyp, n_scan, stride, rtol, max_int, p, up):
    """Supremum over [0, 1] of every table's tail polynomial, in one walk of the sorted tables.

    The region of table ``t`` is ``{u: score[u] <= score[t] (1 + rtol_tie)}``, a prefix of
    ``order``; ``beta`` grows one table at a time. Each distinct region gets a scan of
    ``n_scan`` cells plus the previous region's maximiser, Newton-polished (``p``, attained).
    A region gets a certified supremum when its ``p`` doubled since the last certified one,
    after ``stride`` regions, and at the end; regions are nested, so a region's supremum is
    at most the next certified one's upper bound (``up``, within a factor of about 2).
    """
    m = order.shape[0]
    m2 = n2 + 1
    nn = n1 + n2
    beta = np.zeros(nn + 1, dtype=np.float64)
    row = np.empty(nn + 1, dtype=np.float64)
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
            best, x_prev = _scan_polish(beta, 0.0, 1.0, n_scan, x_prev, row)
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
            ng += 1
        gid[t] = ng - 1
    # nested regions: sup(g) <= sup(g') <= up(g') for the next certified g' >= g
    cur = np.inf
    for g in range(ng - 1, -1, -1):
        if gcert[g]:
            cur = min(cur, gup[g])
        gup[g] = max(min(cur, 1.0), gp[g])
    for t in range(m):
        p[t] = gp[gid[t]]
        up[t] = gup[gid[t]]


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

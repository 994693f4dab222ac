"""Numba kernels of the independence checks: null laws, exact laws under drift, Monte Carlo.

Private: the callers in :mod:`evalsim.stats.independence` validate every argument. A success
sequence is ``x[0..n-1]`` in trial order; its trend statistic is ``S = sum (i + 1) x[i]``
(position scores 1..n), its runs statistic ``R`` the number of maximal blocks of equal
values. Rejection tables are ``uint8``: ``runs_rej[k, r]``, ``trend_rej[k, s]`` and
``halves_rej[k_first, k_second]``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _log_comb(n, k):
    if k < 0 or k > n:
        return -np.inf
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@njit(cache=True)
def runs_null_pmf(n1, n2, out):
    """P(R = r) for a uniformly random arrangement of n1 ones and n2 zeros (n1 + n2 >= 1).

    Writes ``out[r]`` for r = 0 .. n1 + n2 (``out`` has at least n1 + n2 + 1 entries,
    zeroed here). Swed and Eisenhart (1943): with ``C = comb(n1 + n2, n1)``,
    P(R = 2j) = 2 comb(n1-1, j-1) comb(n2-1, j-1) / C and
    P(R = 2j+1) = [comb(n1-1, j) comb(n2-1, j-1) + comb(n1-1, j-1) comb(n2-1, j)] / C,
    in log space so no factorial overflows.
    """
    n = n1 + n2
    for r in range(out.shape[0]):
        out[r] = 0.0
    if n1 == 0 or n2 == 0:
        out[1] = 1.0
        return
    log_c = _log_comb(n, n1)
    for r in range(2, n + 1):
        j = r // 2
        if r % 2 == 0:
            lv = math.log(2.0) + _log_comb(n1 - 1, j - 1) + _log_comb(n2 - 1, j - 1)
            out[r] = math.exp(lv - log_c) if lv > -np.inf else 0.0
        else:
            a = _log_comb(n1 - 1, j) + _log_comb(n2 - 1, j - 1)
            b = _log_comb(n1 - 1, j - 1) + _log_comb(n2 - 1, j)
            v = 0.0
            if a > -np.inf:
                v += math.exp(a - log_c)
            if b > -np.inf:
                v += math.exp(b - log_c)
            out[r] = v


@njit(cache=True)
def rank_sum_null_pmf(n, m, work):
    """P(U = u), u = 0 .. m (n - m), for the sum of m positions drawn from 1..n without order.

    ``U = S - m (m + 1) / 2``. Harding's (1984) generating function, the Gaussian binomial
    ``G_m = prod_{j=1}^{m} (1 - q^(n-m+j)) / (1 - q^j)``, built one factor pair at a time:
    ``G_j = (1 - q^(n-m+j)) G_(j-1) / (1 - q^j)``. Each step first divides (a running sum with
    stride j: additions of non-negative numbers) and then multiplies, and only for the lower
    half of the coefficients; ``G_j`` is palindromic, so the upper half is mirrored. This keeps
    the subtraction where the series and the polynomial are of the same size (the upper half
    of the series would cancel badly). Rescaled to a maximum of 1 after every step so nothing
    overflows. ``work`` holds at least ``m (n - m) + 1`` floats. Returns the normalised pmf
    (a view of ``work``).
    """
    width = n - m
    for u in range(work.shape[0]):
        work[u] = 0.0
    work[0] = 1.0
    deg = 0
    for j in range(1, m + 1):
        a = width + j
        new_deg = deg + width
        half = new_deg // 2
        for u in range(j, half + 1):  # divided by (1 - q^j)
            work[u] += work[u - j]
        for u in range(half, a - 1, -1):  # times (1 - q^a), highest power first
            work[u] -= work[u - a]
        mx = 0.0
        for u in range(half + 1):
            if work[u] < 0.0:  # round-off where the count is 0
                work[u] = 0.0
            if work[u] > mx:
                mx = work[u]
        for u in range(half + 1):
            work[u] /= mx
            work[new_deg - u] = work[u]
        deg = new_deg
    total = 0.0
    for u in range(deg + 1):
        total += work[u]
    for u in range(deg + 1):
        work[u] /= total
    return work[: deg + 1]


@njit(cache=True)
def two_sided_from_pmf(pmf, obs, out_tails):
    """min(1, 2 min(P(X <= obs), P(X >= obs))) for a pmf on 0..len-1; tails to ``out_tails``."""
    lo = 0.0
    hi = 0.0
    for v in range(pmf.shape[0]):
        if v <= obs:
            lo += pmf[v]
        if v >= obs:
            hi += pmf[v]
    lo = min(lo, 1.0)
    hi = min(hi, 1.0)
    out_tails[0] = lo
    out_tails[1] = hi
    return min(1.0, 2.0 * min(lo, hi))


@njit(cache=True)
def poisson_binomial_pmf(p, out):
    """P(K = k), k = 0..len(p), for independent Bernoulli(p[i]) trials (``out`` len n + 1)."""
    n = p.shape[0]
    for k in range(n + 1):
        out[k] = 0.0
    out[0] = 1.0
    for i in range(n):
        q = 1.0 - p[i]
        for k in range(i + 1, 0, -1):
            out[k] = out[k] * q + out[k - 1] * p[i]
        out[0] *= q


@njit(cache=True)
def runs_joint_law(p):
    """Exact joint law of (K, R) for independent Bernoulli(p[i]) trials in order.

    Returns ``law[k, r]`` (shape (n + 1, n + 1)) = P(K = k, R = r). State: (k, r, last value).
    """
    n = p.shape[0]
    cur = np.zeros((n + 1, n + 1, 2), dtype=np.float64)
    nxt = np.zeros((n + 1, n + 1, 2), dtype=np.float64)
    cur[1, 1, 1] = p[0]
    cur[0, 1, 0] = 1.0 - p[0]
    for i in range(1, n):
        nxt[:, :, :] = 0.0
        pi = p[i]
        qi = 1.0 - pi
        for k in range(i + 1):
            for r in range(1, i + 1):
                w0 = cur[k, r, 0]
                w1 = cur[k, r, 1]
                if w0 != 0.0:
                    nxt[k, r, 0] += w0 * qi
                    nxt[k + 1, r + 1, 1] += w0 * pi
                if w1 != 0.0:
                    nxt[k + 1, r, 1] += w1 * pi
                    nxt[k, r + 1, 0] += w1 * qi
        cur, nxt = nxt, cur
    law = np.zeros((n + 1, n + 1), dtype=np.float64)
    for k in range(n + 1):
        for r in range(n + 1):
            law[k, r] = cur[k, r, 0] + cur[k, r, 1]
    return law


@njit(cache=True)
def trend_joint_law(p):
    """Exact joint law of (K, S), S = sum (i + 1) x[i], for independent Bernoulli(p[i]).

    Returns ``law[k, s]`` of shape (n + 1, n (n + 1) / 2 + 1).
    """
    n = p.shape[0]
    s_max = n * (n + 1) // 2
    law = np.zeros((n + 1, s_max + 1), dtype=np.float64)
    law[0, 0] = 1.0
    s_top = 0
    for i in range(n):
        v = i + 1
        pi = p[i]
        qi = 1.0 - pi
        for k in range(i + 1, -1, -1):  # k and s descending: each state read before overwritten
            for s in range(s_top + v, -1, -1):
                stay = law[k, s] * qi
                came = law[k - 1, s - v] * pi if (k >= 1 and s >= v) else 0.0
                law[k, s] = stay + came
        s_top += v
    return law


@njit(cache=True)
def check_rejection_mc(p, n_sim, rng, runs_rej, trend_rej, halves_rej, h1):
    """Monte Carlo: simulate ``n_sim`` sequences x[i] ~ Bernoulli(p[i]); count rejections.

    Returns int64[4]: sequences rejected by the runs test, the trend test, the halves test
    (first ``h1`` trials vs the rest), and by at least one of the three.
    """
    n = p.shape[0]
    counts = np.zeros(4, dtype=np.int64)
    for _ in range(n_sim):
        k = 0
        s = 0
        r = 0
        k1 = 0
        last = -1
        for i in range(n):
            xi = 1 if rng.random() < p[i] else 0
            if xi != last:
                r += 1
                last = xi
            if xi == 1:
                k += 1
                s += i + 1
                if i < h1:
                    k1 += 1
        a = runs_rej[k, r]
        b = trend_rej[k, s]
        c = halves_rej[k1, k - k1]
        counts[0] += a
        counts[1] += b
        counts[2] += c
        if a or b or c:
            counts[3] += 1
    return counts

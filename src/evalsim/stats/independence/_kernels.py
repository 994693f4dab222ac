"""Numba kernels of the independence checks: null laws, exact laws under drift, Monte Carlo.

Private: the callers in :mod:`evalsim.stats.independence.checks` validate every argument. A success
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
def rank_sum_counts_mod(n, m, primes, work):
    """Counts of U = S - m (m + 1) / 2 modulo each prime, for m positions drawn from 1..n.

    ``U``'s counts are the coefficients of the Gaussian binomial
    ``G_m = prod_{j=1}^{m} (1 - q^(n-m+j)) / (1 - q^j)`` (Harding 1984), built one factor
    pair at a time: ``G_j = (1 - q^(n-m+j)) G_(j-1) / (1 - q^j)`` -- a running sum with
    stride j, then a subtraction -- for the lower half of the coefficients (``G_j`` is
    palindromic; the upper half is mirrored). In floating point the subtraction cancels and
    the error grows geometrically with j (the law was wrong from n ~ 600); here every count is
    kept exactly, as its residues modulo ``primes`` (each < 2^31, so sums stay in int64).
    ``work`` is int64 of shape (m (n - m) + 1, len(primes)); returns it, filled.
    """
    width = n - m
    r = primes.shape[0]
    for u in range(work.shape[0]):
        for t in range(r):
            work[u, t] = 0
    for t in range(r):
        work[0, t] = 1
    deg = 0
    for j in range(1, m + 1):
        a = width + j
        new_deg = deg + width
        half = new_deg // 2
        for u in range(j, half + 1):  # divided by (1 - q^j)
            for t in range(r):
                v = work[u, t] + work[u - j, t]
                if v >= primes[t]:
                    v -= primes[t]
                work[u, t] = v
        for u in range(half, a - 1, -1):  # times (1 - q^a), highest power first
            for t in range(r):
                v = work[u, t] - work[u - a, t]
                if v < 0:
                    v += primes[t]
                work[u, t] = v
        for u in range(half + 1):
            for t in range(r):
                work[new_deg - u, t] = work[u, t]
        deg = new_deg
    return work


@njit(cache=True)
def garner_to_float(residues, primes, inverses, scale, out):
    """Each row of ``residues`` (an integer below ``prod(primes)``) times 1 / total, as float.

    Garner's mixed-radix digits ``x = d_0 + d_1 p_0 + d_2 p_0 p_1 + ...`` (all digits
    non-negative, so the float sum below does not cancel); ``inverses[i]`` is
    ``(p_0 ... p_(i-1))^-1 mod p_i`` and ``scale[i]`` is ``p_0 ... p_(i-1) / total`` as a float.
    """
    r = primes.shape[0]
    digits = np.zeros(r, dtype=np.int64)
    for u in range(residues.shape[0]):
        for i in range(r):
            p = primes[i]
            # value of the digits so far, modulo p: d_0 + d_1 p_0 + ... (Horner, from the top)
            acc = 0
            for q in range(i - 1, -1, -1):
                acc = (acc * (primes[q] % p) + digits[q]) % p
            digits[i] = ((residues[u, i] - acc) % p) * inverses[i] % p
        total = 0.0
        for i in range(r - 1, -1, -1):
            total += digits[i] * scale[i]
        out[u] = total
    return out


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

"""Numba kernels of the anytime-valid tests (mixture e-processes).

Private: :mod:`evalsim.stats.sequential.anytime` validates every argument.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.sequential._paired_kernels import bernoulli_step


@njit(cache=True)
def _log_mixture_2x2(n, ka, kb, ta, tb, qa, qb, log_w):
    """log of ``sum_j w_j prod_i e_i(theta_j)`` for n blocks with ka, kb successes.

    ``e(theta) = f_{theta_a}(y_a) f_{theta_b}(y_b) / (f_{q_a}(y_a) f_{q_b}(y_b))`` with
    (q_a, q_b) the component's null point (``(theta_a + theta_b) / 2`` twice for
    superiority; the reverse information projection for a margin, see
    :mod:`evalsim.stats.sequential.noninferiority`).
    """
    m = -math.inf
    n_j = ta.shape[0]
    vals = np.empty(n_j)
    for j in range(n_j):
        a = ta[j]
        b = tb[j]
        v = log_w[j]
        v += ka * math.log(a) + (n - ka) * math.log1p(-a)
        v += kb * math.log(b) + (n - kb) * math.log1p(-b)
        v -= ka * math.log(qa[j]) + (n - ka) * math.log1p(-qa[j])
        v -= kb * math.log(qb[j]) + (n - kb) * math.log1p(-qb[j])
        vals[j] = v
        if v > m:
            m = v
    s = 0.0
    for j in range(n_j):
        s += math.exp(vals[j] - m)
    return m + math.log(s)


@njit(cache=True)
def unpaired_mixture_rows(n_max, ta, tb, qa, qb, log_w, threshold_log):
    """B-better rows of the 2x2 mixture e-process: ``upper[n - 1, ka]`` = least kb with
    ``log E >= threshold_log`` after n blocks (``n + 1``: none), for n = 1..n_max.

    Every component has ``theta_b > q_b``, so E increases with kb (bisection on kb).
    """
    upper = np.empty((n_max, n_max + 1), dtype=np.int64)
    for n in range(1, n_max + 1):
        for ka in range(n_max + 1):
            if ka > n:
                upper[n - 1, ka] = n + 1
                continue
            if _log_mixture_2x2(n, ka, n, ta, tb, qa, qb, log_w) < threshold_log:
                upper[n - 1, ka] = n + 1
                continue
            lo, hi = -1, n  # E(lo) < t <= E(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _log_mixture_2x2(n, ka, mid, ta, tb, qa, qb, log_w) >= threshold_log:
                    hi = mid
                else:
                    lo = mid
            upper[n - 1, ka] = hi
    return upper


@njit(cache=True)
def one_arm_oc(p, n_max, upper):
    """Exact law of the one-arm walk (n trials, k successes) stopped when ``k >= upper[n]``.

    Returns
    -------
    float64[n_max + 1]
        ``out[n]`` = P(stop "above p0" at trial n); P(no verdict by n_max) = 1 - sum.
    """
    dist = np.zeros(n_max + 2)
    tmp = np.zeros(n_max + 2)
    out = np.zeros(n_max + 1)
    dist[0] = 1.0
    for n in range(1, n_max + 1):
        bernoulli_step(dist, tmp, n, p)
        for k in range(n + 1):
            if k >= upper[n]:
                out[n] += dist[k]
                dist[k] = 0.0
    return out

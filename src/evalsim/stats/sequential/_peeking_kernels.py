"""Numba kernels of the peeking study: exact DP and Monte Carlo over look schedules.

Private: the callers in :mod:`evalsim.stats.sequential.peeking` and
:mod:`evalsim.stats.sequential.peeking_simulation` validate every argument. Rejection regions
are stored flat: the region of a look at ``m`` trials per arm is an ``(m+1)*(m+1)`` block of
``uint8`` starting at ``offsets[j]``, indexed ``k_a * (m + 1) + k_b``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.two_sample._fisher_kernels import _rejection_bounds


@njit(cache=True)
def sequential_rejection_dp(p_a, p_b, look_sizes, regions, offsets):
    """Probability that the first rejection happens at each look (rejection absorbs).

    The joint law of (k_a, k_b) is propagated one trial pair at a time; at a look the mass
    inside that look's region moves to the absorbed total and leaves the distribution.

    Parameters
    ----------
    p_a, p_b : float
        True success rates of the two arms.
    look_sizes : int64[L]
        Strictly increasing trials per arm at each look (>= 1).
    regions : uint8[:]
        Concatenated rejection regions (see the module docstring).
    offsets : int64[L]
        Start of each look's region in ``regions``.

    Returns
    -------
    float64[L]
        ``out[j]`` = P(no rejection before look j, rejection at look j).
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    new = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    dist[0, 0] = 1.0
    q_a = 1.0 - p_a
    q_b = 1.0 - p_b
    out = np.zeros(n_looks, dtype=np.float64)
    t = 0
    for j in range(n_looks):
        m = look_sizes[j]
        while t < m:
            # One more trial for each arm: counts go from at most t to at most t + 1.
            for a in range(t + 2):
                for b in range(t + 2):
                    s = 0.0
                    if a <= t and b <= t:
                        s += q_a * q_b * dist[a, b]
                    if a >= 1 and b <= t:
                        s += p_a * q_b * dist[a - 1, b]
                    if a <= t and b >= 1:
                        s += q_a * p_b * dist[a, b - 1]
                    if a >= 1 and b >= 1:
                        s += p_a * p_b * dist[a - 1, b - 1]
                    new[a, b] = s
            dist, new = new, dist
            t += 1
        w = m + 1
        off = offsets[j]
        absorbed = 0.0
        for a in range(w):
            for b in range(w):
                if regions[off + a * w + b]:
                    absorbed += dist[a, b]
                    dist[a, b] = 0.0
        out[j] = absorbed
    return out


@njit(cache=True)
def sequential_rejection_mc(p_a, p_b, n_experiments, rng, look_sizes, n_looks, regions, offsets):
    """Simulate experiments and count, per schedule, at which look each first rejects.

    Every experiment draws one path of ``max(look_sizes)`` trial pairs (arm A then arm B at
    each step); all schedules are evaluated on the same paths (common random numbers).

    Parameters
    ----------
    p_a, p_b : float
        True success rates.
    n_experiments : int
        Number of simulated experiments.
    rng : numpy.random.Generator
        The stream (advanced in place).
    look_sizes : int64[S, Lmax]
        Look sizes of schedule s in ``look_sizes[s, :n_looks[s]]``.
    n_looks : int64[S]
        Number of looks of each schedule.
    regions : uint8[:]
        Concatenated rejection regions.
    offsets : int64[S, Lmax]
        Start of the region of look j of schedule s.

    Returns
    -------
    int64[S, Lmax]
        ``counts[s, j]`` = experiments whose first rejection under schedule s is at look j.
    """
    n_sched = look_sizes.shape[0]
    n_max = 0
    for s in range(n_sched):
        last = look_sizes[s, n_looks[s] - 1]
        if last > n_max:
            n_max = last
    k_a = np.zeros(n_max + 1, dtype=np.int64)
    k_b = np.zeros(n_max + 1, dtype=np.int64)
    counts = np.zeros(look_sizes.shape, dtype=np.int64)
    for _ in range(n_experiments):
        for t in range(1, n_max + 1):
            k_a[t] = k_a[t - 1] + (1 if rng.random() < p_a else 0)
            k_b[t] = k_b[t - 1] + (1 if rng.random() < p_b else 0)
        for s in range(n_sched):
            for j in range(n_looks[s]):
                m = look_sizes[s, j]
                if regions[offsets[s, j] + k_a[m] * (m + 1) + k_b[m]]:
                    counts[s, j] += 1
                    break
    return counts


@njit(cache=True)
def fisher_region_bounds(m, alpha_thresh, cut, left, right):
    """Fisher's rejection region at m trials per arm as two bounds per margin K = 0..2m.

    Table (k_a, k_b) with k_a + k_b = K is rejected when ``k_a <= left[K]`` or
    ``k_a >= right[K]`` (:func:`evalsim.stats.two_sample._fisher_kernels._rejection_bounds`, the
    power kernel's region): O(m) memory instead of the (m + 1)^2 boolean table.
    """
    size = m + 1
    w = np.empty(size, dtype=np.float64)
    lev = np.zeros(size, dtype=np.int64)
    order = np.empty(size, dtype=np.int64)
    for kk in range(2 * m + 1):
        lo_b, hi_b = _rejection_bounds(m, m, kk, alpha_thresh, cut, w, lev, order)
        left[kk] = lo_b
        right[kk] = hi_b


@njit(cache=True)
def _support(t, p, lo_prev, hi_prev):
    """Index range of Binomial(t, p) outside which each tail holds < e^-55 (~1e-24).

    Chernoff's bound P(X >= k) <= exp(-t KL(k/t || p)) (and its mirror) sets the ends; the
    range never shrinks from the previous step's (the counts only grow), so cells left
    outside are already zero.
    """
    if p <= 0.0 or p >= 1.0:
        k = 0 if p <= 0.0 else t
        return max(k, lo_prev), max(k, hi_prev)
    mean = t * p
    hi = min(t, int(math.ceil(mean)))
    while hi < t and t * _kl(hi / t, p) <= _LOG_DROP:
        hi += 1
    lo = max(0, int(math.floor(mean)))
    while lo > 0 and t * _kl(lo / t, p) <= _LOG_DROP:
        lo -= 1
    return max(lo, lo_prev), max(hi, hi_prev)


@njit(cache=True)
def _supports(t, p_x, p_y, x_lo, x_hi, y_lo, y_hi):
    """:func:`_support` of both counts of a two-count walk at step ``t``: the new
    ``(x_lo, x_hi, y_lo, y_hi)``."""
    x_lo, x_hi = _support(t, p_x, x_lo, x_hi)
    y_lo, y_hi = _support(t, p_y, y_lo, y_hi)
    return x_lo, x_hi, y_lo, y_hi


@njit(cache=True)
def _kl(x, p):
    """Kullback-Leibler divergence of Bernoulli(x) from Bernoulli(p)."""
    out = 0.0
    if x > 0.0:
        out += x * math.log(x / p)
    if x < 1.0:
        out += (1.0 - x) * math.log((1.0 - x) / (1.0 - p))
    return out


_LOG_DROP = 55.0  # a tail with Chernoff bound below e^-55 (~1.3e-24) is dropped


@njit(cache=True)
def sequential_rejection_dp_fisher(p_a, p_b, look_sizes, alpha_thresh):
    """As :func:`sequential_rejection_dp` for Fisher's two-sided test at every look.

    No region is stored: at a look of m trials per arm, each margin K that the counts can
    reach gets its two rejection bounds from the power kernel's
    :func:`evalsim.stats.two_sample._fisher_kernels._rejection_bounds` (the table is rejected when
    ``k_a <= left`` or ``k_a >= right``; the same tables as ``fisher_rejects`` with the tie
    rule). The joint law is propagated one arm at a time (two passes of two terms each) and
    only over the cells where the unabsorbed binomial law of each count holds more than
    ~1e-24 of its mass (Chernoff) (absorption only removes mass, so the dropped cells are smaller
    still): O(sum over t of (20 sd_t)^2) cells instead of O(n^3), and O(n) memory per look.
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist = np.zeros((n_max + 2, n_max + 2), dtype=np.float64)
    dist[0, 0] = 1.0
    q_a = 1.0 - p_a
    q_b = 1.0 - p_b
    out = np.zeros(n_looks, dtype=np.float64)
    left = np.empty(2 * n_max + 1, dtype=np.int64)
    right = np.empty(2 * n_max + 1, dtype=np.int64)
    w = np.empty(n_max + 1, dtype=np.float64)
    lev = np.zeros(n_max + 1, dtype=np.int64)
    order = np.empty(n_max + 1, dtype=np.int64)
    t = 0
    alo, ahi, blo, bhi = 0, 0, 0, 0
    for j in range(n_looks):
        m = look_sizes[j]
        while t < m:
            nalo, nahi, nblo, nbhi = _supports(t + 1, p_a, p_b, alo, ahi, blo, bhi)
            # arm A: a -> a + 1 with p_a (in place, rows downward), columns blo..bhi
            for a in range(min(ahi + 1, nahi), nalo - 1, -1):
                for b in range(blo, bhi + 1):
                    v = q_a * dist[a, b] if a <= ahi else 0.0
                    if a >= 1:
                        v += p_a * dist[a - 1, b]
                    dist[a, b] = v
            for a in range(alo, nalo):  # rows that left the support
                for b in range(blo, bhi + 1):
                    dist[a, b] = 0.0
            # arm B: b -> b + 1 with p_b (in place, columns downward)
            for a in range(nalo, nahi + 1):
                for b in range(min(bhi + 1, nbhi), nblo - 1, -1):
                    v = q_b * dist[a, b] if b <= bhi else 0.0
                    if b >= 1:
                        v += p_b * dist[a, b - 1]
                    dist[a, b] = v
                for b in range(blo, nblo):
                    dist[a, b] = 0.0
            alo, ahi, blo, bhi = nalo, nahi, nblo, nbhi
            t += 1
        cut = min(1e-30, alpha_thresh * 1e-3 / (m + 2))
        for kk in range(alo + blo, ahi + bhi + 1):
            lb, rb = _rejection_bounds(m, m, kk, alpha_thresh, cut, w, lev, order)
            left[kk] = lb
            right[kk] = rb
        absorbed = 0.0
        for a in range(alo, ahi + 1):
            for b in range(blo, bhi + 1):
                kk = a + b
                if a <= left[kk] or a >= right[kk]:
                    absorbed += dist[a, b]
                    dist[a, b] = 0.0
        out[j] = absorbed
    return out


@njit(cache=True)
def paired_rejection_dp(p10, p01, look_sizes, crit):
    """Exact McNemar peeking: P(first rejection at look j) for a paired design.

    Each step is one pair: A only with ``p10``, B only with ``p01``, concordant otherwise.
    The state is (b, c), the discordant counts; at a look the exact two-sided McNemar test
    rejects when ``min(b, c) <= crit[b + c]`` (``crit`` from
    :func:`evalsim.stats.two_sample.paired_design.mcnemar_critical_values`, -1 = never).
    Cells outside the Chernoff range of each count's binomial law are dropped, as in the
    two-arm kernel.
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist = np.zeros((n_max + 2, n_max + 2), dtype=np.float64)
    dist[0, 0] = 1.0
    q = 1.0 - p10 - p01
    if q < 0.0:
        q = 0.0
    out = np.zeros(n_looks, dtype=np.float64)
    t = 0
    blo, bhi, clo, chi = 0, 0, 0, 0
    for j in range(n_looks):
        m = look_sizes[j]
        while t < m:
            nblo, nbhi, nclo, nchi = _supports(t + 1, p10, p01, blo, bhi, clo, chi)
            for b in range(nbhi, nblo - 1, -1):
                for c in range(nchi, nclo - 1, -1):
                    if b + c > t + 1:
                        dist[b, c] = 0.0
                        continue
                    v = 0.0
                    if blo <= b <= bhi and clo <= c <= chi:
                        v = q * dist[b, c]
                    if b >= 1 and blo <= b - 1 <= bhi and clo <= c <= chi:
                        v += p10 * dist[b - 1, c]
                    if c >= 1 and blo <= b <= bhi and clo <= c - 1 <= chi:
                        v += p01 * dist[b, c - 1]
                    dist[b, c] = v
            for b in range(blo, bhi + 1):
                for c in range(clo, chi + 1):
                    if b < nblo or b > nbhi or c < nclo or c > nchi:
                        dist[b, c] = 0.0
            blo, bhi, clo, chi = nblo, nbhi, nclo, nchi
            t += 1
        absorbed = 0.0
        for b in range(blo, bhi + 1):
            for c in range(clo, chi + 1):
                if b + c > m:
                    continue
                if min(b, c) <= crit[b + c]:
                    absorbed += dist[b, c]
                    dist[b, c] = 0.0
        out[j] = absorbed
    return out

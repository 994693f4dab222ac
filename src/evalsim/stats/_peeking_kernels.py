"""Numba kernels of the peeking study: exact DP and Monte Carlo over look schedules.

Private: the callers in :mod:`evalsim.stats.peeking` validate every argument. Rejection
regions are stored flat: the region of a look at ``m`` trials per arm is an ``(m+1)*(m+1)``
block of ``uint8`` starting at ``offsets[j]``, indexed ``k_a * (m + 1) + k_b``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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

"""Numba kernels of the paired sequential designs and of the exact McNemar yardstick.

Private: :mod:`evalsim.stats.sequential.paired` and :mod:`evalsim.stats.sequential.optimise`
validate every argument. The walk of B's solo wins ``w`` over the discordant pairs ``d``:
rows indexed by ``d = 0..d_max``; "never" is ``d + 1`` for an upper row and ``-1`` for a
lower one (see :mod:`evalsim.stats.sequential._kernels` for the verdict codes).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_logpmf


@njit(cache=True)
def bernoulli_step(dist, tmp, n, p):
    """One more Bernoulli(``p``) trial: ``dist[k]``, the law of the success count after
    ``n - 1`` trials, becomes the law after ``n``, in place (``tmp`` is scratch of at least
    ``n + 1``). Under H0 a discordant pair is the trial with ``p = 1/2`` (B alone)."""
    for k in range(n + 1):
        v = 0.0
        if k <= n - 1:
            v += (1.0 - p) * dist[k]
        if k >= 1:
            v += p * dist[k - 1]
        tmp[k] = v
    for k in range(n + 1):
        dist[k] = tmp[k]


@njit(cache=True)
def _upper_tail(dist, d, two_sided, cum, sides, budget):
    """The smallest upper boundary at ``d`` discordant pairs that keeps the spend in budget.

    Parameters
    ----------
    dist : float64[d + 1]
        The running null mass by B-alone count ``w``.
    d : int
        Discordant pairs so far.
    two_sided : bool
        Boundaries on both sides (the upper one above ``d / 2``).
    cum : float
        The error spent before this boundary.
    sides : float
        2.0 two-sided, 1.0 one-sided.
    budget : float
        The most ``cum + sides * tail`` may reach.

    Returns
    -------
    (int, float)
        The smallest ``u`` (``d + 1``: none) with ``cum + sides * P(w >= u) <= budget``,
        and that tail mass ``P(w >= u)``.
    """
    u = d + 1
    tail = 0.0
    for w in range(d, -1, -1):
        if two_sided and 2 * w <= d:
            break
        if d == 0:
            break
        if cum + sides * (tail + dist[w]) <= budget:
            tail += dist[w]
            u = w
        else:
            break
    return u, tail


@njit(cache=True)
def sign_walk_spending(d_max, targets, two_sided):
    """Boundaries of the walk of B's solo wins over discordant pairs, from a spending schedule.

    Under "no difference" every discordant pair is a fair coin. At discordant pair d the
    upper boundary is the smallest ``u`` such that P(crossing by d) <= ``targets[d]`` (per
    side when two-sided: the lower boundary mirrors it, ``d - u``). The final boundaries,
    used when the maximum number of pairs is reached with d discordant pairs, spend what
    remains of ``targets[d_max]`` at that d.

    Returns
    -------
    upper, lower, final_upper, final_lower : int64[d_max + 1]
        Row d: B better when ``w >= upper[d]``, A better when ``w <= lower[d]``.
    spent : float64[d_max + 1]
        P(crossing by d) (both sides).
    final_size : float64[d_max + 1]
        P(crossing by d, or the final boundary at d) (both sides).
    """
    upper = np.empty(d_max + 1, dtype=np.int64)
    lower = np.empty(d_max + 1, dtype=np.int64)
    f_upper = np.empty(d_max + 1, dtype=np.int64)
    f_lower = np.empty(d_max + 1, dtype=np.int64)
    spent = np.zeros(d_max + 1, dtype=np.float64)
    final_size = np.zeros(d_max + 1, dtype=np.float64)
    dist = np.zeros(d_max + 1, dtype=np.float64)
    tmp = np.zeros(d_max + 1, dtype=np.float64)
    dist[0] = 1.0
    cum = 0.0
    total = targets[d_max]
    sides = 2.0 if two_sided else 1.0
    for d in range(d_max + 1):
        if d > 0:
            bernoulli_step(dist, tmp, d, 0.5)
        # interim: smallest u with cum + sides * P(w >= u) <= target (u > d / 2 when two-sided)
        u, tail = _upper_tail(dist, d, two_sided, cum, sides, targets[d])
        upper[d] = u
        lower[d] = d - u if two_sided else -1
        if two_sided and u <= d:
            for w in range(d - u + 1):
                dist[w] = 0.0
        for w in range(u, d + 1):
            dist[w] = 0.0
        cum += sides * tail
        spent[d] = cum
        # final boundary at d: spend what remains of the total
        fu, ftail = _upper_tail(dist, d, two_sided, cum, sides, total)
        f_upper[d] = fu
        f_lower[d] = d - fu if two_sided else -1
        final_size[d] = cum + sides * ftail
    return upper, lower, f_upper, f_lower, spent, final_size


@njit(cache=True)
def paired_oc(p10, p01, n_max, d_max, upper, lower, fut_lo, fut_hi, fut_start, f_upper, f_lower):
    """Exact operating characteristics of a paired design, one look after every pair.

    Each pair is A-only (prob ``p10``), B-only (``p01``) or concordant. After pair t with d
    discordant pairs and w B-only pairs: stop "B better" if ``w >= upper[d]``, "A better" if
    ``w <= lower[d]``, for futility if ``t >= fut_start`` and
    ``fut_lo[d] <= w <= fut_hi[d]``; at
    ``d = d_max`` or ``t = n_max`` the final rows decide (no verdict otherwise).

    Returns
    -------
    float64[n_max + 1, 4]
        ``out[t, v]`` = P(stop after pair t with verdict v); ``out[t, 0]`` = P(stop at t
        with no verdict, at the maximum).
    """
    pc = 1.0 - p10 - p01
    if pc < 0.0:
        pc = 0.0
    dist = np.zeros((d_max + 1, d_max + 1), dtype=np.float64)
    new = np.zeros((d_max + 1, d_max + 1), dtype=np.float64)
    dist[0, 0] = 1.0
    out = np.zeros((n_max + 1, 4), dtype=np.float64)
    top = 0
    for t in range(1, n_max + 1):
        nt = min(top + 1, d_max)
        for d in range(nt + 1):
            for w in range(d + 1):
                v = 0.0
                if d <= top and d < d_max:
                    v += pc * dist[d, w]
                if d >= 1 and d - 1 <= top:
                    if w >= 1:
                        v += p01 * dist[d - 1, w - 1]
                    if w <= d - 1:
                        v += p10 * dist[d - 1, w]
                new[d, w] = v
        for d in range(nt + 1, d_max + 1):
            for w in range(d + 1):
                new[d, w] = 0.0
        dist, new = new, dist
        top = nt
        for d in range(top + 1):
            last = t == n_max or d == d_max
            for w in range(d + 1):
                mass = dist[d, w]
                if mass == 0.0:
                    continue
                if last:
                    if w >= f_upper[d]:
                        out[t, 1] += mass
                    elif w <= f_lower[d]:
                        out[t, 2] += mass
                    else:
                        out[t, 0] += mass
                    dist[d, w] = 0.0
                elif w >= upper[d]:
                    out[t, 1] += mass
                    dist[d, w] = 0.0
                elif w <= lower[d]:
                    out[t, 2] += mass
                    dist[d, w] = 0.0
                elif t >= fut_start and fut_lo[d] <= w <= fut_hi[d]:
                    out[t, 3] += mass
                    dist[d, w] = 0.0
    return out


@njit(cache=True)
def mcnemar_one_sided_power(n, p10, p01, alpha):
    """Exact power of the one-sided exact McNemar test "B better" (p < alpha), n pairs.

    Given d discordant pairs the p-value of w B-only pairs is P(Bin(d, 1/2) >= w).
    """
    pd = p10 + p01
    pi = p01 / pd if pd > 0.0 else 0.5
    power = 0.0
    for d in range(1, n + 1):
        ld = binom_logpmf(d, n, pd)
        acc = 0.0
        for w in range(d, -1, -1):
            acc += math.exp(binom_logpmf(w, d, 0.5))
            if acc * (1.0 + 1e-7) < alpha:
                power += math.exp(ld + binom_logpmf(w, d, pi))
            else:
                break
    return power

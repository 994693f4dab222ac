"""Numba kernels of ``joint_exact`` (:mod:`evalsim.stats.simreal.joint`): the exact lower
bound of every (Y, n01) cell by inversion of a one-sided test over a grid of rates, and the
exact coverage and expected width over the pair table.

A cell is (y, m): y real successes and m pairs with the real trial failed and its twin
succeeded, of n pairs. Under p_R = p0 the cell is trinomial with probabilities
(p0, d, 1 - p0 - d); d is the least favourable P(real 0, twin 1) (the caller's argument).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True)
def log_factorials(n):
    """log(k!) for k = 0..n."""
    out = np.zeros(n + 1)
    for k in range(1, n + 1):
        out[k] = out[k - 1] + math.log(k)
    return out


@nb.njit(cache=True)
def _log_or_floor(p):
    return math.log(p) if p > 0.0 else -1e300


@nb.njit(cache=True)
def _power(count, log_p):
    """count * log(p), 0 when the count is 0 (whatever p)."""
    return count * log_p if count > 0 else 0.0


#: Cells whose log-probability is below this are not exponentiated; each counts as at most
#: exp(NEGLIGIBLE_LOG) in the tail summed from the top, so a rejection stays valid.
NEGLIGIBLE_LOG = -40.0


@nb.njit(cache=True)
def _group_mass(lo, hi, cy, cm, cr, coef, lp0, ld, lq):
    """Trinomial probability of sorted cells lo..hi-1 (counts cy, cm, cr and log multinomial
    coefficient coef, in sorted order; a zero count times the floor -1e300 of a zero
    probability's log is 0), and how many cells were below NEGLIGIBLE_LOG (not summed)."""
    s = 0.0
    skipped = 0
    for t in range(lo, hi):
        v = coef[t] + cy[t] * lp0 + cm[t] * ld + cr[t] * lq
        if v > NEGLIGIBLE_LOG:
            s += math.exp(v)
        else:
            skipped += 1
    return s, skipped


@nb.njit(cache=True)
def _rejected_prefix(group_start, group_end, cy, cm, cr, coef, lp0, ld, lq, level):
    """The number of leading sorted cells (whole groups) whose tail is at most ``level``:
    the largest b with P(cells before b) <= level. It is summed from whichever end gets
    there first: from the top until the mass exceeds ``level``, or from the bottom until the
    mass left above is at most ``level`` (the total is 1, up to rounding). Negligible cells
    count at their bound exp(NEGLIGIBLE_LOG) from the top and at 0 from the bottom, so
    either way the prefix is never longer than the exact one (up to 1e-13 in the sums)."""
    ncell = coef.size
    tiny = math.exp(NEGLIGIBLE_LOG)
    top = 0  # groups [0, top) summed from the top
    cum_top = 0.0
    skipped_top = 0
    bot = ncell  # groups [bot, ncell) summed from the bottom
    cum_bot = 0.0
    while top < bot:
        end = group_end[top]
        s, k = _group_mass(top, end, cy, cm, cr, coef, lp0, ld, lq)
        if cum_top + s + (skipped_top + k) * tiny > level:
            return top
        cum_top += s
        skipped_top += k
        top = end
        if top >= bot:
            break
        start = group_start[bot - 1]
        s, k = _group_mass(start, bot, cy, cm, cr, coef, lp0, ld, lq)
        cum_bot += s
        if 1.0 - cum_bot <= level:
            return start
        bot = start
    return top


@nb.njit(cache=True)
def lower_bound_table(n, sim_lower, stat, level, grid):
    """Lower confidence bound of p_R for every cell by inverting, at each rate of ``grid``,
    the test that rejects p_R = p0 when P_{p0, d}(T >= T(cell)) <= level, where
    d = max(0, sim_lower - p0) and T = ``stat``.

    Parameters
    ----------
    n : int
        Pairs.
    sim_lower : float
        The lower bound on the simulated rate p_S (the least favourable p_S).
    stat : float64[n + 1, n + 1]
        T(y, m) for y + m <= n; non-decreasing in y and non-increasing in m (the caller's
        duty: then the tail is largest at the smallest d and non-decreasing in p0).
    level : float
        The test's level.
    grid : float64[G]
        Increasing rates from 0 to 1.

    Returns
    -------
    float64[n + 1, n + 1]
        L[y, m]: the largest grid rate at which the cell is rejected, scanning down from
        the top of the grid (0 where it is rejected nowhere); -1 outside y + m <= n.
    """
    ncell = (n + 1) * (n + 2) // 2
    vals = np.empty(ncell)
    ys = np.empty(ncell, dtype=np.int64)
    ms = np.empty(ncell, dtype=np.int64)
    c = 0
    for y in range(n + 1):
        for m in range(n - y + 1):
            vals[c] = stat[y, m]
            ys[c] = y
            ms[c] = m
            c += 1
    order = np.argsort(-vals, kind="mergesort")
    # groups: cells of equal T (their tail is the same), [group_start, group_end)
    group_start = np.empty(ncell, dtype=np.int64)
    group_end = np.empty(ncell, dtype=np.int64)
    i = 0
    while i < ncell:
        j = i
        while j < ncell and vals[order[j]] == vals[order[i]]:
            j += 1
        for t in range(i, j):
            group_start[t] = i
            group_end[t] = j
        i = j
    lf = log_factorials(n)
    cy = np.empty(ncell)
    cm = np.empty(ncell)
    cr = np.empty(ncell)
    coef = np.empty(ncell)
    for t in range(ncell):
        y, m = ys[order[t]], ms[order[t]]
        cy[t], cm[t], cr[t] = y, m, n - y - m
        coef[t] = lf[n] - lf[y] - lf[m] - lf[n - y - m]
    out = np.full((n + 1, n + 1), -1.0)
    assigned = 0  # sorted positions < assigned already have their bound
    for gi in range(grid.size - 1, -1, -1):
        p0 = grid[gi]
        d = sim_lower - p0
        if d < 0.0:
            d = 0.0
        if d > 1.0 - p0:
            d = 1.0 - p0
        q = 1.0 - p0 - d
        if q < 0.0:
            q = 0.0
        lp0, ld, lq = _log_or_floor(p0), _log_or_floor(d), _log_or_floor(q)
        pos = _rejected_prefix(group_start, group_end, cy, cm, cr, coef, lp0, ld, lq, level)
        # positions [assigned, pos) are rejected here for the first time (scanning down)
        for t in range(assigned, pos):
            k = order[t]
            out[ys[k], ms[k]] = p0
        if pos > assigned:
            assigned = pos
        if assigned == ncell:
            break
    for t in range(assigned, ncell):
        k = order[t]
        out[ys[k], ms[k]] = 0.0
    return out


@nb.njit(cache=True)
def pair_cells(n, p11, p10, p01, p00):
    """Every pair table (n11, n10, n01, n00) of n pairs with probability above exp(-745),
    as arrays (y = n11 + n10, n10, n01, probability), in a fixed order. Computed once per
    law and shared by every group of simulated counts."""
    lf = log_factorials(n)
    l11, l10, l01, l00 = (
        _log_or_floor(p11),
        _log_or_floor(p10),
        _log_or_floor(p01),
        _log_or_floor(p00),
    )
    size = (n + 1) * (n + 2) * (n + 3) // 6
    ys = np.empty(size, dtype=np.int64)
    n10s = np.empty(size, dtype=np.int64)
    n01s = np.empty(size, dtype=np.int64)
    prs = np.empty(size)
    c = 0
    for a in range(n + 1):  # n10
        for b in range(n - a + 1):  # n01
            for e in range(n - a - b + 1):  # n11
                r = n - a - b - e
                v = lf[n] - lf[a] - lf[b] - lf[e] - lf[r]
                v += _power(a, l10) + _power(b, l01) + _power(e, l11) + _power(r, l00)
                if v < -745.0:
                    continue
                ys[c], n10s[c], n01s[c], prs[c] = e + a, a, b, math.exp(v)
                c += 1
    return ys[:c], n10s[:c], n01s[:c], prs[:c]


@nb.njit(cache=True)
def coverage_width(n, p_real, ys, n10s, n01s, prs, lower, upper_fail, cp_lo, cp_hi):
    """Exact coverage and expected width over the pair table (the cells of
    :func:`pair_cells`) for one pair of tables.

    ``lower[y, n01]`` is the lower bound from the successes; ``upper_fail[n - y, n10]`` the
    lower bound on the failure rate, so the upper bound is 1 - upper_fail[n - y, n10]. Where
    the lower bound exceeds the upper the interval is the real-only ``[cp_lo[y],
    cp_hi[y]]``. Returns (coverage, width, total probability enumerated).
    """
    cov = 0.0
    wid = 0.0
    tot = 0.0
    for c in range(prs.size):
        y, pr = ys[c], prs[c]
        lo = lower[y, n01s[c]]
        hi = 1.0 - upper_fail[n - y, n10s[c]]
        if lo > hi:
            lo = cp_lo[y]
            hi = cp_hi[y]
        tot += pr
        wid += pr * (hi - lo)
        if lo <= p_real <= hi:
            cov += pr
    return cov, wid, tot

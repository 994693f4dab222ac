"""Numba kernels of ``full_joint_exact`` (:mod:`evalsim.stats.simreal.full_joint`).

The lower bound of p_R reads y (real successes), j = n01 (real failed, twin succeeded) and
k (simulated successes of N) through the discordant statistic W = k - m j and y. Under
p_R = p0 with simulated rate p_S, j ~ Binomial(n, p01) with p01 >= max(0, p_S - p0) and
k ~ Binomial(N, p_S) independently, so on a cell [a, b] of p_S (a >= p0) every tail
P(W >= w) is at most the *corner* tail with p01 = a - p0 and k ~ Binomial(N, b) (W falls in
j and rises in k). :func:`sup_tail_le` certifies that the supremum over all p_S is at most a
threshold by checking corner tails on a dyadic partition of [p0, 1], refining a cell only
when its corner tail is above the threshold (rates p_S < p0 are dominated by the first cell,
p01 = 0 and k at its top).

The binomial tails of k are tabled per N on the finest dyadic grid, each rate's row filled
when first read (:func:`sf_table`, :func:`fill_row`);
outside a cell's stored window a tail is read as 1 below it and as the window's last value
above it, both upper bounds.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from evalsim.stats.proportion._kernels import binom_logpmf, binom_sf_scalar
from evalsim.stats.simreal._joint_kernels import log_factorials

#: Coarsest dyadic level of the partition of [p0, 1] (2^COARSE cells of [0, 1]).
COARSE = 6
#: Binomial terms below exp(NEGLIGIBLE_LOG) are bounded instead of summed (corner_tail).
NEGLIGIBLE_LOG = -60.0


@nb.njit(cache=True)
def window_half_width(n_sim):
    """Half-width of every stored window: 10 sd of Binomial(N, 1/2) plus 25."""
    return int(math.ceil(10.0 * math.sqrt(n_sim / 4.0))) + 25


@nb.njit(cache=True)
def sf_table(n_sim, finest):
    """Storage for P(K >= x), K ~ Binomial(N, i / 2^finest), on a window of x per i; rows are
    filled when first read (:func:`fill_row`), since a search reads few of them.

    Returns
    -------
    lo : int64[2^finest + 1]
        The window's first x per rate.
    sf : float64[2^finest + 1, width]
        sf[i, x - lo[i]]; the last column holds P(K >= lo[i] + width - 1), the mass above the
        window included.
    ready : bool[2^finest + 1]
        Whether row i is filled.
    """
    cells = 1 << finest
    h = window_half_width(n_sim)
    width = 2 * h + 2
    lo = np.zeros(cells + 1, dtype=np.int64)
    for i in range(cells + 1):
        # the window ends at N + 1 at the latest, where the tail is exactly 0
        lo[i] = max(0, min(int(math.floor(n_sim * (i / cells))) - h, n_sim + 2 - width))
    return lo, np.zeros((cells + 1, width)), np.zeros(cells + 1, dtype=np.bool_)


@nb.njit(cache=True)
def fill_row(n_sim, finest, i, lo, sf, ready):
    """Fill row i of the tail table (summed from the top of the window down)."""
    b = i / (1 << finest)
    width = sf.shape[1]
    start = lo[i]
    top = start + width - 1  # x of the last column
    acc = binom_sf_scalar(top - 1, n_sim, b) if top <= n_sim else 0.0  # P(K >= top)
    sf[i, width - 1] = acc
    for c in range(width - 2, -1, -1):
        x = start + c
        if x <= n_sim:
            acc += math.exp(binom_logpmf(x, n_sim, b))
        sf[i, c] = min(acc, 1.0)
    ready[i] = True


@nb.njit(cache=True)
def _sf(lo, sf, i, x):
    """P(K >= x) at rate i / 2^finest (row i filled), an upper bound outside the window."""
    c = x - lo[i]
    if c <= 0:
        return 1.0 if c < 0 else sf[i, 0]
    if c >= sf.shape[1]:
        return sf[i, sf.shape[1] - 1]
    return sf[i, c]


@nb.njit(cache=True)
def corner_tail(n, m, w, d, b_index, lf, lo, sf, ready, n_sim, finest):
    """sum_j Binomial(n, d)(j) P(K >= w + m j), K at the tabled rate ``b_index``.

    Terms of log-probability below :data:`NEGLIGIBLE_LOG` are counted at their probability
    without reading the tail (an upper bound, since the tail is at most 1); past the mode,
    where the pmf falls, the first such term stands for all the rest ((n - j + 1) times its
    probability), so the sum stays an upper bound of the exact one."""
    if not ready[b_index]:
        fill_row(n_sim, finest, b_index, lo, sf, ready)
    if d <= 0.0:
        return _sf(lo, sf, b_index, w)
    if d >= 1.0:
        return _sf(lo, sf, b_index, w + m * n)
    ld = math.log(d)
    lq = math.log1p(-d)
    mode = math.floor((n + 1) * d)
    s = 0.0
    for j in range(n + 1):
        lp = lf[n] - lf[j] - lf[n - j] + j * ld + (n - j) * lq
        if lp < NEGLIGIBLE_LOG:
            if j > mode:
                s += (n - j + 1) * math.exp(lp)
                break
            s += math.exp(lp)
            continue
        s += math.exp(lp) * _sf(lo, sf, b_index, w + m * j)
    return s


@nb.njit(cache=True)
def sup_tail_le(n, m, w, p0, threshold, finest, lf, lo, sf, ready, n_sim):
    """True when sup over p_S in [0, 1] of P(W >= w) under p_R = p0 is certified <= threshold.

    Cells of [p0, 1] on the dyadic grid, from level :data:`COARSE` down to ``finest``; a cell
    whose corner tail exceeds the threshold is split, and at the finest level it decides
    (False)."""
    if threshold < 0.0:
        return False
    n_coarse = 1 << COARSE
    stack_level = np.empty(4 * finest + n_coarse + 4, dtype=np.int64)
    stack_index = np.empty(4 * finest + n_coarse + 4, dtype=np.int64)
    top = 0
    first = min(int(math.floor(p0 * n_coarse)), n_coarse - 1)
    for i in range(n_coarse - 1, first - 1, -1):
        stack_level[top] = COARSE
        stack_index[top] = i
        top += 1
    while top > 0:
        top -= 1
        level = stack_level[top]
        i = stack_index[top]
        size = 1 << level
        a = max(p0, i / size)
        if a >= (i + 1) / size and i + 1 < size:
            continue  # the cell lies below p0
        b_index = (i + 1) << (finest - level)
        if (
            corner_tail(n, m, w, max(a - p0, 0.0), b_index, lf, lo, sf, ready, n_sim, finest)
            <= threshold
        ):
            continue
        if level >= finest:
            return False
        for child in (2 * i + 1, 2 * i):
            stack_level[top] = level + 1
            stack_index[top] = child
            top += 1
    return True


@nb.njit(cache=True)
def discordant_critical(n, m, n_sim, level, grid, finest, lo, sf, ready):
    """For each rate p0 of ``grid`` (ascending), the smallest w whose certified tail is at
    most ``level`` (N + 1 when none); non-decreasing in p0."""
    lf = log_factorials(n)
    w_min = -m * n
    crit = np.empty(grid.size, dtype=np.int64)
    start = w_min
    for g in range(grid.size):
        # the answer is in [start, N + 1]; gallop up from start (it moves little between
        # neighbouring rates), then bisect
        a, b = start, n_sim + 1
        step = 1
        while a < b:
            probe = min(a + step - 1, b)
            if sup_tail_le(n, m, probe, grid[g], level, finest, lf, lo, sf, ready, n_sim):
                b = probe
                break
            a = probe + 1
            step *= 2
        while a < b:
            mid = (a + b) // 2
            if sup_tail_le(n, m, mid, grid[g], level, finest, lf, lo, sf, ready, n_sim):
                b = mid
            else:
                a = mid + 1
        crit[g] = a
        start = a
    return crit


@nb.njit(cache=True)
def final_bounds(n, m, n_sim, alpha_side, grid, finest, lo, sf, ready, values, y_of, w_of):
    """The lower bound for each statistic value t = values[v]: the largest rate of ``grid``
    at which 1 - (1 - P(Y >= y_t)) (1 - sup P(W >= w_t)) <= alpha_side, with
    y_t = y_of[v], w_t = w_of[v] (0 when no rate is rejected).

    The p-value is non-decreasing in p0, so the rejected rates form a prefix of the grid
    (bisection); ``values`` ascend, y_of and w_of with them, so each bound is at least the
    previous one, which starts the next bisection."""
    lf = log_factorials(n)
    out = np.zeros(values.size)
    floor = -1  # values ascend and the bound with them: the last answer brackets the next
    for v in range(values.size):
        a, b = floor, grid.size - 1  # largest rejected index in [a, b]; -1 none
        while a < b:
            mid = (a + b + 1) // 2
            if _rejects(
                n, m, n_sim, grid[mid], y_of[v], w_of[v], alpha_side, finest, lf, lo, sf, ready
            ):
                a = mid
            else:
                b = mid - 1
        out[v] = grid[a] if a >= 0 else 0.0
        floor = a
    return out


@nb.njit(cache=True)
def _rejects(n, m, n_sim, p0, y_t, w_t, alpha_side, finest, lf, lo, sf, ready):
    """Whether the combined test rejects p_R = p0 (see :func:`final_bounds`)."""
    p_y = binom_sf_scalar(y_t - 1, n, p0) if y_t > 0 else 1.0  # P(Y >= y_t)
    if p_y > alpha_side:
        return False
    allowed = 1.0 - (1.0 - alpha_side) / (1.0 - p_y)
    return sup_tail_le(n, m, w_t, p0, allowed, finest, lf, lo, sf, ready, n_sim)


@nb.njit(cache=True)
def coverage_width(n, n_sim, m, p_real, p11, p10, p01, p00, pmf_sim, ks_lo, lower, cp_lo, cp_hi):
    """Exact coverage, expected width and enumerated probability of ``full_joint_exact`` at
    one joint law: every pair table (multinomial, cells below exp(-40) skipped) times the
    simulated counts ks_lo.. with probabilities ``pmf_sim``; ``lower[y, w + m n]`` is the
    lower bound table, the upper bound is 1 - lower at the failures."""
    lf = log_factorials(n)
    l11 = math.log(p11) if p11 > 0 else -1e300
    l10 = math.log(p10) if p10 > 0 else -1e300
    l01 = math.log(p01) if p01 > 0 else -1e300
    l00 = math.log(p00) if p00 > 0 else -1e300
    off = m * n
    cov = 0.0
    wid = 0.0
    tot = 0.0
    for n10 in range(n + 1):
        for n01 in range(n - n10 + 1):
            for n11 in range(n - n10 - n01 + 1):
                n00 = n - n10 - n01 - n11
                lp = lf[n] - lf[n11] - lf[n10] - lf[n01] - lf[n00]
                lp += (n11 * l11 if n11 > 0 else 0.0) + (n10 * l10 if n10 > 0 else 0.0)
                lp += (n01 * l01 if n01 > 0 else 0.0) + (n00 * l00 if n00 > 0 else 0.0)
                if lp < -40.0:
                    continue
                pt = math.exp(lp)
                y = n11 + n10
                for i in range(pmf_sim.size):
                    k = ks_lo + i
                    lo_b = lower[y, k - m * n01 + off]
                    hi_b = 1.0 - lower[n - y, (n_sim - k) - m * n10 + off]
                    if lo_b > hi_b:
                        lo_b = cp_lo[y]
                        hi_b = cp_hi[y]
                    w = pt * pmf_sim[i]
                    tot += w
                    wid += w * (hi_b - lo_b)
                    if lo_b <= p_real <= hi_b:
                        cov += w
    return cov, wid, tot

"""Numba kernels of :mod:`evalsim.stats.selection` (no validation, no I/O).

Fixed-n selection sums (the probability that each arm is picked and its expected count when
picked), the least-favourable-configuration scan over n, the pairwise any-dependence bound,
and the exact permutation laws of Cochran's Q and of the ladder's trend statistic. The
elimination kernels are in ``_elimination_kernels``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_pmf_vector

TIE_RANDOM = 0
TIE_NO_PICK = 1


@njit(cache=True)
def pmf_below_table(n, rates):
    """``pmf[i, x] = P(X_i = x)`` and ``below[i, x] = P(X_i < x)`` for X_i ~ Bin(n, rates[i]),
    x = 0..n (``below`` summed upwards from 0, so it is a plain sum of the pmf)."""
    k = rates.size
    pmf = np.empty((k, n + 1), dtype=np.float64)
    below = np.empty((k, n + 1), dtype=np.float64)
    for i in range(k):
        pmf[i, :] = binom_pmf_vector(n, rates[i])
        s = 0.0
        for x in range(n + 1):
            below[i, x] = s
            s += pmf[i, x]
    return pmf, below


@njit(cache=True)
def _win_weight(pmf, below, j, x, tie_rule, coef):
    """P(arm j is picked | X_j = x): the others all below x (no pick), or all at most x with
    the ties broken uniformly: E[1/(1+T)], T = others at x, = int_0^1 prod(F + f z) dz."""
    k = pmf.shape[0]
    if tie_rule == TIE_NO_PICK:
        w = 1.0
        for i in range(k):
            if i != j:
                w *= below[i, x]
        return w
    coef[:] = 0.0
    coef[0] = 1.0
    deg = 0
    for i in range(k):
        if i == j:
            continue
        a = below[i, x]
        b = pmf[i, x]
        for t in range(deg + 1, 0, -1):
            coef[t] = coef[t] * a + coef[t - 1] * b
        coef[0] *= a
        deg += 1
    w = 0.0
    for t in range(deg + 1):
        w += coef[t] / (t + 1.0)
    return w


@njit(cache=True)
def selection_sums(pmf, below, tie_rule):
    """For every arm j: P(S = j) and E[X_j 1{S = j}] (S the picked arm).

    The sums over x of P(X_j = x) P(j picked | X_j = x), and the same weighted by x.
    """
    k, m = pmf.shape
    p_sel = np.zeros(k)
    e_count = np.zeros(k)
    coef = np.zeros(k + 1)
    for j in range(k):
        ps = 0.0
        ec = 0.0
        for x in range(m):
            f = pmf[j, x]
            if f == 0.0:
                continue
            w = f * _win_weight(pmf, below, j, x, tie_rule, coef)
            ps += w
            ec += x * w
        p_sel[j] = ps
        e_count[j] = ec
    return p_sel, e_count


@njit(cache=True)
def lfc_pcs(n, k, p_best, p_other, tie_rule):
    """PCS with the best arm at ``p_best`` and the k - 1 others at ``p_other`` (the
    least-favourable configuration), in O(n k): the others are exchangeable, so
    int_0^1 (F + f z)^(k-1) dz = sum_t C(k-1, t) F^(k-1-t) f^t / (t + 1), all terms positive."""
    fb = binom_pmf_vector(n, p_best)
    fo = binom_pmf_vector(n, p_other)
    below = 0.0
    pcs = 0.0
    for x in range(n + 1):
        f = fo[x]
        if tie_rule == TIE_NO_PICK:
            w = below ** (k - 1)
        else:
            w = 0.0
            c = 1.0  # C(k-1, t)
            for t in range(k):
                w += c * below ** (k - 1 - t) * f**t / (t + 1.0)
                c = c * (k - 1 - t) / (t + 1.0)
        pcs += fb[x] * w
        below += f
    return pcs


@njit(cache=True)
def lfc_first_n(k, p_best, p_other, tie_rule, target, n_max):
    """The first n in 1..n_max with LFC PCS >= target (0 when none), and its PCS."""
    for n in range(1, n_max + 1):
        v = lfc_pcs(n, k, p_best, p_other, tie_rule)
        if v >= target:
            return n, v
    return 0, 0.0


@njit(cache=True)
def _log_factorials(n):
    out = np.zeros(n + 1)
    for i in range(1, n + 1):
        out[i] = out[i - 1] + math.log(i)
    return out


@njit(cache=True)
def trinomial_not_ahead_bound(n, u, v, w):
    """sum over a <= c, a + c <= n of n!/(a! c! (n-a-c)!) u^a v^c w^(n-a-c): P(the arm with
    per-condition lead probability u is not ahead of the one with v after n conditions) when
    (u, v, w) are the cell probabilities; an upper bound when they are upper bounds."""
    lf = _log_factorials(n)
    lu = math.log(u) if u > 0 else -np.inf
    lv = math.log(v) if v > 0 else -np.inf
    lw = math.log(w) if w > 0 else -np.inf
    s = 0.0
    for a in range(n + 1):
        for c in range(a, n - a + 1):
            r = n - a - c
            t = lf[n] - lf[a] - lf[c] - lf[r]
            if a > 0:
                if u <= 0:
                    continue
                t += a * lu
            if c > 0:
                if v <= 0:
                    continue
                t += c * lv
            if r > 0:
                if w <= 0:
                    continue
                t += r * lw
            s += math.exp(t)
    return s


@njit(cache=True)
def pair_any_dependence_bound(n, p_best, p_other, pieces):
    """An upper bound on max over the joint law of one condition's two outcomes (marginals
    fixed) of P(X_other >= X_best): the joint success probability pi runs over
    [max(0, p_b + p_o - 1), min(p_b, p_o)]; on each of ``pieces`` sub-intervals the cells
    (p_b - pi, p_o - pi, 1 - p_b - p_o + 2 pi) are bounded above by their sub-interval
    maxima, so every term of the trinomial sum is bounded above."""
    lo = max(0.0, p_best + p_other - 1.0)
    hi = min(p_best, p_other)
    worst = 0.0
    for q in range(pieces):
        a = lo + (hi - lo) * q / pieces
        b = lo + (hi - lo) * (q + 1) / pieces
        u = p_best - a
        v = p_other - a
        w = 1.0 - p_best - p_other + 2.0 * b
        val = trinomial_not_ahead_bound(n, max(u, 0.0), max(v, 0.0), max(w, 0.0))
        if val > worst:
            worst = val
    return min(worst, 1.0)


@njit(cache=True)
def cochran_sumsq_law(row_totals, k, max_states):
    """Exact law of sum_j C_j^2 (C the column totals) when each row's successes fall on a
    uniformly random subset of the k columns (permutation within rows), by dynamic
    programming over the column-total vector. Returns (values, probabilities), or empty
    arrays when the state space would exceed ``max_states``.

    After r rows every column total is at most r, so row r only visits the box [0, r]^k of
    the flattened state (an odometer over it), and the rows' subsets are the masks of their
    size."""
    n_rows = row_totals.size
    dim = n_rows + 1
    size = 1
    for _ in range(k):
        size *= dim
        if size > max_states:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
    stride = np.empty(k, dtype=np.int64)
    s = 1
    for j in range(k - 1, -1, -1):
        stride[j] = s
        s *= dim
    n_sub = 1 << k
    offsets = np.zeros(n_sub, dtype=np.int64)
    card = np.zeros(n_sub, dtype=np.int64)
    for mask in range(n_sub):
        for j in range(k):
            if mask >> j & 1:
                offsets[mask] += stride[j]
                card[mask] += 1
    prob = np.zeros(size)
    new = np.zeros(size)
    prob[0] = 1.0
    digits = np.zeros(k, dtype=np.int64)
    for r in range(n_rows):
        tot = row_totals[r]
        masks = np.empty(n_sub, dtype=np.int64)
        n_choose = 0
        for mask in range(n_sub):
            if card[mask] == tot:
                masks[n_choose] = mask
                n_choose += 1
        share = 1.0 / n_choose
        # the box [0, r + 1]^k of the next state is cleared, then filled from [0, r]^k
        digits[:] = 0
        while True:
            idx = 0
            for j in range(k):
                idx += digits[j] * stride[j]
            new[idx] = 0.0
            j = k - 1
            while j >= 0 and digits[j] == r + 1:
                digits[j] = 0
                j -= 1
            if j < 0:
                break
            digits[j] += 1
        digits[:] = 0
        while True:
            idx = 0
            for j in range(k):
                idx += digits[j] * stride[j]
            pv = prob[idx]
            if pv != 0.0:
                for q in range(n_choose):
                    new[idx + offsets[masks[q]]] += pv * share
            j = k - 1
            while j >= 0 and digits[j] == r:
                digits[j] = 0
                j -= 1
            if j < 0:
                break
            digits[j] += 1
        prob, new = new, prob
    # collect sum of squares
    max_ss = k * n_rows * n_rows
    law = np.zeros(max_ss + 1)
    for idx in range(size):
        pv = prob[idx]
        if pv == 0.0:
            continue
        rem = idx
        ss = 0
        for j in range(k):
            c = rem // stride[j]
            rem -= c * stride[j]
            ss += c * c
        law[ss] += pv
    cnt = 0
    for v in range(max_ss + 1):
        if law[v] > 0.0:
            cnt += 1
    vals = np.empty(cnt, dtype=np.int64)
    probs = np.empty(cnt)
    i = 0
    for v in range(max_ss + 1):
        if law[v] > 0.0:
            vals[i] = v
            probs[i] = law[v]
            i += 1
    return vals, probs


@njit(cache=True)
def within_row_score_law(rows, scores):
    """Exact law of T = sum over rows of the scores of the columns holding the row's
    successes, each row's successes on a uniformly random subset of its columns.

    ``rows``: (n_rows, k) 0/1; ``scores``: int64 (k,), non-negative. Returns the
    probability of every T = 0..sum of the largest scores (dense)."""
    n_rows, k = rows.shape
    top = 0
    for r in range(n_rows):
        tot = 0
        for j in range(k):
            tot += rows[r, j]
        srt = np.sort(scores)[::-1]
        for j in range(tot):
            top += srt[j]
    law = np.zeros(top + 1)
    law[0] = 1.0
    n_sub = 1 << k
    for r in range(n_rows):
        tot = 0
        for j in range(k):
            tot += rows[r, j]
        if tot == 0 or tot == k:
            # every arrangement gives the same score: shift the law
            shift = 0
            for j in range(k):
                shift += scores[j] * rows[r, j]
            if shift > 0:
                law[shift:] = law[: top + 1 - shift].copy()
                law[:shift] = 0.0
            continue
        n_choose = 0
        for mask in range(n_sub):
            c = 0
            for j in range(k):
                c += mask >> j & 1
            if c == tot:
                n_choose += 1
        new = np.zeros(top + 1)
        for mask in range(n_sub):
            c = 0
            sc = 0
            for j in range(k):
                if mask >> j & 1:
                    c += 1
                    sc += scores[j]
            if c != tot:
                continue
            for t in range(top + 1 - sc):
                new[t + sc] += law[t] / n_choose
        law = new
    return law


@njit(cache=True)
def hypergeometric_score_law(n_cols, scores, total):
    """Exact law of T = sum_j scores[j] k_j when ``total`` successes fall on the trials of
    the columns uniformly (column j has n_cols[j] trials): the multivariate hypergeometric,
    by dynamic programming over (successes placed, T) with log-binomial weights.

    Returns a dense (top + 1,) array of probabilities of T = 0..top."""
    k = n_cols.size
    n_all = 0
    for j in range(k):
        n_all += n_cols[j]
    lf = _log_factorials(n_all)
    top = 0
    for j in range(k):
        top += scores[j] * n_cols[j]
    # w[s, t]: sum over placements of s successes in the columns so far with score t of
    # prod C(n_j, k_j), kept relative to C(n_all, total) at the end
    w = np.zeros((total + 1, top + 1))
    w[0, 0] = 1.0
    # C(n_all, total) spread over the columns in proportion to their trials (no overflow)
    log_norm = lf[n_all] - lf[total] - lf[n_all - total]
    for j in range(k):
        nj = n_cols[j]
        sj = scores[j]
        new = np.zeros((total + 1, top + 1))
        for s in range(total + 1):
            for t in range(top + 1):
                v = w[s, t]
                if v == 0.0:
                    continue
                for kj in range(min(nj, total - s) + 1):
                    c = math.exp(lf[nj] - lf[kj] - lf[nj - kj] - log_norm * nj / n_all)
                    new[s + kj, t + sj * kj] += v * c
        w = new
    return w[total, :].copy()

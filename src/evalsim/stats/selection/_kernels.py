"""Numba kernels of :mod:`evalsim.stats.selection` (no validation, no I/O).

Fixed-n selection sums (the probability that each arm is picked and its expected count when
picked), the least-favourable-configuration scan over n, the pairwise any-dependence bound,
and the exact permutation laws of Cochran's Q and of the ladder's trend statistic.
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


KIND_PAIRED = 0
KIND_UNPAIRED = 1


@njit(cache=True)
def _pair_rejects(kind, t, n_max, s_lead, s_j, w_lead, d, up2, up1, fin1):
    """Does the certified one-sided test find arm j worse than the leader after t rounds?

    Unpaired: the design's look t (trials per arm), rule k_B >= upper[t-1, k_A] with A = j,
    B = the leader. Paired: the sign walk of the leader-only pairs w over the discordant
    pairs d, interim rows, and the final rows at the last round."""
    if kind == KIND_UNPAIRED:
        return s_lead >= up2[t - 1, s_j]
    if d == 0:
        return False
    if t == n_max:
        return w_lead >= fin1[d]
    return w_lead >= up1[d]


@njit(cache=True)
def elimination_mc(rates, n_max, kind, up2, up1, fin1, reps, rng):
    """Monte Carlo of successive elimination: per study (single survivor, the survivor is
    the best, best eliminated, rounds, trials). Arms independent within a round; ``rng`` a
    ``numpy.random.Generator``."""
    k = rates.size
    best = 0
    for i in range(k):
        if rates[i] > rates[best]:
            best = i
    single = np.zeros(reps, dtype=np.bool_)
    correct = np.zeros(reps, dtype=np.bool_)
    lost_best = np.zeros(reps, dtype=np.bool_)
    rounds = np.zeros(reps, dtype=np.int64)
    trials = np.zeros(reps, dtype=np.int64)
    x = np.zeros(k, dtype=np.int64)
    for r in range(reps):
        alive = np.ones(k, dtype=np.bool_)
        s = np.zeros(k, dtype=np.int64)
        w = np.zeros((k, k), dtype=np.int64)  # w[i, j]: rounds with i success, j failure
        n_alive = k
        t = 0
        tr = 0
        while n_alive > 1 and t < n_max:
            t += 1
            for i in range(k):
                if alive[i]:
                    x[i] = 1 if rng.random() < rates[i] else 0
                    s[i] += x[i]
                    tr += 1
            for i in range(k):
                if alive[i] and x[i] == 1:
                    for j in range(k):
                        if alive[j] and x[j] == 0:
                            w[i, j] += 1
            lead = -1
            for i in range(k):
                if alive[i] and (lead < 0 or s[i] > s[lead]):
                    lead = i
            drop = np.zeros(k, dtype=np.bool_)
            for j in range(k):
                if alive[j] and j != lead:
                    d = w[lead, j] + w[j, lead]
                    if _pair_rejects(kind, t, n_max, s[lead], s[j], w[lead, j], d, up2, up1, fin1):
                        drop[j] = True
            for j in range(k):
                if drop[j]:
                    alive[j] = False
                    n_alive -= 1
        single[r] = n_alive == 1
        correct[r] = n_alive == 1 and alive[best]
        lost_best[r] = not alive[best]
        rounds[r] = t
        trials[r] = tr
    return single, correct, lost_best, rounds, trials


@njit(cache=True)
def elimination_dp3(rates, n_max, up2):
    """Exact law of successive elimination with unpaired rows for K = 2 or 3 arms,
    independent within a round, by dynamic programming over the success counts.

    Returns (p_single_correct, p_single, p_best_eliminated, e_rounds, e_trials)."""
    k = rates.size
    best = 0
    for i in range(k):
        if rates[i] > rates[best]:
            best = i
    m = n_max + 1
    # all-alive state: counts of every arm (k = 3: m^3; k = 2: m^2 with the third fixed 0)
    three = k == 3
    full = np.zeros((m, m, m if three else 1))
    full[0, 0, 0] = 1.0
    # two-alive states for the pairs (a, b) with a < b
    pa = np.array([0, 0, 1])
    pb = np.array([1, 2, 2])
    n_pairs = 3 if three else 0
    two = np.zeros((3, m, m))
    p_single_correct = 0.0
    p_single = 0.0
    p_best_out = 0.0
    e_rounds = 0.0
    e_trials = 0.0
    for t in range(1, n_max + 1):
        # trials this round: every state alive now pays its arms
        mass_full = full.sum()
        mass_two = 0.0
        for q in range(n_pairs):
            mass_two += two[q].sum()
        e_trials += k * mass_full + 2.0 * mass_two
        e_rounds += mass_full + mass_two
        new_full = np.zeros_like(full)
        new_two = np.zeros_like(two)
        # all alive
        kk = 3 if three else 2
        for a in range(t):
            for b in range(t):
                for c in range(t if three else 1):
                    pv = full[a, b, c]
                    if pv == 0.0:
                        continue
                    for mask in range(1 << kk):
                        pr = 1.0
                        cnt = np.zeros(3, dtype=np.int64)
                        cnt[0] = a
                        cnt[1] = b
                        cnt[2] = c
                        for i in range(kk):
                            if mask >> i & 1:
                                pr *= rates[i]
                                cnt[i] += 1
                            else:
                                pr *= 1.0 - rates[i]
                        if pr == 0.0:
                            continue
                        lead = 0
                        for i in range(1, kk):
                            if cnt[i] > cnt[lead]:
                                lead = i
                        alive = np.ones(3, dtype=np.bool_)
                        if not three:
                            alive[2] = False
                        n_alive = kk
                        for j in range(kk):
                            if j != lead and cnt[lead] >= up2[t - 1, cnt[j]]:
                                alive[j] = False
                                n_alive -= 1
                        v = pv * pr
                        if n_alive == kk:
                            new_full[cnt[0], cnt[1], cnt[2]] += v
                        elif n_alive == 1:
                            p_single += v
                            if lead == best:
                                p_single_correct += v
                            else:
                                p_best_out += v
                        else:
                            # three arms, one dropped: the pair that stays
                            q = 0
                            if not alive[1]:
                                q = 1
                            elif not alive[0]:
                                q = 2
                            if not alive[best]:
                                p_best_out += v
                            new_two[q, cnt[pa[q]], cnt[pb[q]]] += v
        for q in range(n_pairs):
            ia = pa[q]
            ib = pb[q]
            for a in range(t):
                for b in range(t):
                    pv = two[q, a, b]
                    if pv == 0.0:
                        continue
                    for mask in range(4):
                        xa = mask & 1
                        xb = mask >> 1 & 1
                        pr = (rates[ia] if xa else 1.0 - rates[ia]) * (
                            rates[ib] if xb else 1.0 - rates[ib]
                        )
                        if pr == 0.0:
                            continue
                        ca = a + xa
                        cb = b + xb
                        v = pv * pr
                        if cb > ca:
                            if cb >= up2[t - 1, ca]:
                                p_single += v
                                if ib == best:
                                    p_single_correct += v
                                elif ia == best:
                                    p_best_out += v
                                continue
                        elif ca >= up2[t - 1, cb]:
                            p_single += v
                            if ia == best:
                                p_single_correct += v
                            elif ib == best:
                                p_best_out += v
                            continue
                        new_two[q, ca, cb] += v
        full = new_full
        two = new_two
    return p_single_correct, p_single, p_best_out, e_rounds, e_trials


@njit(cache=True)
def elimination_dp2_paired(rates, n_max, up1, fin1):
    """Exact law of elimination with paired rows for K = 2 (arms independent within a
    round), by dynamic programming over (w, d): w rounds where only arm 0 succeeded, d
    discordant rounds. Returns the same five numbers as :func:`elimination_dp3`."""
    best = 1 if rates[1] > rates[0] else 0
    p10 = rates[0] * (1.0 - rates[1])
    p01 = (1.0 - rates[0]) * rates[1]
    same = 1.0 - p10 - p01
    m = n_max + 1
    cur = np.zeros((m, m))  # cur[w, d]
    cur[0, 0] = 1.0
    sc = 0.0
    single = 0.0
    out = 0.0
    rounds = 0.0
    trials = 0.0
    for t in range(1, n_max + 1):
        alive = cur.sum()
        rounds += alive
        trials += 2.0 * alive
        new = np.zeros((m, m))
        for d in range(t):
            for w in range(d + 1):
                pv = cur[w, d]
                if pv == 0.0:
                    continue
                for step in range(3):
                    if step == 0:
                        pr, w2, d2 = same, w, d
                    elif step == 1:
                        pr, w2, d2 = p10, w + 1, d + 1
                    else:
                        pr, w2, d2 = p01, w, d + 1
                    if pr == 0.0:
                        continue
                    v = pv * pr
                    lead = 0 if 2 * w2 >= d2 else 1
                    w_lead = w2 if lead == 0 else d2 - w2
                    hit = False
                    if d2 > 0:
                        hit = w_lead >= (fin1[d2] if t == n_max else up1[d2])
                    if hit:
                        single += v
                        if lead == best:
                            sc += v
                        else:
                            out += v
                    else:
                        new[w2, d2] += v
        cur = new
    return sc, single, out, rounds, trials

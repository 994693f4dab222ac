"""Numba kernels of :mod:`evalsim.stats.selection.elimination` (no validation, no I/O):
successive elimination of K arms, by Monte Carlo (any K, paired or unpaired rows) and by
exact dynamic programming (K <= 3 with unpaired rows, K = 2 with paired rows)."""

from __future__ import annotations

import numpy as np
from numba import njit

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

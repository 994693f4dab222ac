"""Numba kernels of the sequential designs: exact DPs, calibration and certification.

Private: :mod:`evalsim.stats.sequential.designs` and :mod:`evalsim.stats.sequential.paired` validate
every argument. Conventions:

* Unpaired designs look at ``look_sizes[j]`` trials per policy. A look's decision rule is
  given by four int64 rows indexed by ``k_A`` (padded to ``n_max + 1`` columns): verdict
  "B better" when ``k_B >= upper[j, k_A]``, "A better" when ``k_B <= lower[j, k_A]``,
  futility stop when ``fut_lo[j, k_A] <= k_B <= fut_hi[j, k_A]`` (checked in that order).
  "Never" is ``m + 1`` for ``upper`` and ``-1`` for ``lower``; an empty futility band has
  ``fut_lo > fut_hi``.
* Verdict codes: 0 none (still running / reached the end), 1 B better, 2 A better,
  3 futility stop.
* Paired designs: :mod:`evalsim.stats.sequential._paired_kernels`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.proportion._kernels import binom_logpmf


@njit(cache=True)
def pooled_z(k_a, k_b, m):
    """Pooled two-proportion z of ``k_b/m - k_a/m`` (0 when all or no trials succeeded)."""
    s = k_a + k_b
    if s == 0 or s == 2 * m:
        return 0.0
    return (k_b - k_a) * math.sqrt(2.0 * m) / math.sqrt(s * (2.0 * m - s))


@njit(cache=True)
def z_thresholds(look_sizes, crit, two_sided, n_max):
    """Integer rows of the rule "pooled z >= crit[j]" (and "<= -crit[j]" when two-sided).

    The pooled z is increasing in ``k_B`` at fixed ``k_A`` (checked in the tests), so each
    region is a threshold per ``k_A``. ``crit[j] = inf`` means no verdict at look j.
    """
    n_looks = look_sizes.shape[0]
    upper = np.empty((n_looks, n_max + 1), dtype=np.int64)
    lower = np.empty((n_looks, n_max + 1), dtype=np.int64)
    for j in range(n_looks):
        m = look_sizes[j]
        c = crit[j]
        for a in range(n_max + 1):
            upper[j, a] = m + 1
            lower[j, a] = -1
        for a in range(m + 1):
            u = m + 1
            for b in range(m, -1, -1):
                if pooled_z(a, b, m) >= c:
                    u = b
                else:
                    break
            upper[j, a] = u
            if two_sided:
                lo = -1
                for b in range(m + 1):
                    if pooled_z(a, b, m) <= -c:
                        lo = b
                    else:
                        break
                lower[j, a] = lo
    return upper, lower


@njit(cache=True)
def z_futility_rows(look_sizes, z_fut, start, two_sided, n_max):
    """Futility rows: stop when z <= z_fut (|z| <= z_fut two-sided) from look size ``start``."""
    n_looks = look_sizes.shape[0]
    lo = np.zeros((n_looks, n_max + 1), dtype=np.int64)
    hi = np.full((n_looks, n_max + 1), -1, dtype=np.int64)
    for j in range(n_looks):
        m = look_sizes[j]
        if m < start:
            continue
        for a in range(m + 1):
            first = -1
            last = -1
            for b in range(m + 1):
                z = pooled_z(a, b, m)
                inside = z <= z_fut
                if two_sided:
                    inside = abs(z) <= z_fut
                if inside:
                    if first < 0:
                        first = b
                    last = b
            if first >= 0:
                lo[j, a] = first
                hi[j, a] = last
    return lo, hi


@njit(cache=True)
def _verdict(a, b, j, upper, lower, fut_lo, fut_hi):
    if b >= upper[j, a]:
        return 1
    if b <= lower[j, a]:
        return 2
    if fut_lo[j, a] <= b <= fut_hi[j, a]:
        return 3
    return 0


@njit(cache=True)
def _step(dist, work, t, wa1, wa0, wb1, wb0):
    """One more trial per policy, in place on ``dist``: counts at most t -> at most t + 1.

    Arm A then arm B, each a two-term convolution (weights, not necessarily normalised).
    """
    for b in range(t + 1):
        work[0, b] = wa0 * dist[0, b]
        work[t + 1, b] = wa1 * dist[t, b]
    for a in range(1, t + 1):
        for b in range(t + 1):
            work[a, b] = wa0 * dist[a, b] + wa1 * dist[a - 1, b]
    for a in range(t + 2):
        dist[a, 0] = wb0 * work[a, 0]
        for b in range(1, t + 1):
            dist[a, b] = wb0 * work[a, b] + wb1 * work[a, b - 1]
        dist[a, t + 1] = wb1 * work[a, t]


@njit(cache=True)
def unpaired_oc(p_a, p_b, look_sizes, upper, lower, fut_lo, fut_hi):
    """Exact operating characteristics of an unpaired design.

    Returns
    -------
    float64[L, 4]
        ``out[j, v]`` = P(the design stops at look j with verdict v) for v = 1, 2, 3;
        ``out[L-1, 0]`` = P(no verdict by the last look).
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    new = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    dist[0, 0] = 1.0
    out = np.zeros((n_looks, 4), dtype=np.float64)
    t = 0
    for j in range(n_looks):
        m = look_sizes[j]
        while t < m:
            _step(dist, new, t, p_a, 1.0 - p_a, p_b, 1.0 - p_b)
            t += 1
        for a in range(m + 1):
            for b in range(m + 1):
                v = _verdict(a, b, j, upper, lower, fut_lo, fut_hi)
                if v > 0:
                    out[j, v] += dist[a, b]
                    dist[a, b] = 0.0
    rest = 0.0
    for a in range(n_max + 1):
        for b in range(n_max + 1):
            rest += dist[a, b]
    out[n_looks - 1, 0] = rest
    return out


@njit(cache=True)
def _carry_pair(carried, tmp, t):
    """Mass already stopped, by total successes s: one more null pair (p = 1/2 each) adds 0,
    1 or 2 successes with weights 1/4, 1/2, 1/4 (``t`` pairs so far; ``tmp`` is scratch)."""
    for s in range(2 * t + 3):
        v = 0.0
        if s <= 2 * t:
            v += 0.25 * carried[s]
        if 1 <= s <= 2 * t + 1:
            v += 0.5 * carried[s - 1]
        if s >= 2:
            v += 0.25 * carried[s - 2]
        tmp[s] = v
    for s in range(2 * t + 3):
        carried[s] = tmp[s]


@njit(cache=True)
def _null_dp_start(n_max):
    """The state of the null DP (p = 1/2) before the first pair.

    Parameters
    ----------
    n_max : int
        Trials per arm at the last look.

    Returns
    -------
    dist, new : float64[n_max + 1, n_max + 1]
        The running mass by (k_A, k_B) (all at (0, 0)) and the scratch of :func:`_step`.
    carried, tmp : float64[2 n_max + 1]
        The stopped mass by total successes (none yet) and the scratch of
        :func:`_carry_pair`.
    """
    dist = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    new = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    dist[0, 0] = 1.0
    carried = np.zeros(2 * n_max + 1, dtype=np.float64)
    tmp = np.zeros(2 * n_max + 1, dtype=np.float64)
    return dist, new, carried, tmp


@njit(cache=True)
def _null_pairs(dist, new, carried, tmp, t, m):
    """Advance the null DP from ``t`` to ``m`` pairs, running and stopped mass alike.

    Parameters
    ----------
    dist, new, carried, tmp : ndarray
        The state of :func:`_null_dp_start`, updated in place.
    t, m : int
        Pairs so far and pairs at the next look.

    Returns
    -------
    int
        The pairs now done (``max(t, m)``).
    """
    while t < m:
        _step(dist, new, t, 0.5, 0.5, 0.5, 0.5)
        _carry_pair(carried, tmp, t)
        t += 1
    return t


@njit(cache=True)
def unpaired_null_bernstein(look_sizes, upper, lower, count_upper, count_lower):
    """Bernstein coefficients of the null rejection probability of an unpaired design.

    Under p_A = p_B = p the 2 n_max trials (continued past a stop) are i.i.d., so
    ``R(p) = sum_s beta[s] C(2 n_max, s) p^s (1-p)^(2 n_max - s)`` where ``beta[s]`` is the
    probability of a rejection given s successes in all 2 n_max trials (sufficiency): a
    polynomial in Bernstein form whose coefficients lie in [0, 1]. Computed by the DP at
    p = 1/2 with the rejected mass carried on as a distribution over s. Verdicts counted:
    "B better" when ``count_upper``, "A better" when ``count_lower`` (futility is non-binding
    and ignored). Needs ``2 n_max <= 1000`` (p = 1/2 masses stay above the float64 range).

    Returns
    -------
    beta : float64[2 n_max + 1]
    by_look : float64[L, 2 n_max + 1]
        ``by_look[j, s]`` = P_{1/2}(rejected at a look <= j, S_{2 m_j} = s) where
        ``S_{2 m_j}`` counts the successes up to look j (the cumulative alpha spent is
        ``sum_s by_look[j, s] / b(s; 2 m_j, 1/2) * b(s; 2 m_j, p)``).
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist, new, carried, tmp = _null_dp_start(n_max)
    by_look = np.zeros((n_looks, 2 * n_max + 1), dtype=np.float64)
    t = 0
    for j in range(n_looks):
        m = look_sizes[j]
        t = _null_pairs(dist, new, carried, tmp, t, m)
        for a in range(m + 1):
            for b in range(m + 1):
                if (count_upper and b >= upper[j, a]) or (count_lower and b <= lower[j, a]):
                    carried[a + b] += dist[a, b]
                    dist[a, b] = 0.0
        for s in range(2 * m + 1):
            by_look[j, s] = carried[s]
    beta = np.empty(2 * n_max + 1, dtype=np.float64)
    for s in range(2 * n_max + 1):
        beta[s] = carried[s] / math.exp(binom_logpmf(s, 2 * n_max, 0.5))
        if beta[s] > 1.0:
            beta[s] = 1.0
    return beta, by_look


@njit(cache=True)
def bernstein_eval(beta, ps):
    """``R(p) = sum_s beta[s] b(s; N, p)`` at each p (N = len(beta) - 1)."""
    n = beta.shape[0] - 1
    out = np.empty(ps.shape[0], dtype=np.float64)
    for i in range(ps.shape[0]):
        acc = 0.0
        for s in range(n + 1):
            if beta[s] > 0.0:
                acc += beta[s] * math.exp(binom_logpmf(s, n, ps[i]))
        out[i] = acc
    return out


@njit(cache=True)
def _split(coef, left, right):
    """de Casteljau at the midpoint: Bernstein coefficients of both halves."""
    n = coef.shape[0] - 1
    work = coef.copy()
    left[0] = work[0]
    right[n] = work[n]
    for r in range(1, n + 1):
        for i in range(n - r + 1):
            work[i] = 0.5 * (work[i] + work[i + 1])
        left[r] = work[0]
        right[n - r] = work[n - r]


@njit(cache=True)
def bernstein_certify(beta, lo, hi, lower_start, tol, max_depth):
    """Rigorous upper bound of a Bernstein-form polynomial on [lo, hi] by subdivision.

    On an interval, a polynomial lies between the minimum and maximum of its Bernstein
    coefficients there [1]_; its end coefficients are its values at the ends. Intervals are
    split (de Casteljau at the midpoint) while their largest coefficient exceeds the best
    value found so far by more than ``tol``.

    Returns
    -------
    (upper, lower, p_at_lower, n_intervals, depth_reached)
        ``upper`` bounds the maximum on [lo, hi] from above; ``lower`` is a value attained
        (at ``p_at_lower``), so the maximum lies in [lower, upper].

    References
    ----------
    .. [1] Farouki (2012), "The Bernstein polynomial basis: a centennial retrospective",
       Computer Aided Geometric Design 29(6), 379-419.
    """
    n = beta.shape[0] - 1
    # restrict to [lo, hi]: split at lo then at (hi - lo) / (1 - lo) of the rest, by blossoming
    coef = _subinterval(beta, lo, hi)
    stack = np.empty((max_depth + 2, n + 1), dtype=np.float64)
    st_lo = np.empty(max_depth + 2, dtype=np.float64)
    st_hi = np.empty(max_depth + 2, dtype=np.float64)
    st_depth = np.empty(max_depth + 2, dtype=np.int64)
    top = 0
    stack[0, :] = coef
    st_lo[0] = lo
    st_hi[0] = hi
    st_depth[0] = 0
    best = lower_start[0]
    best_p = lower_start[1]
    for end in range(2):
        v = coef[0] if end == 0 else coef[n]
        if v > best:
            best = v
            best_p = lo if end == 0 else hi
    upper = 0.0
    n_int = 0
    deepest = 0
    left = np.empty(n + 1, dtype=np.float64)
    right = np.empty(n + 1, dtype=np.float64)
    while top >= 0:
        c = stack[top]
        a = st_lo[top]
        b = st_hi[top]
        dep = st_depth[top]
        top -= 1
        n_int += 1
        cmax = c.max()
        if cmax <= best + tol or dep >= max_depth:
            if cmax > upper:
                upper = cmax
            if dep > deepest:
                deepest = dep
            continue
        _split(c, left, right)
        mid = 0.5 * (a + b)
        if left[n] > best:
            best = left[n]
            best_p = mid
        # push the half with the larger maximum last, so it is explored first
        first_right = left.max() >= right.max()
        for k in range(2):
            use_left = (k == 0) != first_right
            top += 1
            if use_left:
                stack[top, :] = left
                st_lo[top] = a
                st_hi[top] = mid
            else:
                stack[top, :] = right
                st_lo[top] = mid
                st_hi[top] = b
            st_depth[top] = dep + 1
    return upper, best, best_p, n_int, deepest


@njit(cache=True)
def _subinterval(beta, lo, hi):
    """Bernstein coefficients on [lo, hi] of the polynomial with coefficients beta on [0, 1]."""
    n = beta.shape[0] - 1
    coef = beta.copy()
    if lo > 0.0:
        # right part of a de Casteljau split at lo
        work = coef.copy()
        out = np.empty(n + 1, dtype=np.float64)
        out[n] = work[n]
        for r in range(1, n + 1):
            for i in range(n - r + 1):
                work[i] = (1.0 - lo) * work[i] + lo * work[i + 1]
            out[n - r] = work[n - r]
        coef = out
    if hi < 1.0:
        u = (hi - lo) / (1.0 - lo)
        work = coef.copy()
        out = np.empty(n + 1, dtype=np.float64)
        out[0] = work[0]
        for r in range(1, n + 1):
            for i in range(n - r + 1):
                work[i] = (1.0 - u) * work[i] + u * work[i + 1]
            out[r] = work[0]
        coef = out
    return coef


@njit(cache=True)
def _ratio_rows(m, ps):
    """``b(s; 2m, p_g) / b(s; 2m, 1/2)`` for every grid p and s = 0..2m."""
    g = ps.shape[0]
    out = np.empty((g, 2 * m + 1), dtype=np.float64)
    for i in range(g):
        l1 = math.log(2.0 * ps[i])
        l0 = math.log(2.0 * (1.0 - ps[i]))
        for s in range(2 * m + 1):
            out[i, s] = math.exp(s * l1 + (2 * m - s) * l0)
    return out


@njit(cache=True)
def calibrate_spending_z(look_sizes, targets, two_sided, ps, tol):
    """Critical values of the pooled z, look by look, from an alpha-spending schedule.

    At look j the critical value is the smallest c (to ``tol``) such that the probability of
    a rejection by look j, maximised over the grid ``ps`` of common rates, is at most
    ``targets[j]``. Masses are propagated at p = 1/2 and reweighted exactly to every grid p
    through the sufficient statistic (total successes), as in
    :func:`unpaired_null_bernstein`.

    Returns
    -------
    float64[L]
        Critical values (``inf`` where no rejection fits the budget).
    """
    n_looks = look_sizes.shape[0]
    n_max = look_sizes[n_looks - 1]
    dist, new, carried, tmp = _null_dp_start(n_max)
    crit = np.empty(n_looks, dtype=np.float64)
    n_grid = ps.shape[0]
    t = 0
    for j in range(n_looks):
        m = look_sizes[j]
        t = _null_pairs(dist, new, carried, tmp, t, m)
        ratio = _ratio_rows(m, ps)
        # per anti-diagonal s: states by k_a ascending (z descending), with prefix sums of
        # the mass from the high-z end and from the low-z end
        n_s = 2 * m + 1
        zmax = 0.0
        a0 = np.empty(n_s, dtype=np.int64)
        cnt = np.empty(n_s, dtype=np.int64)
        for s in range(n_s):
            a0[s] = max(0, s - m)
            cnt[s] = min(m, s) - a0[s] + 1
            z = pooled_z(a0[s], s - a0[s], m)
            if z > zmax:
                zmax = z
        new_s = np.zeros(n_s, dtype=np.float64)
        lo_c = 0.0
        hi_c = zmax + 1.0
        for _ in range(200):
            if hi_c - lo_c <= tol:
                break
            c = 0.5 * (lo_c + hi_c)
            for s in range(n_s):
                acc = 0.0
                for i in range(cnt[s]):
                    a = a0[s] + i
                    if pooled_z(a, s - a, m) >= c:
                        acc += dist[a, s - a]
                    else:
                        break
                if two_sided:
                    for i in range(cnt[s] - 1, -1, -1):
                        a = a0[s] + i
                        if pooled_z(a, s - a, m) <= -c:
                            acc += dist[a, s - a]
                        else:
                            break
                new_s[s] = acc + carried[s]
            worst = 0.0
            for g in range(n_grid):
                r = 0.0
                for s in range(n_s):
                    r += new_s[s] * ratio[g, s]
                if r > worst:
                    worst = r
            if worst <= targets[j]:
                hi_c = c
            else:
                lo_c = c
        c = hi_c
        if c > zmax:
            c = np.inf
        crit[j] = c
        for a in range(m + 1):
            for b in range(m + 1):
                z = pooled_z(a, b, m)
                if z >= c or (two_sided and z <= -c):
                    carried[a + b] += dist[a, b]
                    dist[a, b] = 0.0
    return crit


@njit(cache=True)
def unpaired_mc(p_a, p_b, n_experiments, rng, look_sizes, upper, lower, fut_lo, fut_hi):
    """Simulate experiments; per experiment the look index of its stop and its verdict.

    Returns
    -------
    look : int64[E]  (index into look_sizes; the last look when no verdict)
    verdict : int64[E]
    """
    n_looks = look_sizes.shape[0]
    looks_out = np.empty(n_experiments, dtype=np.int64)
    verdicts = np.empty(n_experiments, dtype=np.int64)
    for e in range(n_experiments):
        k_a = 0
        k_b = 0
        t = 0
        looks_out[e] = n_looks - 1
        verdicts[e] = 0
        for j in range(n_looks):
            m = look_sizes[j]
            while t < m:
                k_a += 1 if rng.random() < p_a else 0
                k_b += 1 if rng.random() < p_b else 0
                t += 1
            v = _verdict(k_a, k_b, j, upper, lower, fut_lo, fut_hi)
            if v > 0:
                looks_out[e] = j
                verdicts[e] = v
                break
    return looks_out, verdicts


@njit(cache=True)
def fisher_one_sided_power(n, p_a, p_b, alpha):
    """Exact power of the one-sided Fisher test "B better" (p < alpha), n trials per arm.

    The one-sided p-value of (k_A, k_B) is P(X >= k_B | s = k_A + k_B), X hypergeometric
    (s successes among 2n trials, n of them B's); the power sums b(k_A; n, p_A) b(k_B; n, p_B)
    over the tables with p < alpha.
    """
    lc = np.empty(n + 1, dtype=np.float64)
    la = np.empty(n + 1, dtype=np.float64)
    lb = np.empty(n + 1, dtype=np.float64)
    for k in range(n + 1):
        lc[k] = math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)
        la[k] = binom_logpmf(k, n, p_a)
        lb[k] = binom_logpmf(k, n, p_b)
    power = 0.0
    for s in range(2 * n + 1):
        lo = max(0, s - n)
        hi = min(n, s)
        ltot = math.lgamma(2.0 * n + 1.0) - math.lgamma(s + 1.0) - math.lgamma(2.0 * n - s + 1.0)
        acc = 0.0
        for kb in range(hi, lo - 1, -1):
            acc += math.exp(lc[kb] + lc[s - kb] - ltot)
            if acc * (1.0 + 1e-7) < alpha:
                power += math.exp(la[s - kb] + lb[kb])
            else:
                break
    return power

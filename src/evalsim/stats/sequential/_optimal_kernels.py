"""Numba kernels of the optimal paired design (Lagrangian backward induction on the walk)
and of the group-sequential McNemar-z rule (:mod:`evalsim.stats.sequential.zlooks`).

Private: :mod:`evalsim.stats.sequential.optimal` and ``zlooks`` validate every argument.
The walk of B's solo wins ``w`` over the discordant pairs ``d`` (``d = 0..d_max``), as in
:mod:`evalsim.stats.sequential._paired_kernels`. Action codes of :func:`lagrangian_walk`:
0 continue, 1 stop "B better", 3 stop for futility (binding).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from evalsim.stats.sequential._paired_kernels import bernoulli_step

_LOG_CAP = 700.0


@njit(cache=True)
def walk_weights(n_max, q):
    """Pair-time weights of the discordant walk when each pair is discordant with prob ``q``.

    Returns
    -------
    spent : float64[n_max + 1]
        ``spent[d] = sum_{t=0}^{n_max-1} P(D_t = d)``: the expected number of pairs run while
        the walk stands at d discordant pairs (D_t: discordant pairs among the first t).
    ends : float64[n_max + 1]
        ``P(D_{n_max} = d)``: the pairs run out with the walk at d.
    reach : float64[n_max + 1]
        ``P(D_{n_max} >= d)``: the walk reaches its d-th step before the pairs run out.
    """
    dist = np.zeros(n_max + 1)
    tmp = np.zeros(n_max + 1)
    spent = np.zeros(n_max + 1)
    dist[0] = 1.0
    for t in range(n_max):
        for d in range(t + 1):
            spent[d] += dist[d]
        bernoulli_step(dist, tmp, t + 1, q)
    ends = dist.copy()
    reach = np.zeros(n_max + 1)
    acc = 0.0
    for d in range(n_max, -1, -1):
        acc += ends[d]
        reach[d] = acc
    return spent, ends, reach


@njit(cache=True)
def lagrangian_walk(d_max, pi1, spent, ends, reach, lam0, lam1, action):
    """Backward induction of the Lagrangian ``E_1[pairs] + lam0 P_0(B better) + lam1 P_1(miss)``.

    Costs are per walk path and divided by the path's probability under the alternative
    (B-only share ``pi1`` of the discordant pairs); under the null each discordant pair is a
    fair coin, so a path to (d, w) has likelihood ratio
    ``r = 2^-d / (pi1^w (1 - pi1)^(d - w))``. At (d, w): stop "B better" costs ``lam0 r``,
    stop for futility ``lam1 reach[d]``, continuing ``spent[d] + lam1 ends[d]`` (pairs run
    while at d; the pairs running out there miss) plus the children's costs. ``action`` is
    filled (0 continue, 1 B better, 3 futility); ties go to continuing, then to futility.

    Returns
    -------
    float
        The Lagrangian's minimum (per unit of the alternative's probability).
    """
    g_next = np.zeros(d_max + 2)
    g = np.zeros(d_max + 2)
    lp = math.log(pi1)
    lq = math.log(1.0 - pi1)
    lh = math.log(0.5)
    for d in range(d_max, -1, -1):
        for w in range(d + 1):
            logr = d * lh - w * lp - (d - w) * lq
            if logr > _LOG_CAP:
                logr = _LOG_CAP
            rej = lam0 * math.exp(logr)
            acc = lam1 * reach[d]
            if d == d_max:
                cont = math.inf
            else:
                cont = spent[d] + lam1 * ends[d] + pi1 * g_next[w + 1] + (1.0 - pi1) * g_next[w]
            best = cont
            a = 0
            if acc < best:
                best = acc
                a = 3
            if rej < best:
                best = rej
                a = 1
            action[d, w] = a
            g[w] = best
        for w in range(d + 1):
            g_next[w] = g[w]
    return g_next[0]


@njit(cache=True)
def walk_operating(d_max, pi1, spent, reach, action):
    """Exact size, power and expected pairs of a walk design given by ``action``.

    Futility stops are binding; when the pairs run out the design gives no verdict (final
    rows are added afterwards). Size: P(B better) under the null walk run to ``d_max``
    (the worst pair count). Power and expected pairs: under the alternative, with the pair
    limit (``spent``, ``reach`` of :func:`walk_weights`).

    Returns
    -------
    (float, float, float)
        size, power, expected pairs.
    """
    m0 = np.zeros(d_max + 2)
    m1 = np.zeros(d_max + 2)
    t0 = np.zeros(d_max + 2)
    t1 = np.zeros(d_max + 2)
    m0[0] = 1.0
    m1[0] = 1.0
    size = 0.0
    power = 0.0
    ess = 0.0
    for d in range(d_max + 1):
        cont1 = 0.0
        for w in range(d + 1):
            a = action[d, w]
            if a == 1:
                size += m0[w]
                power += reach[d] * m1[w]
                m0[w] = 0.0
                m1[w] = 0.0
            elif a == 3:
                m0[w] = 0.0
                m1[w] = 0.0
            else:
                cont1 += m1[w]
        ess += spent[d] * cont1
        if d == d_max:
            break
        for w in range(d + 2):
            v0 = 0.0
            v1 = 0.0
            if w <= d:
                v0 += 0.5 * m0[w]
                v1 += (1.0 - pi1) * m1[w]
            if w >= 1:
                v0 += 0.5 * m0[w - 1]
                v1 += pi1 * m1[w - 1]
            t0[w] = v0
            t1[w] = v1
        for w in range(d + 2):
            m0[w] = t0[w]
            m1[w] = t1[w]
    return size, power, ess


@njit(cache=True)
def final_rows_spending_rest(d_max, upper, fut_lo, fut_hi, alpha):
    """Final rows of a walk design with binding futility: spend at each d what is left.

    When the pairs run out with the walk at d for the first time, the design rejects when
    ``w >= final[d]``; the smallest such threshold keeps
    ``P_0(B better before d) + P_0(at d unstopped before, w >= final[d]) <= alpha``
    (the interim "B better" region at d is always included).
    """
    final = np.empty(d_max + 1, dtype=np.int64)
    dist = np.zeros(d_max + 2)
    tmp = np.zeros(d_max + 2)
    dist[0] = 1.0
    cum = 0.0
    for d in range(d_max + 1):
        if d > 0:
            bernoulli_step(dist, tmp, d, 0.5)
        f = min(upper[d], d + 1)
        tail = 0.0
        for w in range(d, f - 1, -1):
            tail += dist[w]
        while f > 0 and cum + tail + dist[f - 1] <= alpha:
            f -= 1
            tail += dist[f]
        final[d] = f
        for w in range(d + 1):
            if w >= upper[d]:
                cum += dist[w]
                dist[w] = 0.0
            elif fut_lo[d] <= w <= fut_hi[d]:
                dist[w] = 0.0
    return final


@njit(cache=True)
def zlook_walk(n_max, look_sizes, bounds, p10, p01):
    """Exact P(B better) and expected pairs of a McNemar-z rule looking at ``look_sizes``.

    Pair-time dynamic program over (discordant d, B-only w); at the k-th look (after
    ``look_sizes[k]`` pairs) the rule stops "B better" when ``d > 0`` and
    ``(2 w - d) / sqrt(d) >= bounds[k]``; it ends at the last look.
    """
    pc = 1.0 - p10 - p01
    if pc < 0.0:
        pc = 0.0
    dist = np.zeros((n_max + 1, n_max + 1))
    new = np.zeros((n_max + 1, n_max + 1))
    dist[0, 0] = 1.0
    reject = 0.0
    ess = 0.0
    look = 0
    top = 0
    for t in range(1, n_max + 1):
        for d in range(top + 1):
            for w in range(d + 1):
                ess += dist[d, w]
        nt = top + 1
        for d in range(nt + 1):
            for w in range(d + 1):
                v = 0.0
                if d <= top:
                    v += pc * dist[d, w]
                if d >= 1:
                    if w >= 1:
                        v += p01 * dist[d - 1, w - 1]
                    if w <= d - 1:
                        v += p10 * dist[d - 1, w]
                new[d, w] = v
        dist, new = new, dist
        top = nt
        if look < look_sizes.shape[0] and t == look_sizes[look]:
            for d in range(1, top + 1):
                sd = math.sqrt(d)
                for w in range(d + 1):
                    if (2.0 * w - d) / sd >= bounds[look] - 1e-12:
                        reject += dist[d, w]
                        dist[d, w] = 0.0
            look += 1
            if look == look_sizes.shape[0]:
                break
    return reject, ess


@njit(cache=True)
def unpaired_lagrangian(n_max, p_a, p_b, p0, lam0, lam1):
    """Minimum of ``E_1[blocks] + lam0 P_0(B better) + lam1 P_1(miss)`` over unpaired designs.

    Backward induction over (blocks n, k_A, k_B), n <= n_max, one trial of each policy per
    block; the alternative is (p_a, p_b), the null the single point p_A = p_B = p0. Costs per
    path, divided by the path's alternative probability: stop "B better" ``lam0 r`` (r the
    null / alternative likelihood ratio of the path), stop otherwise ``lam1``, continue
    ``1`` plus the children's costs.
    """
    la1 = math.log(p_a)
    la0 = math.log1p(-p_a)
    lb1 = math.log(p_b)
    lb0 = math.log1p(-p_b)
    l01 = math.log(p0)
    l00 = math.log1p(-p0)
    nxt = np.zeros((n_max + 2, n_max + 2))
    cur = np.zeros((n_max + 2, n_max + 2))
    for n in range(n_max, -1, -1):
        for ka in range(n + 1):
            for kb in range(n + 1):
                logr = (ka + kb) * l01 + (2 * n - ka - kb) * l00
                logr -= ka * la1 + (n - ka) * la0 + kb * lb1 + (n - kb) * lb0
                if logr > _LOG_CAP:
                    logr = _LOG_CAP
                best = lam1
                rej = lam0 * math.exp(logr)
                if rej < best:
                    best = rej
                if n < n_max:
                    cont = 1.0 + (
                        p_a * p_b * nxt[ka + 1, kb + 1]
                        + p_a * (1.0 - p_b) * nxt[ka + 1, kb]
                        + (1.0 - p_a) * p_b * nxt[ka, kb + 1]
                        + (1.0 - p_a) * (1.0 - p_b) * nxt[ka, kb]
                    )
                    if cont < best:
                        best = cont
                cur[ka, kb] = best
        for ka in range(n + 1):
            for kb in range(n + 1):
                nxt[ka, kb] = cur[ka, kb]
    return nxt[0, 0]

"""Plain-Python references of the optimal paired design and the anytime tests.

Nothing here imports evalsim: pair-time dynamic programs over (pairs t, discordant d, B-only
w) written with dicts, the worst null size by enumerating every discordance pattern, an
exhaustive (pruned) search over walk designs, and the linear programme over randomised walk
designs (SciPy's HiGHS).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import lil_matrix


def _decide(nxt, last, upper, final, fut_hi, rejected):
    """The walk's decisions on the states ``{(d, w): mass}`` after a pair, futility binding.

    At the last pair (``last``) or the last discordant row the final row decides; else B
    better if ``w >= upper[d]``, futility if ``w <= fut_hi[d]``, else the state continues.
    Returns ``(rejected + the mass that stopped "B better", the continuing states)``.
    """
    d_max = len(upper) - 1
    states = {}
    for (d, w), m in nxt.items():
        if last or d == d_max:
            if w >= final[d]:
                rejected += m
        elif w >= upper[d]:
            rejected += m
        elif w <= fut_hi[d]:
            pass
        else:
            states[(d, w)] = m
    return rejected, states


def walk_oc(upper, final, fut_hi, n_max, p10, p01):
    """(ESS, P(B better)) of a one-sided walk design in pair time, futility binding.

    After pair t with (d, w): at t == n_max (or d == len(upper) - 1) the final row decides;
    else B better if w >= upper[d], futility if w <= fut_hi[d], else continue.
    """
    pc = 1.0 - p10 - p01
    states = {(0, 0): 1.0}
    ess = 0.0
    power = 0.0
    for t in range(1, n_max + 1):
        ess += sum(states.values())
        nxt: dict = {}
        for (d, w), m in states.items():
            for (dd, ww), pr in (((d, w), pc), ((d + 1, w + 1), p01), ((d + 1, w), p10)):
                if pr > 0:
                    nxt[(dd, ww)] = nxt.get((dd, ww), 0.0) + m * pr
        power, states = _decide(nxt, t == n_max, upper, final, fut_hi, power)
    return ess, power


def worst_null_size(upper, final, fut_hi, n_max):
    """Largest P_0(B better) over every 0/1 discordance pattern of n_max pairs.

    Under "no difference" with pair t discordant with probability q_t (any sequence fixed in
    advance) the rejection probability is multilinear in the q_t, so its maximum is at a
    0/1 pattern: all 2^n_max are enumerated.
    """
    worst = 0.0
    for pattern in itertools.product((0, 1), repeat=n_max):
        states = {(0, 0): 1.0}
        rej = 0.0
        for t, disc in enumerate(pattern, start=1):
            nxt: dict = {}
            for (d, w), m in states.items():
                if disc:
                    for ww in (w, w + 1):
                        nxt[(d + 1, ww)] = nxt.get((d + 1, ww), 0.0) + 0.5 * m
                else:
                    nxt[(d, w)] = nxt.get((d, w), 0.0) + m
            rej, states = _decide(nxt, t == n_max, upper, final, fut_hi, rej)
            if not states:
                break
        worst = max(worst, rej)
    return worst


def _spend_rest(upper, fut_hi, alpha):
    """Final rows spending at each d what is left of alpha (first arrival at d)."""
    d_max = len(upper) - 1
    dist = [1.0]
    cum = 0.0
    final = []
    for d in range(d_max + 1):
        if d > 0:
            dist = [
                0.5 * ((dist[w] if w < d else 0.0) + (dist[w - 1] if w >= 1 else 0.0))
                for w in range(d + 1)
            ]
        f = min(upper[d], d + 1)
        while f > 0 and cum + sum(dist[f - 1 :]) <= alpha:
            f -= 1
        final.append(f)
        for w in range(d + 1):
            if w >= upper[d]:
                cum += dist[w]
                dist[w] = 0.0
            elif w <= fut_hi[d]:
                dist[w] = 0.0
    return final


def brute_force_best(n_max, p10, p01, alpha, power):
    """Least ESS over every threshold walk design (d_max = n_max) of size <= alpha.

    Every interim B-better row ``upper[d]`` in 0..d+1 and futility row ``fut_hi[d]`` in
    -1..upper[d]-1 is tried (d = 1..n_max - 1; at d = 0 continue), pruned when the interim
    null size exceeds alpha; each survivor gets final rows spending what is left of alpha, and
    the designs with power >= ``power`` are compared on ESS. Returns (ess, upper, final,
    fut_hi) of the best, or None.
    """
    best = [None]
    d_max = n_max

    def rec(d, upper, fut_hi, dist, cum):
        if d == d_max:
            up = upper + [d_max + 1]
            fh = fut_hi + [-1]
            final = _spend_rest(up, fh, alpha)
            ess, pw = walk_oc(up, final, fh, n_max, p10, p01)
            if pw >= power and (best[0] is None or ess < best[0][0] - 1e-12):
                best[0] = (ess, up, final, fh)
            return
        nd = [
            0.5 * ((dist[w] if w < d else 0.0) + (dist[w - 1] if w >= 1 else 0.0))
            for w in range(d + 1)
        ]
        for u in range(d + 1, -1, -1):
            add = sum(nd[u:])
            if cum + add > alpha + 1e-15:
                break
            for fh in range(-1, u):
                left = [0.0 if (w >= u or w <= fh) else nd[w] for w in range(d + 1)]
                rec(d + 1, upper + [u], fut_hi + [fh], left, cum + add)

    rec(1, [1], [-1], [1.0], 0.0)
    return best[0]


def _least_cost(cost, power_row, size_row, power, alpha, a_eq, b_eq, ub):
    """The linear programme's least ``cost @ x`` subject to ``power_row @ x >= power``,
    ``size_row @ x <= alpha``, the flow equalities ``a_eq x = b_eq`` and ``0 <= x <= ub``
    (HiGHS); None if infeasible."""
    res = linprog(
        cost,
        A_ub=np.vstack([-power_row, size_row]),
        b_ub=[-power, alpha],
        A_eq=a_eq.tocsr(),
        b_eq=b_eq,
        bounds=[(0, u) for u in ub],
        method="highs",
    )
    return res.fun if res.status == 0 else None


def lp_lower_bound(n_max, p10, p01, alpha, power):
    """Least ESS over randomised walk designs: futility binding, no verdict at the pair limit.

    Occupation measure of the alternative's walk (no pair limit) at each (d, w): mass
    rejected x_r, stopped x_a, continued x_c, with x_r + x_a + x_c = inflow. Expected pairs
    ``sum spent[d] x_c``, power ``sum reach[d] x_r``, null size ``sum r(d, w) x_r`` (r the
    likelihood ratio null / alternative of a path to (d, w)); x_c = 0 at d = n_max. Solved by
    SciPy's HiGHS; returns the optimum (None if infeasible).
    """
    q = p10 + p01
    pi = p01 / q
    spent = [
        sum(math.comb(t, d) * q**d * (1 - q) ** (t - d) for t in range(n_max))
        for d in range(n_max + 1)
    ]
    ends = [math.comb(n_max, d) * q**d * (1 - q) ** (n_max - d) for d in range(n_max + 1)]
    reach = [sum(ends[d:]) for d in range(n_max + 1)]
    idx = {}
    for d in range(n_max + 1):
        for w in range(d + 1):
            idx[(d, w)] = len(idx)
    n_s = len(idx)
    nv = 3 * n_s
    cost = np.zeros(nv)
    a_eq = lil_matrix((n_s, nv))
    b_eq = np.zeros(n_s)
    pw_row = np.zeros(nv)
    size_row = np.zeros(nv)
    ub = [None] * nv
    for (d, w), i in idx.items():
        cost[2 * n_s + i] = spent[d]
        a_eq[i, i] = a_eq[i, n_s + i] = a_eq[i, 2 * n_s + i] = 1.0
        if d == 0:
            b_eq[i] = 1.0
        else:
            if w >= 1:
                a_eq[i, 2 * n_s + idx[(d - 1, w - 1)]] = -pi
            if w <= d - 1:
                a_eq[i, 2 * n_s + idx[(d - 1, w)]] = -(1 - pi)
        pw_row[i] = reach[d]
        size_row[i] = math.exp(d * math.log(0.5) - w * math.log(pi) - (d - w) * math.log(1 - pi))
        if d == n_max:
            ub[2 * n_s + i] = 0.0
        if size_row[i] > 1e8:  # rejecting there carries at most alpha 1e-8 of power
            size_row[i] = 0.0
            ub[i] = 0.0
    return _least_cost(cost, pw_row, size_row, power, alpha, a_eq, b_eq, ub)


def unpaired_lp(n_max, p_a, p_b, alpha, power):
    """Least expected blocks over randomised unpaired designs (null: both at the mean rate).

    Occupation measure of the alternative's (n, k_A, k_B) walk: rejected, stopped and
    continued mass per state; expected blocks ``sum x_c``, power ``sum x_r``, size
    ``sum r x_r`` at the single null point p0 = (p_a + p_b) / 2. HiGHS; None if infeasible.
    """
    p0 = 0.5 * (p_a + p_b)
    idx = {}
    for n in range(n_max + 1):
        for ka in range(n + 1):
            for kb in range(n + 1):
                idx[(n, ka, kb)] = len(idx)
    n_s = len(idx)
    cost = np.zeros(3 * n_s)
    a_eq = lil_matrix((n_s, 3 * n_s))
    b_eq = np.zeros(n_s)
    pw = np.zeros(3 * n_s)
    size = np.zeros(3 * n_s)
    ub = [None] * (3 * n_s)
    for (n, ka, kb), i in idx.items():
        cost[2 * n_s + i] = 1.0
        a_eq[i, i] = a_eq[i, n_s + i] = a_eq[i, 2 * n_s + i] = 1.0
        if n == 0:
            b_eq[i] = 1.0
        for da in (0, 1):
            for db in (0, 1):
                parent = (n - 1, ka - da, kb - db)
                if n >= 1 and parent in idx:
                    pr = (p_a if da else 1 - p_a) * (p_b if db else 1 - p_b)
                    a_eq[i, 2 * n_s + idx[parent]] = -pr
        pw[i] = 1.0
        l0 = p0 ** (ka + kb) * (1 - p0) ** (2 * n - ka - kb)
        l1 = p_a**ka * (1 - p_a) ** (n - ka) * p_b**kb * (1 - p_b) ** (n - kb)
        size[i] = l0 / l1
        if n == n_max:
            ub[2 * n_s + i] = 0.0
    return _least_cost(cost, pw, size, power, alpha, a_eq, b_eq, ub)

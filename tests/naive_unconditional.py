"""Plain-Python references for the exact unconditional tests: brute-force grid supremum.

No numpy, no numba: ``math.comb`` and the definitions (SciPy's ``boschloo_exact`` and
``barnard_exact``, 1.17.1), slow and obviously right. The supremum over the nuisance rate is
a plain maximum over an even grid of ``grid + 1`` points of ``[lo, hi]``, so it is a lower
bound of the exact p-value (within the grid's resolution of it).

Barnard's regions compare the statistic exactly (:func:`exact_barnard_key`: ``z`` through
``sign(z) z**2``, a ratio of integers), so a table whose ``z`` ties the observed one in exact
arithmetic is always in the region; SciPy's float comparison can drop it (issue 45, item 14).
"""

from __future__ import annotations

import math
from fractions import Fraction


def fisher_one_sided(x1: int, n1: int, x2: int, n2: int, alternative: str) -> float:
    """P(X <= x1) ("less") or P(X >= x1) ("greater"), X hypergeometric given the margin."""
    kk, nn = x1 + x2, n1 + n2
    lo, hi = max(0, kk - n2), min(kk, n1)
    den = math.comb(nn, kk)
    ys = range(lo, x1 + 1) if alternative == "less" else range(x1, hi + 1)
    return sum(math.comb(n1, y) * math.comb(n2, kk - y) for y in ys) / den


def barnard_z(x1: int, n1: int, x2: int, n2: int) -> float:
    """Pooled score statistic, 0 where the two rates are equal (SciPy's float operations)."""
    p1, p2 = x1 / n1, x2 / n2
    if p1 == p2:
        return 0.0
    p = (x1 + x2) / (n1 + n2)
    return (p1 - p2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))


def exact_barnard_key(x1: int, n1: int, x2: int, n2: int, absolute: bool = False) -> Fraction:
    """``sign(z) z**2`` of the pooled score statistic, exactly: order-equivalent to ``z``.

    ``z**2 = (x1 n2 - x2 n1)**2 N / (n1 n2 k (N - k))`` with ``N = n1 + n2``, ``k = x1 + x2``;
    0 where the two rates are equal (``k = 0`` and ``k = N`` included). ``absolute``: ``z**2``.
    """
    num = x1 * n2 - x2 * n1
    if num == 0:
        return Fraction(0)
    nn, kk = n1 + n2, x1 + x2
    sq = Fraction(num * num * nn, n1 * n2 * kk * (nn - kk))
    return sq if absolute or num > 0 else -sq


def region(test: str, k1: int, n1: int, k2: int, n2: int, alternative: str) -> list:
    """Tables at least as extreme as (k1, k2) for one side (Boschloo) or the test (Barnard)."""
    tables = [(a, b) for a in range(n1 + 1) for b in range(n2 + 1)]
    if test == "boschloo":
        obs = fisher_one_sided(k1, n1, k2, n2, alternative)
        return [
            t
            for t in tables
            if fisher_one_sided(t[0], n1, t[1], n2, alternative) <= obs * (1 + 1e-13)
        ]
    absolute = alternative == "two-sided"
    z0 = exact_barnard_key(k1, n1, k2, n2, absolute)
    keys = {t: exact_barnard_key(t[0], n1, t[1], n2, absolute) for t in tables}
    if alternative == "less":
        return [t for t in tables if keys[t] <= z0]
    return [t for t in tables if keys[t] >= z0]


def float_region(k1: int, n1: int, k2: int, n2: int, alternative: str) -> set:
    """Barnard's region as SciPy forms it: the rounded ``z`` (:func:`barnard_z`) compared as
    they are, so a table tied with the observed one in exact arithmetic can drop out."""
    z0 = barnard_z(k1, n1, k2, n2)
    keep = {
        "less": lambda z: z <= z0,
        "greater": lambda z: z >= z0,
        "two-sided": lambda z: abs(z) >= abs(z0),
    }[alternative]
    return {(a, b) for a in range(n1 + 1) for b in range(n2 + 1) if keep(barnard_z(a, n1, b, n2))}


def tail(tables: list, n1: int, n2: int, pi: float) -> float:
    """P_pi(tables) with both arms at rate pi."""
    return sum(
        math.comb(n1, a) * math.comb(n2, b) * pi ** (a + b) * (1 - pi) ** (n1 + n2 - a - b)
        for a, b in tables
    )


def grid_sup(tables: list, n1: int, n2: int, lo: float = 0.0, hi: float = 1.0, grid: int = 2000):
    """(max, argmax) of the tail probability over an even grid of [lo, hi]."""
    best, at = -1.0, lo
    for i in range(grid + 1):
        pi = lo + (hi - lo) * i / grid
        v = tail(tables, n1, n2, pi)
        if v > best:
            best, at = v, pi
    return best, at


def pvalue(test, k1, n1, k2, n2, alternative="two-sided", grid=2000) -> float:
    """Brute-force grid p-value with SciPy's definitions (two-sided Boschloo: 2 min)."""
    if test == "boschloo" and alternative == "two-sided":
        sides = [pvalue(test, k1, n1, k2, n2, a, grid) for a in ("less", "greater")]
        return min(1.0, 2 * min(sides))
    return min(1.0, grid_sup(region(test, k1, n1, k2, n2, alternative), n1, n2, grid=grid)[0])


def power(test, p1, n1, p2, n2, alpha, alternative="two-sided", grid=400) -> float:
    """Exact power by the double loop over tables with grid p-value < alpha."""
    return sum(
        math.comb(n1, a)
        * p1**a
        * (1 - p1) ** (n1 - a)
        * math.comb(n2, b)
        * p2**b
        * (1 - p2) ** (n2 - b)
        for a in range(n1 + 1)
        for b in range(n2 + 1)
        if pvalue(test, a, n1, b, n2, alternative, grid) < alpha * (1 - 1e-9)
    )

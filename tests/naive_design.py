"""Plain-Python references for the design and paired statistics (no numpy, no numba).

Written straight from the formulas in the papers, so the library can be checked against
something that shares none of its code.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from statistics import NormalDist

_N = NormalDist()


def z(q: float) -> float:
    return _N.inv_cdf(q)


def binom_pmf(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1.0 - p) ** (n - k)


def mcnemar(b: int, c: int) -> tuple[float, float]:
    """Exact two-sided McNemar p-value and mid-p, with exact rational arithmetic."""
    d = b + c
    if d == 0:
        return 1.0, 1.0
    m = min(b, c)
    tail = sum(Fraction(math.comb(d, i), 2**d) for i in range(m + 1))
    point = Fraction(math.comb(d, m), 2**d)
    return float(min(Fraction(1), 2 * tail)), float(min(Fraction(1), 2 * tail - point))


def n_per_arm_fleiss(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Document 001's n_per_arm before rounding."""
    za, zb = z(1 - alpha / 2), z(power)
    pbar = (p1 + p2) / 2
    a = za * math.sqrt(2 * pbar * (1 - pbar))
    b = zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return ((a + b) / abs(p1 - p2)) ** 2


def mde(n: int, pbar: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> float:
    """Document 001's mde."""
    return (z(1 - alpha / 2) + z(power)) * math.sqrt(2 * pbar * (1 - pbar) / n)


def connor_n(p10: float, p01: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Connor (1987), eq. 3: pairs for McNemar's test, before rounding."""
    psi, d = p10 + p01, p10 - p01
    return (z(1 - alpha / 2) * math.sqrt(psi) + z(power) * math.sqrt(psi - d * d)) ** 2 / d**2


def wilson(k: int, n: int, conf: float = 0.95) -> tuple[float, float]:
    zz = z(0.5 + conf / 2)
    p = k / n
    den = 1 + zz * zz / n
    c = (p + zz * zz / (2 * n)) / den
    h = zz / den * math.sqrt(p * (1 - p) / n + zz * zz / (4 * n * n))
    return max(0.0, c - h), min(1.0, c + h)


def newcombe(k1: int, n1: int, k2: int, n2: int, conf: float = 0.95) -> tuple[float, float]:
    """Newcombe (1998) method 10 for p1 - p2."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, conf)
    l2, u2 = wilson(k2, n2, conf)
    d = p1 - p2
    return (
        d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
        d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
    )


def wald_diff(
    k1: int, n1: int, k2: int, n2: int, conf: float = 0.95, add: int = 0
) -> tuple[float, float]:
    """Unpooled Wald for p1 - p2; ``add=1`` gives Agresti-Caffo."""
    zz = z(0.5 + conf / 2)
    m1, m2 = n1 + 2 * add, n2 + 2 * add
    p1, p2 = (k1 + add) / m1, (k2 + add) / m2
    h = zz * math.sqrt(p1 * (1 - p1) / m1 + p2 * (1 - p2) / m2)
    return p1 - p2 - h, p1 - p2 + h


def contingency(a: list[bool], b: list[bool]) -> tuple[int, int, int, int]:
    both = a_only = b_only = neither = 0
    for x, y in zip(a, b, strict=True):
        if x and y:
            both += 1
        elif x:
            a_only += 1
        elif y:
            b_only += 1
        else:
            neither += 1
    return both, a_only, b_only, neither


def mcnemar_power_by_enumeration(n: int, p10: float, p01: float, alpha: float = 0.05) -> float:
    """Sum over every multinomial table (concordant, b, c) of n pairs: P(table) [p < alpha]."""
    pc = 1.0 - p10 - p01
    total = 0.0
    for b in range(n + 1):
        for c in range(n - b + 1):
            if mcnemar(b, c)[0] < alpha:
                conc = n - b - c
                coef = math.factorial(n) // (
                    math.factorial(b) * math.factorial(c) * math.factorial(conc)
                )
                total += coef * p10**b * p01**c * pc**conc
    return total


def cohens_h(p1: float, p2: float) -> float:
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def paired_bootstrap_diffs(a: list[int], b: list[int], n_boot: int, rng) -> list[float]:
    """The paired bootstrap kernel as a plain loop, drawing from the same Generator stream."""
    n = len(a)
    out = []
    for _ in range(n_boot):
        s = 0
        for _ in range(n):
            i = int(rng.random() * n)
            s += a[i] - b[i]
        out.append(s / n)
    return out


@functools.cache
def mcnemar_critical(d: int, alpha: float) -> int:
    """Largest m with two-sided exact McNemar p = 2 P(X <= m) < alpha, X ~ Bin(d, 1/2);
    -1 when no m rejects. Integer tail sums, one float comparison."""
    tail, m = 0, -1
    for i in range(d // 2 + 1):
        tail += math.comb(d, i)
        if min(1.0, 2 * tail / 2**d) >= alpha:
            break
        m = i
    return m


def mcnemar_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Exact power of the exact McNemar test at n pairs: over the discordant count d and the
    A-only count b among them, P(d) P(b | d) [min(b, d - b) <= critical(d)]."""
    psi, theta = p10 + p01, p10 / (p10 + p01)
    total = 0.0
    for d in range(1, n + 1):
        m = mcnemar_critical(d, alpha)
        if m < 0:
            continue
        inner = sum(binom_pmf(b, d, theta) for b in range(d + 1) if min(b, d - b) <= m)
        total += binom_pmf(d, n, psi) * inner
    return total

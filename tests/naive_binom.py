"""Plain-Python references for the binomial statistics (no NumPy, no SciPy).

Written from the formulas, mostly the lesson's own (lesson 25, Build it steps 1-3), with
``math.comb`` and exact ``fractions.Fraction`` where it is cheap. Slow and obviously right:
the tests compare evalsim's kernels with these.
"""

from __future__ import annotations

import math
from fractions import Fraction


def binom_pmf(k: int, n: int, p: float) -> float:
    """Lesson 25, step 2: comb(n, k) p^k (1-p)^(n-k), evaluated exactly then rounded."""
    pf = Fraction(p)
    return float(math.comb(n, k) * pf**k * (1 - pf) ** (n - k))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k), exact rational sum."""
    pf = Fraction(p)
    return float(sum(math.comb(n, j) * pf**j * (1 - pf) ** (n - j) for j in range(k + 1)))


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X > k), exact rational sum."""
    pf = Fraction(p)
    return float(sum(math.comb(n, j) * pf**j * (1 - pf) ** (n - j) for j in range(k + 1, n + 1)))


def prob_at_least(k: int, n: int, p: float) -> float:
    """P(X >= k), exact rational sum."""
    return binom_sf(k - 1, n, p) if k > 0 else 1.0


def wald(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Lesson 25, step 1: p +- z sqrt(p(1-p)/n), clipped to [0, 1]."""
    p = k / n
    h = z * math.sqrt(p * (1 - p) / n)
    return max(0.0, p - h), min(1.0, p + h)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Lesson 25, step 1: the Wilson score interval, clipped to [0, 1]."""
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, c - h), min(1.0, c + h)


def agresti_coull(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Agresti and Coull (1998): Wald on (k + z^2/2) / (n + z^2), clipped to [0, 1]."""
    nt = n + z * z
    pt = (k + z * z / 2) / nt
    h = z * math.sqrt(pt * (1 - pt) / nt)
    return max(0.0, pt - h), min(1.0, pt + h)


def _bisect(f, lo: float, hi: float, iters: int = 200) -> float:
    """Root of an increasing function f on [lo, hi] by bisection."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-16:
            break
    return (lo + hi) / 2


def _pmf_float(j: int, n: int, p: float) -> float:
    return math.comb(n, j) * p**j * (1 - p) ** (n - j)


def clopper_pearson(k: int, n: int, tail: float) -> tuple[float, float]:
    """Clopper-Pearson by inverting the binomial tails: P(X >= k; lo) = tail = P(X <= k; hi)."""

    def at_least(q):
        return sum(_pmf_float(j, n, q) for j in range(k, n + 1))

    def at_most(q):
        return sum(_pmf_float(j, n, q) for j in range(k + 1))

    lo = 0.0 if k == 0 else _bisect(lambda q: at_least(q) - tail, 0.0, 1.0)
    hi = 1.0 if k == n else _bisect(lambda q: tail - at_most(q), 0.0, 1.0)
    return lo, hi


def clopper_pearson_midp(k: int, n: int, tail: float) -> tuple[float, float]:
    """Mid-p Clopper-Pearson by inverting the mid-p tails:
    P(X > k; lo) + P(X = k; lo)/2 = tail = P(X < k; hi) + P(X = k; hi)/2."""

    def above(q):
        return sum(_pmf_float(j, n, q) for j in range(k + 1, n + 1)) + _pmf_float(k, n, q) / 2

    def below(q):
        return sum(_pmf_float(j, n, q) for j in range(k)) + _pmf_float(k, n, q) / 2

    lo = 0.0 if k == 0 else _bisect(lambda q: above(q) - tail, 0.0, 1.0)
    hi = 1.0 if k == n else _bisect(lambda q: tail - below(q), 0.0, 1.0)
    return lo, hi


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta (modified Lentz; Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
    lbt += b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1 - math.exp(lbt) * _betacf(b, a, 1 - x) / b


def jeffreys(k: int, n: int, tail: float) -> tuple[float, float]:
    """Beta(k + 1/2, n - k + 1/2) quantiles tail and 1 - tail (no boundary modification)."""
    a, b = k + 0.5, n - k + 0.5
    lo = _bisect(lambda q: betainc(a, b, q) - tail, 0.0, 1.0)
    hi = _bisect(lambda q: betainc(a, b, q) - (1 - tail), 0.0, 1.0)
    return lo, hi


def coverage(interval, n: int, p: float, z: float = 1.96) -> float:
    """Lesson 25, step 2: sum of pmf over every k whose interval contains p."""
    total = 0.0
    for k in range(n + 1):
        lo, hi = interval(k, n, z)
        if lo <= p <= hi:
            total += binom_pmf(k, n, p)
    return total


def trials_needed(p: float, half_width: float, z: float = 1.96, interval=None) -> int:
    """Lesson 25, step 3: smallest n whose interval at round(p n) has half-width <= h.

    ``interval(k, n)`` gives ``(lo, hi)``; the default is this module's Wilson at ``z``.
    """
    bounds = interval if interval is not None else (lambda k, m: wilson(k, m, z))
    n = 1
    while True:
        lo, hi = bounds(round(p * n), n)
        if (hi - lo) / 2 <= half_width:
            return n
        n += 1

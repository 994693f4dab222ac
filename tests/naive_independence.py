"""Plain-Python references for the independence checks: enumeration, Fractions, no numpy.

Every function here enumerates what the library computes by a formula or a DP: the null
laws by listing every arrangement of k successes among n positions, the rejection
probabilities under drift by listing every 0/1 sequence with its probability.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def runs_of(seq) -> int:
    return 1 + sum(1 for a, b in itertools.pairwise(seq) if a != b)


def arrangements(n: int, k: int):
    """Every 0/1 sequence of length n with k ones."""
    for ones in itertools.combinations(range(n), k):
        s = [0] * n
        for i in ones:
            s[i] = 1
        yield s


def null_law(n: int, k: int, stat) -> dict[int, Fraction]:
    """Exact law of stat(seq) over all arrangements of k ones among n (as Fractions)."""
    counts: dict[int, int] = {}
    for s in arrangements(n, k):
        v = stat(s)
        counts[v] = counts.get(v, 0) + 1
    total = math.comb(n, k)
    return {v: Fraction(c, total) for v, c in counts.items()}


def rank_sum(seq) -> int:
    return sum(i + 1 for i, v in enumerate(seq) if v)


def two_sided(law: dict[int, Fraction], obs: int) -> Fraction:
    lo = sum(p for v, p in law.items() if v <= obs)
    hi = sum(p for v, p in law.items() if v >= obs)
    return min(Fraction(1), 2 * min(lo, hi))


def fisher_p(k1: int, n1: int, k2: int, n2: int) -> Fraction:
    """Two-sided Fisher p with ties decided in integers (the definition)."""
    kk, nn = k1 + k2, n1 + n2
    w = {
        a: math.comb(n1, a) * math.comb(n2, kk - a) for a in range(max(0, kk - n2), min(kk, n1) + 1)
    }
    return Fraction(sum(v for v in w.values() if v <= w[k1]), math.comb(nn, kk))


def pvalues(seq) -> dict[str, Fraction]:
    """The three checks' p-values of one sequence, by enumeration of its null laws."""
    n, k = len(seq), sum(seq)
    runs = two_sided(null_law(n, k, runs_of), runs_of(seq))
    trend = two_sided(null_law(n, k, rank_sum), rank_sum(seq))
    h = n // 2
    halves = fisher_p(sum(seq[:h]), h, sum(seq[h:]), n - h)
    return {"runs": runs, "trend": trend, "halves": halves}


def rejection_probabilities(p: list[float], alpha: float) -> dict[str, float]:
    """P(each check rejects at p < alpha) by listing all 2^n sequences with their probabilities."""
    n = len(p)
    level = Fraction(str(alpha))  # the decimal alpha, not its binary float (0.2 > 1/5)
    out = {"runs": 0.0, "trend": 0.0, "halves": 0.0}
    cache: dict[tuple, dict[str, Fraction]] = {}
    for seq in itertools.product((0, 1), repeat=n):
        prob = 1.0
        for x, pi in zip(seq, p, strict=True):
            prob *= pi if x else 1 - pi
        key = tuple(seq)
        if key not in cache:
            cache[key] = pvalues(list(seq))
        for name, pv in cache[key].items():
            if pv < level:
                out[name] += prob
    return out


def rank_sum_counts_int(n: int, m: int) -> list[int]:
    """Number of m-subsets of 1..n with each value of U = S - m(m+1)/2, in exact integers.

    The coefficients of the Gaussian binomial [n choose m]_q = prod_{i=1..m} (1 - q^(n-m+i)) /
    (1 - q^i) (Andrews, *The Theory of Partitions*, 1976, Thm 3.1: [n choose m]_q counts the
    m-subsets of 1..n by U). Worked as power series modulo q^L, L = m(n-m) + 1 (the
    polynomial's length), which is exact: multiplying by 1 - q^a subtracts a shifted copy,
    dividing by 1 - q^i adds a running sum of stride i. O(m L) integer additions, a different
    route from the library's (a DP over n, mod primes, then CRT).
    """
    length = m * (n - m) + 1
    c = [1] + [0] * (length - 1)
    for i in range(1, m + 1):
        a = n - m + i
        for u in range(length - 1, a - 1, -1):  # times (1 - q^a), highest degree first
            c[u] -= c[u - a]
        for u in range(i, length):  # divided by (1 - q^i), lowest degree first
            c[u] += c[u - i]
    return c

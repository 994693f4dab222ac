"""Plain-Python references for Fisher's exact test and its power (lesson 25, Build it 4-5).

No numpy, no numba: ``math.comb`` and the document's formulas, slow and obviously right.
``fisher_p`` is the document's function (relative tolerance 1 + 1e-7 by default);
``fisher_p_exact`` decides "no more likely" in exact integer arithmetic, the definition
itself; ``power`` is the document's double loop; ``prob_b_not_better`` compares rates.
"""

from __future__ import annotations

import math
from fractions import Fraction


def binom_pmf(k: int, n: int, p: float) -> float:
    """Probability of exactly k successes in n independent trials with rate p (document)."""
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def fisher_p(k1: int, n1: int, k2: int, n2: int, rel_tol: float = 1e-7) -> float:
    """Two-sided Fisher p-value as lesson 25 writes it: tables with pmf <= pmf(k1) (1 + tol)."""
    kk, nn = k1 + k2, n1 + n2
    pmf = {
        a: math.comb(n1, a) * math.comb(n2, kk - a) / math.comb(nn, kk)
        for a in range(max(0, kk - n2), min(kk, n1) + 1)
    }
    return min(1.0, sum(q for q in pmf.values() if q <= pmf[k1] * (1 + rel_tol)))


def fisher_p_exact(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher p-value with ties decided exactly (integer weights, Fraction sum)."""
    kk, nn = k1 + k2, n1 + n2
    weights = {
        a: math.comb(n1, a) * math.comb(n2, kk - a) for a in range(max(0, kk - n2), min(kk, n1) + 1)
    }
    w1 = weights[k1]
    return float(Fraction(sum(w for w in weights.values() if w <= w1), math.comb(nn, kk)))


def power(p1: float, n1: int, p2: float, n2: int, alpha: float = 0.05, pvalue=fisher_p) -> float:
    """Exact power: sum of b1(a) b2(b) over every (a, b) with pvalue(a, n1, b, n2) < alpha."""
    pm1 = [binom_pmf(k, n1, p1) for k in range(n1 + 1)]
    pm2 = [binom_pmf(k, n2, p2) for k in range(n2 + 1)]
    return sum(
        pm1[a] * pm2[b]
        for a in range(n1 + 1)
        for b in range(n2 + 1)
        if pvalue(a, n1, b, n2) < alpha
    )


def prob_b_not_better(p_a: float, n_a: int, p_b: float, n_b: int) -> float:
    """P(k_B / n_B <= k_A / n_A) by a double loop (the document's "B scores <= A")."""
    pa = [binom_pmf(k, n_a, p_a) for k in range(n_a + 1)]
    pb = [binom_pmf(k, n_b, p_b) for k in range(n_b + 1)]
    return sum(pa[a] * pb[b] for a in range(n_a + 1) for b in range(n_b + 1) if b * n_a <= a * n_b)

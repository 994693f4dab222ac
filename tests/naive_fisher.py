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


def exact_pvalues_at(n1: int, n2: int):
    """Exact two-sided p-values of every table with n1, n2 trials, as (k1, k2, num, den).

    ``p = num / den`` in integers: the weight of a table is C(n1, k1) C(n2, k2), and its
    p-value sums the weights of its margin no larger than its own, over C(n1 + n2, K).
    """
    c1 = [math.comb(n1, a) for a in range(n1 + 1)]
    c2 = [math.comb(n2, b) for b in range(n2 + 1)]
    for kk in range(n1 + n2 + 1):
        weights = sorted((c1[a] * c2[kk - a], a) for a in range(max(0, kk - n2), min(kk, n1) + 1))
        den = math.comb(n1 + n2, kk)
        cum, i = 0, 0
        while i < len(weights):
            j = i
            while j < len(weights) and weights[j][0] == weights[i][0]:
                cum += weights[j][0]
                j += 1
            for t in range(i, j):
                a = weights[t][1]
                yield a, kk - a, cum, den
            i = j


def exact_ties(n_max: int, alphas) -> tuple[list, float]:
    """Tables (k1, n1, k2, n2, alpha) with n1, n2 <= n_max whose exact p equals alpha.

    Also returns the smallest relative gap |p - alpha| / alpha over the tables whose exact p
    is not alpha (how close a genuine non-tie comes). ``alphas`` are Fractions. Symmetry
    p(k1, n1, k2, n2) = p(k2, n2, k1, n1) halves the work.
    """
    ties, gap = [], math.inf
    for n1 in range(1, n_max + 1):
        for n2 in range(n1, n_max + 1):
            for a, b, num, den in exact_pvalues_at(n1, n2):
                for al in alphas:
                    lhs, rhs = num * al.denominator, al.numerator * den
                    if lhs == rhs:
                        ties.append((a, n1, b, n2, al))
                        if n1 != n2:
                            ties.append((b, n2, a, n1, al))
                    else:
                        gap = min(gap, abs(lhs - rhs) / rhs)
    return ties, gap

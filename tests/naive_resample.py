"""Plain-Python references for the resampling kernel and the pair probabilities (no numba).

Written from the definitions, not from evalsim's code: SplitMix64 as in Vigna's reference
``splitmix64.c``; an index uniform on [0, m) by rejecting outputs below 2**64 mod m; the
pair probabilities as double loops over (k_a, k_b) with SciPy's pmf and statsmodels' Wilson.
"""

from __future__ import annotations

from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

MASK = (1 << 64) - 1


def splitmix64(state: int):
    """Yield SplitMix64 outputs from ``state`` forever."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def draw_counts(success: list[int], n: int, n_evals: int, seed: int) -> list[int]:
    """Successes of ``n_evals`` evaluations of ``n`` trials drawn with replacement."""
    m = len(success)
    threshold = (1 << 64) % m
    stream = splitmix64(seed)
    counts = []
    for _ in range(n_evals):
        c = 0
        for _ in range(n):
            z = next(stream)
            while z < threshold:
                z = next(stream)
            c += success[z % m]
        counts.append(c)
    return counts


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    return proportion_confint(k, n, alpha=1 - confidence, method="wilson")


def pair_probabilities(p_a, n_a, p_b, n_b, confidence=0.95):
    """(P(Wilson intervals disjoint), P(k_b/n_b <= k_a/n_a)) by double loops."""
    disjoint = b_not_better = 0.0
    for ka in range(n_a + 1):
        lo_a, up_a = wilson(ka, n_a, confidence)
        for kb in range(n_b + 1):
            lo_b, up_b = wilson(kb, n_b, confidence)
            w = binom.pmf(ka, n_a, p_a) * binom.pmf(kb, n_b, p_b)
            if up_a < lo_b or up_b < lo_a:
                disjoint += w
            if kb / n_b <= ka / n_a:
                b_not_better += w
    return disjoint, b_not_better

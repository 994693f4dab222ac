"""Plain-Python references for the peeking and hierarchy tests (no numba, no evalsim).

- :func:`brute_force_rejection`: enumerate every sequence of trial-pair outcomes (4**n of
  them) and add the probability of those that hit a rejection region at some look.
- :func:`python_dp_rejection`: the same dynamic programme as the kernel, written with dicts.
- :func:`scipy_fisher_region`: the region ``scipy.stats.fisher_exact(...).pvalue < alpha``.
- :func:`anova_icc_from_observations`: one-way ANOVA ICC from the raw 0/1 observations.
"""

from __future__ import annotations

import functools
import itertools
import math

from scipy.stats import fisher_exact


@functools.cache
def _scipy_p(a: int, b: int, m: int) -> float:
    return float(fisher_exact([[a, m - a], [b, m - b]]).pvalue)


def scipy_fisher_region(m: int, alpha: float) -> list[list[bool]]:
    """region[a][b] = Fisher two-sided p < alpha for a/m vs b/m, by scipy."""
    return [[_scipy_p(a, b, m) < alpha for b in range(m + 1)] for a in range(m + 1)]


def brute_force_rejection(n, p_a, p_b, sizes, region_for):
    """P(reject at some look) by enumerating all 4**n outcome sequences.

    ``region_for(j, m)`` returns the region (nested lists or array, [k_a][k_b]) of look j.
    Returns (total, per_look) with per_look[j] = P(first rejection at look j).
    """
    regions = [region_for(j, m) for j, m in enumerate(sizes)]
    look_index = {m: j for j, m in enumerate(sizes)}
    per_look = [0.0] * len(sizes)
    last = sizes[-1]
    for seq in itertools.product((0, 1, 2, 3), repeat=last):
        # Probability of the whole sequence; then find its first rejection, if any.
        prob = 1.0
        for outcome in seq:
            a, b = outcome & 1, outcome >> 1
            prob *= (p_a if a else 1 - p_a) * (p_b if b else 1 - p_b)
        ka = kb = 0
        for t, outcome in enumerate(seq, start=1):
            ka += outcome & 1
            kb += outcome >> 1
            j = look_index.get(t)
            if j is not None and regions[j][ka][kb]:
                per_look[j] += prob
                break
    return sum(per_look), per_look


def python_dp_rejection(n, p_a, p_b, sizes, region_for):
    """The absorbing dynamic programme, with a dict of (k_a, k_b) -> probability."""
    dist = {(0, 0): 1.0}
    per_look = []
    t = 0
    for j, m in enumerate(sizes):
        while t < m:
            new: dict = {}
            for (a, b), q in dist.items():
                for da, pa in ((0, 1 - p_a), (1, p_a)):
                    for db, pb in ((0, 1 - p_b), (1, p_b)):
                        key = (a + da, b + db)
                        new[key] = new.get(key, 0.0) + q * pa * pb
            dist = new
            t += 1
        region = region_for(j, m)
        hit = [key for key in dist if region[key[0]][key[1]]]
        per_look.append(sum(dist[key] for key in hit))
        for key in hit:
            del dist[key]
    return sum(per_look), per_look


def fixed_rate_by_sum(n, p, alpha):
    """P(Fisher p < alpha) testing once at n per arm: a double binomial sum with scipy."""
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    return sum(
        pmf[a] * pmf[b] for a in range(n + 1) for b in range(n + 1) if _scipy_p(a, b, n) < alpha
    )


def anova_icc_from_observations(groups):
    """One-way ANOVA estimates from raw observations (lists of 0/1 per group).

    Returns (msb, msw, n0, icc).
    """
    all_obs = [x for g in groups for x in g]
    big_n = len(all_obs)
    k = len(groups)
    grand = sum(all_obs) / big_n
    ssb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups)
    ssw = sum((x - sum(g) / len(g)) ** 2 for g in groups for x in g)
    msb = ssb / (k - 1)
    msw = ssw / (big_n - k)
    n0 = (big_n - sum(len(g) ** 2 for g in groups) / big_n) / (k - 1)
    s2b = (msb - msw) / n0
    return msb, msw, n0, s2b / (s2b + msw)

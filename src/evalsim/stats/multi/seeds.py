"""Two policies, several training seeds (or checkpoints) each: seeds as the unit of
replication.

A lab log often holds several training seeds per policy, and a single checkpoint can swing
10+ points between seeds. Pooling the episodes across seeds treats them as independent
trials of one rate, which they are not: episodes of one seed move together. This module
compares two policies with the seeds as the replicates (document 000's seeds exercise: "so
both seed variance and trial variance are visible"):

* :func:`seed_comparison` -- Welch's t-test and interval on the per-seed success rates
  (SciPy's ``ttest_ind(equal_var=False)``), and a cluster bootstrap of the pooled (micro)
  difference: per policy, seeds redrawn with replacement, then each drawn seed's episodes
  (for 0/1 outcomes a seed's resampled successes are ``Binomial(n_i, k_i / n_i)``).

The spread within one policy (seed-to-seed vs trial-to-trial, design effect) is
:func:`evalsim.stats.multi.hierarchy.two_spreads`.

References
----------
.. [1] Welch, B. L. (1947). The generalization of "Student's" problem when several
   different population variances are involved. Biometrika 34, 28-35.
.. [2] Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their Application,
   section 3.8 (multi-stage resampling).
.. [3] Document 000 (lesson 25), the seeds exercise; document 002, "Two spreads, not one".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

from evalsim.stats._validate import check_confidence, check_counts, check_n
from evalsim.stats.multi.aggregate import as_rng

__all__ = ["SeedComparison", "cluster_interval", "seed_comparison"]


@dataclass(frozen=True)
class SeedComparison:
    """Result of :func:`seed_comparison` (differences are B - A).

    Attributes
    ----------
    seeds_a, seeds_b : int
        Number of seeds of each policy.
    mean_a, mean_b : float
        Mean of the per-seed success rates (each seed weighs the same).
    welch_statistic, welch_df, welch_pvalue : float
        Welch's t-test of equal mean seed rates, two-sided.
    welch_lower, welch_upper : float
        Welch's interval for ``mean_b - mean_a`` at ``confidence``.
    micro_a, micro_b : float
        Pooled rates ``sum k / sum n``.
    bootstrap_lower, bootstrap_upper : float
        Percentile interval of ``micro_b - micro_a`` from the cluster bootstrap.
    bootstrap_se, naive_se : float
        Standard deviation of the cluster-bootstrap difference, and the binomial standard
        error of the pooled difference when every episode is treated as independent.
    n_reps : int
    confidence : float
    """

    seeds_a: int
    seeds_b: int
    mean_a: float
    mean_b: float
    welch_statistic: float
    welch_df: float
    welch_pvalue: float
    welch_lower: float
    welch_upper: float
    micro_a: float
    micro_b: float
    bootstrap_lower: float
    bootstrap_upper: float
    bootstrap_se: float
    naive_se: float
    n_reps: int
    confidence: float


def _cluster_draws(k, n, n_reps, rng) -> np.ndarray:
    """Micro means of ``n_reps`` two-stage resamples of one policy's seeds (vectorised)."""
    g = k.size
    idx = rng.integers(0, g, size=(n_reps, g))
    succ = rng.binomial(n[idx], k[idx] / n[idx])
    return succ.sum(axis=1) / n[idx].sum(axis=1)


def cluster_interval(k, n, confidence: float = 0.95, n_reps: int = 2000, seed=0):
    """Cluster-aware interval of one policy's pooled rate over its seeds, from counts.

    The two-stage bootstrap of :func:`evalsim.stats.multi.hierarchy.hierarchical_bootstrap`
    (seeds with replacement, then episodes within each drawn seed) for 0/1 outcomes, where
    a drawn seed's resampled successes are ``Binomial(n_i, k_i / n_i)``: vectorised over
    the replicates (no compiled kernel), the same law as T28's bootstrap.

    Parameters
    ----------
    k, n : array_like of int
        Per seed: successes and episodes (at least 2 seeds).
    confidence : float
    n_reps : int
    seed : int or numpy.random.Generator

    Returns
    -------
    (lower, upper, naive_lower, naive_upper) : tuple of float
        Percentile interval of the pooled (micro) rate, and of the naive bootstrap that
        redraws all episodes as one sample (``Binomial(N, K / N) / N``).
    """
    k, n = check_counts(np.atleast_1d(k), np.atleast_1d(n))
    if k.ndim != 1 or k.size < 2:
        raise ValueError(f"need at least 2 seeds (1-d counts), got shape {k.shape}")
    confidence = check_confidence(confidence)
    n_reps = check_n(n_reps, "n_reps")
    rng, _ = as_rng(seed)
    streams = rng.spawn(2)
    micro = _cluster_draws(k, n, n_reps, streams[0])
    naive = streams[1].binomial(int(n.sum()), k.sum() / n.sum(), size=n_reps) / n.sum()
    q = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
    lo, hi = np.quantile(micro, q)
    n_lo, n_hi = np.quantile(naive, q)
    return float(lo), float(hi), float(n_lo), float(n_hi)


def seed_comparison(
    k_a, n_a, k_b, n_b, confidence: float = 0.95, n_reps: int = 2000, seed=0
) -> SeedComparison:
    """Compare two policies with their training seeds as the unit of replication.

    Parameters
    ----------
    k_a, n_a, k_b, n_b : array_like of int
        Per seed: successes and episodes of policy A and of policy B (at least 2 seeds
        each; the two policies' seeds need not correspond).
    confidence : float
        Level of both intervals.
    n_reps : int
        Cluster-bootstrap replicates.
    seed : int or numpy.random.Generator
        E.g. ``evalsim.seeding.rng_for(study_seed, "seeds", ...)``.

    Returns
    -------
    SeedComparison

    Raises
    ------
    ValueError
        Counts that are not integers with 0 <= k <= n and n >= 1, fewer than 2 seeds for a
        policy, a confidence outside (0, 1), a bad ``n_reps`` or seed.

    Notes
    -----
    Welch's test [1]_ uses only the seed rates ``k_i / n_i``: with g seeds per policy it has
    about ``2 g - 2`` degrees of freedom whatever the number of episodes, which is the
    point -- more episodes per seed do not make more seeds. When all seeds of both policies
    have one rate the t statistic is undefined: p = 1 if the means are equal, else 0 (SciPy
    returns NaN there). The cluster bootstrap [2]_ draws each policy's seeds with
    replacement, independently for A and B, then each drawn seed's successes as
    ``Binomial(n_i, k_i / n_i)``.
    """
    k_a, n_a = check_counts(np.atleast_1d(k_a), np.atleast_1d(n_a))
    k_b, n_b = check_counts(np.atleast_1d(k_b), np.atleast_1d(n_b))
    for name, k in (("A", k_a), ("B", k_b)):
        if k.ndim != 1 or k.size < 2:
            raise ValueError(
                f"policy {name} needs at least 2 seeds (1-d counts), got shape {k.shape}"
            )
    confidence = check_confidence(confidence)
    n_reps = check_n(n_reps, "n_reps")
    rng, _ = as_rng(seed)
    ra, rb = k_a / n_a, k_b / n_b
    if np.ptp(ra) == 0 and np.ptp(rb) == 0:  # no spread in either policy: t undefined
        d = float(rb.mean() - ra.mean())
        t, df = (0.0 if d == 0 else math.copysign(math.inf, d)), math.nan
        p, lo, hi = (1.0 if d == 0 else 0.0), d, d
    else:
        res = _sps.ttest_ind(rb, ra, equal_var=False)
        t, df, p = float(res.statistic), float(res.df), float(res.pvalue)
        ci = res.confidence_interval(confidence)
        lo, hi = float(ci.low), float(ci.high)
    streams = rng.spawn(2)
    diff = _cluster_draws(k_b, n_b, n_reps, streams[1]) - _cluster_draws(
        k_a, n_a, n_reps, streams[0]
    )
    q = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
    b_lo, b_hi = np.quantile(diff, q)
    pa, pb = k_a.sum() / n_a.sum(), k_b.sum() / n_b.sum()
    naive = math.sqrt(pa * (1 - pa) / n_a.sum() + pb * (1 - pb) / n_b.sum())
    return SeedComparison(
        seeds_a=int(k_a.size),
        seeds_b=int(k_b.size),
        mean_a=float(ra.mean()),
        mean_b=float(rb.mean()),
        welch_statistic=t,
        welch_df=df,
        welch_pvalue=p,
        welch_lower=lo,
        welch_upper=hi,
        micro_a=float(pa),
        micro_b=float(pb),
        bootstrap_lower=float(b_lo),
        bootstrap_upper=float(b_hi),
        bootstrap_se=float(diff.std(ddof=1)),
        naive_se=naive,
        n_reps=n_reps,
        confidence=confidence,
    )

"""Two spreads and nested data: seed-to-seed vs trial-to-trial variation, and the
hierarchical bootstrap.

A success rate measured on several training seeds (or tasks) has two sources of spread:
the trials within a seed (binomial) and the seeds themselves. :func:`two_spreads` separates
them with the one-way ANOVA (method of moments) estimator on the binary outcomes and turns
the intraclass correlation into a design effect and an effective number of trials.
:func:`hierarchical_bootstrap` resamples clusters, then episodes within the drawn clusters,
and sets the result next to a naive bootstrap that resamples episodes as if independent.

References
----------
.. [1] Donner, A. (1986), "A review of inference procedures for the intraclass correlation
   coefficient in the one-way random effects model", Int. Statist. Rev. 54(1), 67-82.
.. [2] Kish, L. (1965), Survey Sampling, Wiley: design effect ``1 + (m - 1) * ICC``.
.. [3] Davison, A. C. & Hinkley, D. V. (1997), Bootstrap Methods and their Application,
   Cambridge University Press, section 3.8 (multi-stage resampling).
.. [4] Document 002, "Two spreads, not one"; document 004, "Hierarchical structure:
   episodes nested inside tasks".
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc  # chi2.sf(x, df) = chdtrc(df, x), without loading scipy.stats

from evalsim.stats._validate import check_confidence, check_counts, check_n
from evalsim.stats.multi import _hierarchy_kernels as _k

__all__ = [
    "HierarchicalBootstrap",
    "TwoSpreads",
    "hierarchical_bootstrap",
    "two_spreads",
]


@dataclass(frozen=True)
class TwoSpreads:
    """Seed-to-seed vs trial-to-trial variation of one success rate.

    Attributes
    ----------
    successes, sizes : tuple of int
        ``k_i`` and ``n_i`` of each cluster (training seed).
    cluster_rates : tuple of float
        ``k_i / n_i``.
    pooled_rate : float
        ``sum k / sum n``.
    seed_sd : float
        Observed standard deviation of the cluster rates (ddof = 1).
    trial_sd : float
        Standard deviation a cluster rate would have from trials alone,
        ``sqrt(p (1 - p) / m)`` with the pooled rate p and the mean cluster size m.
    msb, msw : float
        Between- and within-cluster mean squares of the one-way ANOVA on 0/1 outcomes.
    n0 : float
        ANOVA's effective cluster size ``(N - sum n_i^2 / N) / (g - 1)`` (= m if balanced).
    between_var : float
        Method-of-moments between-cluster variance ``(msb - msw) / n0``; can be negative
        (then the seeds agree better than binomial noise would make them).
    icc : float
        ``between_var / (between_var + msw)``, the ANOVA intraclass correlation [1]_.
    design_effect : float
        ``1 + (m - 1) * max(icc, 0)`` [2]_; a negative ICC is truncated at 0.
    n_effective : float
        ``N / design_effect``: independent trials worth the same precision.
    homogeneity_pvalue : float
        Pearson chi-square test that all clusters share one rate (df = g - 1).
    """

    successes: tuple[int, ...]
    sizes: tuple[int, ...]
    cluster_rates: tuple[float, ...]
    pooled_rate: float
    seed_sd: float
    trial_sd: float
    msb: float
    msw: float
    n0: float
    between_var: float
    icc: float
    design_effect: float
    n_effective: float
    homogeneity_pvalue: float

    @property
    def n_clusters(self) -> int:
        return len(self.sizes)

    @property
    def n_total(self) -> int:
        return int(sum(self.sizes))

    def __repr__(self) -> str:
        ks = ", ".join(f"{k}/{n}" for k, n in zip(self.successes, self.sizes, strict=True))
        return (
            f"TwoSpreads([{ks}], pooled={self.pooled_rate:.4f}, seed_sd={self.seed_sd:.4f}, "
            f"trial_sd={self.trial_sd:.4f}, icc={self.icc:.4f}, "
            f"design_effect={self.design_effect:.3f}, n_effective={self.n_effective:.1f})"
        )


def two_spreads(successes, sizes) -> TwoSpreads:
    """Split the variation of a success rate into seed-to-seed and trial-to-trial parts.

    Parameters
    ----------
    successes, sizes : array_like of int
        Successes ``k_i`` out of ``n_i`` trials for each of g >= 2 clusters (training seeds).
        For 0/1 outcomes the one-way ANOVA depends on the data only through these counts.

    Returns
    -------
    TwoSpreads

    Notes
    -----
    With ``p_i = k_i / n_i``, ``p = sum k / N``:
    ``MSB = sum n_i (p_i - p)^2 / (g - 1)``, ``MSW = sum n_i p_i (1 - p_i) / (N - g)``,
    ``ICC = (MSB - MSW) / (MSB + (n0 - 1) MSW)`` [1]_. When every outcome is the same the
    ICC is undefined (NaN), and so are the design effect and n_effective.

    Examples
    --------
    >>> r = two_spreads([210, 225, 240], [300, 300, 300])
    >>> round(r.pooled_rate, 4)
    0.75
    """
    k, n = check_counts(np.atleast_1d(successes), np.atleast_1d(sizes))
    if k.ndim != 1 or k.size < 2:
        raise ValueError(f"two_spreads needs counts of at least 2 clusters, got {successes!r}")
    g = k.size
    big_n = int(n.sum())
    if big_n <= g:
        raise ValueError(f"two_spreads needs more trials than clusters, got sizes {sizes!r}")
    rates = k / n
    p = float(k.sum() / big_n)
    msb = float(np.sum(n * (rates - p) ** 2) / (g - 1))
    msw = float(np.sum(n * rates * (1.0 - rates)) / (big_n - g))
    n0 = float((big_n - np.sum(n.astype(np.float64) ** 2) / big_n) / (g - 1))
    between = (msb - msw) / n0
    denom = msb + (n0 - 1.0) * msw
    icc = (msb - msw) / denom if denom > 0 else math.nan
    m_bar = big_n / g
    deff = 1.0 + (m_bar - 1.0) * max(icc, 0.0) if not math.isnan(icc) else math.nan
    if 0.0 < p < 1.0:
        chi2 = float(np.sum(n * (rates - p) ** 2) / (p * (1.0 - p)))
        homog = float(chdtrc(g - 1, chi2))
    else:
        homog = math.nan
    return TwoSpreads(
        successes=tuple(int(v) for v in k),
        sizes=tuple(int(v) for v in n),
        cluster_rates=tuple(float(v) for v in rates),
        pooled_rate=p,
        seed_sd=float(np.std(rates, ddof=1)),
        trial_sd=math.sqrt(p * (1.0 - p) / m_bar),
        msb=msb,
        msw=msw,
        n0=n0,
        between_var=float(between),
        icc=float(icc),
        design_effect=float(deff),
        n_effective=big_n / deff if not math.isnan(deff) else math.nan,
        homogeneity_pvalue=homog,
    )


@dataclass(frozen=True)
class HierarchicalBootstrap:
    """Macro and micro averages of nested outcomes with hierarchical and naive intervals.

    Attributes
    ----------
    n_clusters, n_episodes, n_reps : int
        Clusters (tasks or seeds), episodes, bootstrap replicates.
    confidence : float
        Level of the percentile intervals.
    seed : int or None
        The int seed passed in; None when a Generator was passed.
    macro, micro : float
        Cluster-weighted mean (mean of cluster means) and episode-weighted mean.
    macro_lower, macro_upper, micro_lower, micro_upper : float
        Percentile intervals from the two-stage bootstrap (clusters, then episodes).
    naive_lower, naive_upper : float
        Percentile interval of the micro mean from a bootstrap over episodes that ignores
        the clusters.
    macro_se, micro_se, naive_se : float
        Standard deviations of the replicates.
    """

    n_clusters: int
    n_episodes: int
    n_reps: int
    confidence: float
    seed: int | None
    macro: float
    micro: float
    macro_lower: float
    macro_upper: float
    micro_lower: float
    micro_upper: float
    naive_lower: float
    naive_upper: float
    macro_se: float
    micro_se: float
    naive_se: float

    @property
    def width_ratio(self) -> float:
        """Hierarchical (micro) interval width / naive interval width: > 1 means the naive
        interval is too narrow by that factor."""
        naive = self.naive_upper - self.naive_lower
        return (self.micro_upper - self.micro_lower) / naive if naive > 0 else math.nan

    def __repr__(self) -> str:
        return (
            f"HierarchicalBootstrap(clusters={self.n_clusters}, episodes={self.n_episodes}, "
            f"macro={self.macro:.4f} [{self.macro_lower:.4f}, {self.macro_upper:.4f}], "
            f"micro={self.micro:.4f} [{self.micro_lower:.4f}, {self.micro_upper:.4f}], "
            f"naive [{self.naive_lower:.4f}, {self.naive_upper:.4f}], "
            f"width_ratio={self.width_ratio:.2f})"
        )


def hierarchical_bootstrap(
    values, clusters, n_reps=2000, confidence=0.95, seed=0
) -> HierarchicalBootstrap:
    """Two-stage bootstrap (clusters, then episodes within clusters) vs a naive one.

    Parameters
    ----------
    values : array_like of float or bool
        One outcome per episode (success as 1/0, or any per-episode metric).
    clusters : array_like
        The cluster (task, or task and seed) of each episode; any hashable labels.
    n_reps : int
        Bootstrap replicates.
    confidence : float
        Level of the percentile intervals.
    seed : int or numpy.random.Generator
        A non-negative int (a fresh PCG64 from it: the same seed gives the same intervals)
        or a Generator such as ``evalsim.seeding.rng_for(study_seed, ...)``.

    Returns
    -------
    HierarchicalBootstrap

    Notes
    -----
    Each replicate draws g clusters with replacement, then within each drawn cluster as many
    episodes as it holds, with replacement [3]_. The naive replicate draws N episodes from
    all N. Episodes within a cluster are usually more alike than episodes across clusters,
    so the naive interval is too narrow [4]_.
    """
    vals = np.asarray(values, dtype=np.float64).ravel()
    labels = np.asarray(clusters).ravel()
    if vals.size == 0 or vals.size != labels.size:
        raise ValueError(
            f"values and clusters must be non-empty and of equal length, got {vals.size} "
            f"values and {labels.size} cluster labels"
        )
    if not np.all(np.isfinite(vals)):
        raise ValueError("values must be finite, got a NaN or infinity")
    n_reps = check_n(n_reps, "n_reps", minimum=2)
    confidence = check_confidence(confidence)
    if isinstance(seed, np.random.Generator):
        rng, seed_int = seed, None
    elif isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or a Generator, got {seed!r}")
    else:
        rng, seed_int = np.random.default_rng(int(seed)), int(seed)
    _, inverse = np.unique(labels, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    sorted_vals = np.ascontiguousarray(vals[order])
    sizes = np.bincount(inverse)
    starts = np.zeros(sizes.size + 1, dtype=np.int64)
    starts[1:] = np.cumsum(sizes)
    macro_r, micro_r, naive_r = _k.hierarchical_bootstrap(sorted_vals, starts, n_reps, rng)
    cluster_means = np.add.reduceat(sorted_vals, starts[:-1]) / sizes
    q = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
    m_lo, m_hi = np.quantile(macro_r, q)
    u_lo, u_hi = np.quantile(micro_r, q)
    n_lo, n_hi = np.quantile(naive_r, q)
    return HierarchicalBootstrap(
        n_clusters=int(sizes.size),
        n_episodes=int(vals.size),
        n_reps=n_reps,
        confidence=confidence,
        seed=seed_int,
        macro=float(cluster_means.mean()),
        micro=float(vals.mean()),
        macro_lower=float(m_lo),
        macro_upper=float(m_hi),
        micro_lower=float(u_lo),
        micro_upper=float(u_hi),
        naive_lower=float(n_lo),
        naive_upper=float(n_hi),
        macro_se=float(np.std(macro_r, ddof=1)),
        micro_se=float(np.std(micro_r, ddof=1)),
        naive_se=float(np.std(naive_r, ddof=1)),
    )

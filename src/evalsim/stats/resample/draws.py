"""Evaluations drawn from pools of simulated trials, and what they show.

Lesson 25's experiment (document 000, "Experiment") treats a pool of simulated trials as the
long-run population of a policy: "an evaluation of n trials picks n trials from a pool at
random, with replacement". This module draws such evaluations with a numba kernel
(:mod:`evalsim.stats.resample._kernels`) and summarises them: interval coverage and width, the
rate of a high score, and for pairs of evaluations the rate of a significant Fisher test, of
disjoint Wilson intervals and of the better policy scoring no higher. Next to each resampled
rate sits the exact probability it estimates (:func:`exact_pair_probabilities`), so a reader
can see the resampling error.

Every draw is seeded from the study's SeedSequence by stable keys (policy, n, purpose) with
:func:`evalsim.seeding.int_seed_for`: the same config gives the same counts whatever the
order in which tables are built.

References
----------
.. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", J. Amer. Statist. Assoc. 22 (158), 209-212, 1927.
.. [2] L. D. Brown, T. T. Cai, A. DasGupta, "Interval Estimation for a Binomial
   Proportion", Statistical Science 16 (2), 101-133, 2001.
.. [3] G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
   OOPSLA 2014 (SplitMix64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalsim.seeding import int_seed_for
from evalsim.stats._validate import check_alpha, check_confidence, check_n, check_probability
from evalsim.stats.decision import rejects
from evalsim.stats.proportion.binomial import binom_pmf
from evalsim.stats.proportion.intervals import interval
from evalsim.stats.resample import _kernels as _k
from evalsim.stats.two_sample.fisher import fisher_pvalue_table

__all__ = [
    "Evaluations",
    "IntervalSummary",
    "PairSummary",
    "ExactPairProbabilities",
    "as_success_array",
    "draw_counts",
    "evaluations",
    "evaluation_pairs",
    "interval_summary",
    "rate_at_least",
    "rate_range",
    "pair_summary",
    "exact_pair_probabilities",
    "standard_error",
]


def standard_error(rate: float, draws: int) -> float:
    """Binomial standard error ``sqrt(rate (1 - rate) / draws)`` of a resampled rate."""
    return float(np.sqrt(rate * (1.0 - rate) / draws))


def as_success_array(success) -> np.ndarray:
    """A pool's success flags as a contiguous ``uint8`` array of 0/1.

    Raises
    ------
    ValueError
        If ``success`` is empty, not one-dimensional, or holds values other than 0/1.
    """
    arr = np.asarray(success)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"success must be a non-empty 1-d array of 0/1, got shape {arr.shape}")
    if arr.dtype != bool:
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"success must hold only 0/1, got {arr[i]!r} at index {i}")
    return np.ascontiguousarray(arr, dtype=np.uint8)


def draw_counts(success, n: int, n_evals: int, seed: int) -> np.ndarray:
    """Success counts of ``n_evals`` evaluations of ``n`` trials drawn with replacement.

    Parameters
    ----------
    success : array_like of bool or 0/1
        The pool: one flag per simulated trial.
    n : int
        Trials per evaluation (>= 1).
    n_evals : int
        Number of evaluations (>= 1).
    seed : int
        Integer seed in [0, 2**63), e.g. from :func:`evalsim.seeding.int_seed_for`.

    Returns
    -------
    numpy.ndarray of int64, shape (n_evals,)
    """
    pool = as_success_array(success)
    n = check_n(n, "n")
    n_evals = check_n(n_evals, "n_evals")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    # uint64 wrap-around is SplitMix64's arithmetic; errstate only matters without JIT.
    with np.errstate(over="ignore"):
        return _k.draw_counts(pool, np.int64(n), np.int64(n_evals), np.int64(seed))


@dataclass(frozen=True, repr=False)
class Evaluations:
    """Success counts of evaluations of ``n`` trials drawn from one pool.

    Attributes
    ----------
    policy, purpose : str
        The seed keys that name the draw (with ``n``).
    n : int
        Trials per evaluation.
    counts : numpy.ndarray of int64
        Successes of each evaluation.
    pool_successes, pool_size : int
        The pool's k and n; ``pool_rate`` is the long-run rate the evaluations estimate.
    seed : int
        The integer seed the kernel was given.
    """

    policy: str
    purpose: str
    n: int
    counts: np.ndarray
    pool_successes: int
    pool_size: int
    seed: int

    @property
    def n_evals(self) -> int:
        return int(self.counts.shape[0])

    @property
    def pool_rate(self) -> float:
        return self.pool_successes / self.pool_size

    @property
    def rates(self) -> np.ndarray:
        """Observed k/n of each evaluation."""
        return self.counts / self.n

    def frequencies(self) -> np.ndarray:
        """How many evaluations scored k, for k = 0..n."""
        return np.bincount(self.counts, minlength=self.n + 1)

    def __repr__(self) -> str:
        return (
            f"Evaluations(policy={self.policy!r}, purpose={self.purpose!r}, n={self.n}, "
            f"n_evals={self.n_evals}, mean k/n={self.rates.mean():.4f}, "
            f"pool={self.pool_successes}/{self.pool_size})"
        )


def evaluations(success, n: int, n_evals: int, study_seed: int, policy: str, purpose: str):
    """Draw ``n_evals`` evaluations of ``n`` trials from a policy's pool.

    The kernel's seed is ``int_seed_for(study_seed, "resample", policy, n, purpose)``, so a
    draw depends only on the study seed and these keys.

    Returns
    -------
    Evaluations
    """
    pool = as_success_array(success)
    seed = int_seed_for(study_seed, "resample", str(policy), int(n), str(purpose))
    counts = draw_counts(pool, n, n_evals, seed)
    return Evaluations(
        policy=str(policy),
        purpose=str(purpose),
        n=int(n),
        counts=counts,
        pool_successes=int(pool.sum()),
        pool_size=int(pool.size),
        seed=seed,
    )


def evaluation_pairs(
    success_a,
    success_b,
    n: int,
    n_pairs: int,
    study_seed: int,
    policy_a: str,
    policy_b: str,
    purpose: str = "compare",
):
    """Draw ``n_pairs`` independent pairs of evaluations of ``n`` trials from pools A and B.

    The two sides use separate streams keyed by their own policy and by the comparison
    (``f"{purpose}:{policy_a}|{policy_b}"``), so A's draws in the comparison A-B do not
    depend on which other comparisons are configured.

    Returns
    -------
    (Evaluations, Evaluations)
    """
    pair_purpose = f"{purpose}:{policy_a}|{policy_b}"
    ev_a = evaluations(success_a, n, n_pairs, study_seed, policy_a, pair_purpose)
    ev_b = evaluations(success_b, n, n_pairs, study_seed, policy_b, pair_purpose)
    return ev_a, ev_b


def _interval_table(n: int, method: str, confidence: float):
    """Lower and upper bounds of ``method`` for k = 0..n (arrays of length n + 1)."""
    ci = interval(np.arange(n + 1), n, method=method, confidence=confidence)
    return np.asarray(ci.lower, dtype=np.float64), np.asarray(ci.upper, dtype=np.float64)


@dataclass(frozen=True)
class IntervalSummary:
    """Resampled behaviour of one interval method over evaluations of ``n`` trials.

    ``coverage`` is the fraction of evaluations whose interval contains ``p`` (closed
    interval), ``coverage_se`` its binomial standard error, ``mean_width`` the mean of
    upper - lower.
    """

    method: str
    n: int
    n_evals: int
    p: float
    coverage: float
    coverage_se: float
    mean_width: float


def interval_summary(ev: Evaluations, method: str = "wilson", p=None, confidence=0.95):
    """Coverage of ``p`` (default: the pool rate) and mean width of ``method`` over ``ev``.

    Each k = 0..n gets its interval once; the evaluations are then counted by k, which is the
    same sum the exact coverage takes with binomial weights instead of frequencies [2]_.
    """
    confidence = check_confidence(confidence)
    p = ev.pool_rate if p is None else check_probability(p)
    lower, upper = _interval_table(ev.n, method, confidence)
    freq = ev.frequencies()
    covers = (lower <= p) & (p <= upper)
    coverage = float(freq @ covers) / ev.n_evals
    return IntervalSummary(
        method=method,
        n=ev.n,
        n_evals=ev.n_evals,
        p=float(p),
        coverage=coverage,
        coverage_se=standard_error(coverage, ev.n_evals),
        mean_width=float(freq @ (upper - lower)) / ev.n_evals,
    )


def rate_at_least(ev: Evaluations, k: int) -> float:
    """Fraction of evaluations that scored at least ``k`` of ``n``."""
    k = check_n(k, "k", minimum=0)
    if k > ev.n:
        raise ValueError(f"k must be <= n = {ev.n}, got {k!r}")
    return float(np.mean(ev.counts >= k))


def rate_range(ev: Evaluations, lower: float = 0.05, upper: float = 0.95):
    """Empirical ``lower`` and ``upper`` quantiles of k/n (observed values, inverted CDF)."""
    lower = check_probability(lower, "lower")
    upper = check_probability(upper, "upper")
    q = np.quantile(ev.rates, [lower, upper], method="inverted_cdf")
    return float(q[0]), float(q[1])


@dataclass(frozen=True)
class PairSummary:
    """Resampled outcomes of comparing evaluation pairs (A, B) of ``n`` trials each.

    Attributes
    ----------
    fisher_rejection_rate : float
        Fraction of pairs with two-sided Fisher p < alpha (the test's power when A != B).
    disjoint_rate : float
        Fraction of pairs whose Wilson intervals do not overlap (touching counts as overlap).
    b_not_better_rate : float
        Fraction of pairs with k_B / n <= k_A / n.
    """

    n: int
    n_pairs: int
    alpha: float
    confidence: float
    fisher_rejection_rate: float
    disjoint_rate: float
    b_not_better_rate: float


def _disjoint_table(n_a: int, n_b: int, confidence: float) -> np.ndarray:
    """Boolean [k_a, k_b]: the Wilson intervals of k_a/n_a and k_b/n_b are disjoint."""
    lo_a, up_a = _interval_table(n_a, "wilson", confidence)
    lo_b, up_b = _interval_table(n_b, "wilson", confidence)
    return (up_a[:, None] < lo_b[None, :]) | (up_b[None, :] < lo_a[:, None])


def _b_not_better_table(n_a: int, n_b: int) -> np.ndarray:
    """Boolean [k_a, k_b]: k_b / n_b <= k_a / n_a, compared in integers."""
    k_a = np.arange(n_a + 1)[:, None]
    k_b = np.arange(n_b + 1)[None, :]
    return k_b * n_a <= k_a * n_b


def pair_summary(ev_a: Evaluations, ev_b: Evaluations, alpha=0.05, confidence=0.95):
    """Fisher rejections, disjoint Wilson intervals and B <= A over paired evaluations."""
    alpha = check_alpha(alpha)
    confidence = check_confidence(confidence)
    if ev_a.n_evals != ev_b.n_evals:
        raise ValueError(f"need as many A as B evaluations, got {ev_a.n_evals} and {ev_b.n_evals}")
    n_a, n_b = ev_a.n, ev_b.n
    # Count each (k_a, k_b) once, then weight the per-table outcomes by those counts.
    joint = np.zeros((n_a + 1, n_b + 1), dtype=np.int64)
    np.add.at(joint, (ev_a.counts, ev_b.counts), 1)
    pvalues = np.asarray(fisher_pvalue_table(n_a, n_b))
    total = ev_a.n_evals
    return PairSummary(
        n=n_a if n_a == n_b else -1,
        n_pairs=total,
        alpha=alpha,
        confidence=confidence,
        fisher_rejection_rate=float(joint[rejects(pvalues, alpha)].sum()) / total,
        disjoint_rate=float(joint[_disjoint_table(n_a, n_b, confidence)].sum()) / total,
        b_not_better_rate=float(joint[_b_not_better_table(n_a, n_b)].sum()) / total,
    )


@dataclass(frozen=True)
class ExactPairProbabilities:
    """Exact probabilities for independent evaluations k_A ~ Bin(n_a, p_a), k_B ~ Bin(n_b, p_b).

    ``disjoint`` is P(the two Wilson intervals are disjoint), ``b_not_better`` is
    P(k_B / n_b <= k_A / n_a); both are sums of products of binomial pmfs.
    """

    p_a: float
    n_a: int
    p_b: float
    n_b: int
    confidence: float
    disjoint: float
    b_not_better: float


def exact_pair_probabilities(p_a, n_a, p_b, n_b, confidence=0.95) -> ExactPairProbabilities:
    """The exact values the resampled disjoint and B <= A rates estimate.

    Parameters
    ----------
    p_a, p_b : float
        Long-run success rates (e.g. the pool rates).
    n_a, n_b : int
        Trials per evaluation.
    confidence : float
        Confidence level of the Wilson intervals [1]_.
    """
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    n_a = check_n(n_a, "n_a")
    n_b = check_n(n_b, "n_b")
    confidence = check_confidence(confidence)
    joint = np.outer(
        np.asarray(binom_pmf(np.arange(n_a + 1), n_a, p_a), dtype=np.float64),
        np.asarray(binom_pmf(np.arange(n_b + 1), n_b, p_b), dtype=np.float64),
    )
    return ExactPairProbabilities(
        p_a=p_a,
        n_a=n_a,
        p_b=p_b,
        n_b=n_b,
        confidence=confidence,
        disjoint=float(joint[_disjoint_table(n_a, n_b, confidence)].sum()),
        b_not_better=float(joint[_b_not_better_table(n_a, n_b)].sum()),
    )

"""Peeking simulated: the Monte Carlo false-win rate, the check on the exact one.

The plain simulation document 002 describes [1]_, run in numba: each experiment draws its trial
pairs one step at a time, applies the decision rule at each look and stops at the first
rejection; the fixed-n test (one look at the end) is counted on the same paths.
:func:`false_win_rate_mc` estimates the false-win rate of one look schedule, and
:func:`false_win_rate_vs_looks` gives the exact rate (:mod:`evalsim.stats.sequential.peeking`)
and the simulated one over a grid of numbers of looks, all schedules on common random
numbers. Look schedules and decision rules are those of the exact module
(:func:`~evalsim.stats.sequential.peeking.look_sizes`,
:data:`~evalsim.stats.sequential.peeking.RejectRule`), which also cites the theory of
repeated significance tests (Armitage, McPherson & Rowe, 1969).

References
----------
.. [1] Document 002, "What it takes to say a policy works", section "Looking early is a
   decision": the peeking loop, 100,000 simulated experiments at p = 0.7 and 40 trials
   each (2.8% when testing once, 11.0% when testing after every trial).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.sequential import _peeking_kernels as _k
from evalsim.stats.sequential.peeking import (
    RejectRule,
    _regions_for,
    _setting,
    _short_sizes,
    false_win_rate_exact,
    look_sizes,
)

__all__ = [
    "LooksCurve",
    "PeekingMCResult",
    "false_win_rate_mc",
    "false_win_rate_vs_looks",
]


def _as_rng(seed) -> tuple[np.random.Generator, int | None]:
    """A Generator from a non-negative int seed (fresh PCG64) or a Generator passed in."""
    if isinstance(seed, np.random.Generator):
        return seed, None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or a Generator, got {seed!r}")
    return np.random.default_rng(int(seed)), int(seed)


def _mc_counts(p_a, p_b, n_experiments, rng, schedules) -> list[np.ndarray]:
    """Run the MC kernel on several ``(sizes, regions)`` schedules with common random numbers.

    Returns, per schedule, the count of experiments whose first rejection is at each look.
    """
    regions_at: dict = {}
    flat_parts: list[np.ndarray] = []
    cursor = 0
    l_max = max(len(sizes) for sizes, _ in schedules)
    sizes_arr = np.full((len(schedules), l_max), -1, dtype=np.int64)
    offsets = np.zeros((len(schedules), l_max), dtype=np.int64)
    n_looks = np.array([len(sizes) for sizes, _ in schedules], dtype=np.int64)
    for s, (sizes, regions) in enumerate(schedules):
        for j, (m, r) in enumerate(zip(sizes, regions, strict=True)):
            key = (int(m), r.tobytes())  # identical regions (Fisher at the same m) stored once
            if key not in regions_at:
                regions_at[key] = cursor
                flat_parts.append(r.astype(np.uint8).ravel())
                cursor += flat_parts[-1].size
            sizes_arr[s, j] = m
            offsets[s, j] = regions_at[key]
    counts = _k.sequential_rejection_mc(
        p_a,
        p_b,
        n_experiments,
        rng,
        sizes_arr,
        n_looks,
        np.concatenate(flat_parts),
        offsets,
    )
    return [counts[s, : n_looks[s]] for s in range(len(schedules))]


@dataclass(frozen=True)
class PeekingMCResult:
    """Monte Carlo estimate of the false-win rate, with the fixed-n rate on the same paths.

    Attributes
    ----------
    n, p_a, p_b, alpha, look_sizes
        As in :class:`PeekingResult`.
    n_experiments : int
        Simulated experiments.
    seed : int or None
        The int seed passed in; None when a Generator was passed.
    false_wins : int
        Experiments that rejected at some look.
    false_win_rate, false_win_se : float
        ``false_wins / n_experiments`` and its binomial standard error.
    fixed_wins : int
        Experiments that reject when tested once at the last look (same paths).
    fixed_rate, fixed_se : float
        Its rate and standard error.
    """

    n: int
    p_a: float
    p_b: float
    alpha: float | None
    look_sizes: tuple[int, ...]
    n_experiments: int
    seed: int | None
    false_wins: int
    false_win_rate: float
    false_win_se: float
    fixed_wins: int
    fixed_rate: float
    fixed_se: float

    def __repr__(self) -> str:
        return (
            f"PeekingMCResult(n={self.n}, p_a={self.p_a:g}, p_b={self.p_b:g}, "
            f"looks={_short_sizes(self.look_sizes)}, n_experiments={self.n_experiments}, "
            f"false_win_rate={self.false_win_rate:.5f} ± {self.false_win_se:.5f}, "
            f"fixed_rate={self.fixed_rate:.5f} ± {self.fixed_se:.5f})"
        )


def _se(k: int, n: int) -> float:
    r = k / n
    return math.sqrt(r * (1.0 - r) / n)


def false_win_rate_mc(
    n=40,
    p=0.7,
    alpha=0.05,
    looks="every",
    n_experiments=100_000,
    seed=0,
    reject: RejectRule = None,
    p_b=None,
) -> PeekingMCResult:
    """Monte Carlo false-win rate: simulate experiments, stop at the first rejection.

    The plain simulation document 002 describes, in numba: each experiment draws ``n``
    trial pairs (A then B each step, uniforms from the generator), applies the
    decision rule at each look and stops at the first rejection. The fixed-n rate (one test
    at the last look) is counted on the same paths.

    Parameters
    ----------
    n, p, alpha, looks, reject
        As in :func:`false_win_rate_exact`.
    n_experiments : int
        Number of simulated experiments (document 002: 100,000).
    seed : int or numpy.random.Generator
        A non-negative int (a fresh PCG64 from it) or a Generator, e.g.
        ``evalsim.seeding.rng_for(study_seed, "peeking", "mc")``; a Generator is advanced.
    p_b : float, optional
        Rate of arm B if different from ``p`` (then the "false-win rate" is a power).

    Returns
    -------
    PeekingMCResult
    """
    n = check_n(n, "n")
    p = check_probability(p, "p")
    p_b = p if p_b is None else check_probability(p_b, "p_b")
    alpha = check_alpha(alpha)
    n_experiments = check_n(n_experiments, "n_experiments")
    rng, seed_int = _as_rng(seed)
    sizes = look_sizes(n, looks)
    regions = _regions_for(sizes, alpha, reject)
    seq_counts, fixed_counts = _mc_counts(
        p, p_b, n_experiments, rng, [(sizes, regions), (sizes[-1:], regions[-1:])]
    )
    wins = int(seq_counts.sum())
    fixed = int(fixed_counts.sum())
    return PeekingMCResult(
        **_setting(n, p, p_b, alpha if reject is None else None, sizes),
        n_experiments=n_experiments,
        seed=seed_int,
        false_wins=wins,
        false_win_rate=wins / n_experiments,
        false_win_se=_se(wins, n_experiments),
        fixed_wins=fixed,
        fixed_rate=fixed / n_experiments,
        fixed_se=_se(fixed, n_experiments),
    )


@dataclass(frozen=True)
class LooksCurve:
    """False-win rate against the number of equally spaced looks, exact and Monte Carlo.

    Attributes
    ----------
    n, p, alpha, n_experiments, seed
        The study (seed None when a Generator was passed).
    n_looks : numpy.ndarray of int64
        Numbers of looks K (K = 1 is testing once, K = n is after every trial pair).
    exact : numpy.ndarray of float64
        Exact false-win rate per K.
    mc, mc_se : numpy.ndarray of float64
        Monte Carlo rate per K (common random numbers across K) and its standard error.
    """

    n: int
    p: float
    alpha: float
    n_experiments: int
    seed: int | None
    n_looks: np.ndarray
    exact: np.ndarray
    mc: np.ndarray
    mc_se: np.ndarray

    def __repr__(self) -> str:
        pairs = ", ".join(
            f"{k}: {e:.4f}" for k, e in zip(self.n_looks.tolist(), self.exact.tolist(), strict=True)
        )
        return f"LooksCurve(n={self.n}, p={self.p:g}, alpha={self.alpha:g}, exact={{{pairs}}})"


def false_win_rate_vs_looks(
    n=40, p=0.7, alpha=0.05, n_looks=(1, 2, 5, 10, 20, 40), n_experiments=100_000, seed=0
) -> LooksCurve:
    """Exact and Monte Carlo false-win rate for K equally spaced looks, for each K given.

    All K share the same simulated paths, so differences between K are not noise between
    independent runs. Rounding of the look sizes: see :func:`look_sizes`.
    """
    n = check_n(n, "n")
    p = check_probability(p, "p")
    alpha = check_alpha(alpha)
    n_experiments = check_n(n_experiments, "n_experiments")
    rng, seed_int = _as_rng(seed)
    ks = [int(check_n(k, "n_looks")) for k in n_looks]
    if not ks:
        raise ValueError("n_looks must name at least one number of looks, got an empty list")
    exact = np.array([false_win_rate_exact(n, p, alpha, looks=k).false_win_rate for k in ks])
    schedules = []
    for k in ks:
        sizes = look_sizes(n, k)
        schedules.append((sizes, _regions_for(sizes, alpha, None)))
    counts = _mc_counts(p, p, n_experiments, rng, schedules)
    wins = np.array([int(c.sum()) for c in counts], dtype=np.int64)
    mc = wins / n_experiments
    return LooksCurve(
        n=n,
        p=p,
        alpha=alpha,
        n_experiments=n_experiments,
        seed=seed_int,
        n_looks=np.array(ks, dtype=np.int64),
        exact=exact,
        mc=mc,
        mc_se=np.sqrt(mc * (1.0 - mc) / n_experiments),
    )

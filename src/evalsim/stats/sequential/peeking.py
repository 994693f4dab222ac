"""Peeking: the false-win rate of testing repeatedly while the trials come in.

Two policies with the same true success rate each get ``n`` trials, one pair at a time. At
every *look* (after some number of trial pairs) a test is run; the experiment stops at the
first look whose counts ``(k_A, k_B)`` fall in that look's rejection region and "declares a
winner". With equal rates every declared winner is a false win.

:func:`sequential_rejection_probability` computes the probability of stopping exactly, by
dynamic programming over ``(k_A, k_B)`` with rejection absorbing: the joint distribution of
the counts is propagated trial pair by trial pair and, at each look, the mass inside the
rejection region moves to the absorbed total. It is general over look schedules and decision
rules (any boolean region per look: Fisher's test by default, or a sequential boundary), and
over unequal rates (then the absorbed mass is the power of the sequential design).
:func:`false_win_rate_exact` is the equal-rates case and
:func:`sequential_mcnemar_probability` the paired design's. The Monte Carlo check, and both
over a grid of numbers of looks, are :mod:`evalsim.stats.sequential.peeking_simulation`.

References
----------
.. [1] Armitage, McPherson & Rowe (1969), "Repeated significance tests on accumulating
   data", J. R. Statist. Soc. A 132(2), 235-244.
.. [2] Document 002, "What it takes to say a policy works", section "Looking early is a
   decision" (p = 0.7, 40 trials each, 100,000 experiments: 2.8% vs 11.0%).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.decision import alpha_threshold, rejects
from evalsim.stats.sequential import _peeking_kernels as _k

__all__ = [
    "PeekingResult",
    "false_win_rate_exact",
    "fisher_region_bounds",
    "fisher_rejection_region",
    "look_sizes",
    "sequential_mcnemar_probability",
    "sequential_rejection_probability",
]

#: A decision rule: None (Fisher two-sided p < alpha), a callable ``rule(j, m)`` returning the
#: boolean region (shape (m+1, m+1), indexed [k_A, k_B]) of look j at m trials per arm, or a
#: sequence with one such region per look.
RejectRule = None | Callable[[int, int], np.ndarray] | Sequence[np.ndarray]


def look_sizes(n, looks="every") -> np.ndarray:
    """Trials per arm at each look.

    Parameters
    ----------
    n : int
        Trials per arm at the end of the experiment (>= 1).
    looks : "every", int or sequence of int
        ``"every"``: a look after every trial pair, sizes ``1, 2, ..., n``.
        An int ``K`` in ``1..n``: K equally spaced looks at ``ceil(j * n / K)`` for
        ``j = 1..K`` (so the last look is at ``n`` and ``K = n`` equals ``"every"``;
        ``K = 1`` is testing once). A sequence: explicit sizes, strictly increasing, each in
        ``1..n``.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> look_sizes(40, 3).tolist()
    [14, 27, 40]
    """
    n = check_n(n, "n")
    if isinstance(looks, str):
        if looks != "every":
            raise ValueError(f"looks must be 'every', an int or a sequence of ints, got {looks!r}")
        return np.arange(1, n + 1, dtype=np.int64)
    if isinstance(looks, numbers.Integral) and not isinstance(looks, bool):
        k = int(looks)
        if not 1 <= k <= n:
            raise ValueError(f"looks must be an int in 1..n={n}, got {looks!r}")
        j = np.arange(1, k + 1, dtype=np.int64)
        return (j * n + k - 1) // k  # ceil(j * n / k) in integers
    try:
        sizes = np.asarray(looks)
    except (TypeError, ValueError):
        raise ValueError(
            f"looks must be 'every', an int or a sequence of ints, got {looks!r}"
        ) from None
    if sizes.ndim != 1 or sizes.size == 0 or not np.issubdtype(sizes.dtype, np.integer):
        raise ValueError(f"looks must be a non-empty sequence of ints, got {looks!r}")
    sizes = sizes.astype(np.int64)
    if sizes[0] < 1 or sizes[-1] > n or np.any(np.diff(sizes) <= 0):
        raise ValueError(
            f"look sizes must be strictly increasing and within 1..n={n}, got {sizes.tolist()}"
        )
    return sizes


@functools.lru_cache(maxsize=4096)
def _fisher_region_cached(m: int, alpha: float) -> np.ndarray:
    from evalsim.stats.two_sample.fisher import fisher_pvalue_table

    region = rejects(np.asarray(fisher_pvalue_table(m, m)), alpha)
    region.setflags(write=False)
    return region


def fisher_rejection_region(m, alpha=0.05) -> np.ndarray:
    """Boolean region ``[k_A, k_B]`` where Fisher's two-sided p < alpha at m trials per arm.

    Uses :func:`evalsim.stats.two_sample.fisher.fisher_pvalue_table` (equal to
    ``scipy.stats.fisher_exact``); strict ``p < alpha`` as the documents write it. Regions
    are cached (they depend only on ``m`` and ``alpha``); the array returned is read-only.
    """
    return _fisher_region_cached(check_n(m, "m"), check_alpha(alpha))


def fisher_region_bounds(m: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's region at m trials per arm as per-margin bounds (O(m) memory).

    Returns ``(left, right)`` of length ``2m + 1``: the table ``(k_A, k_B)`` is rejected
    when ``k_A <= left[k_A + k_B]`` or ``k_A >= right[k_A + k_B]``; the same tables as
    :func:`fisher_rejection_region` (the tie rule of :mod:`evalsim.stats.decision`).
    """
    m = check_n(m, "m")
    thresh = alpha_threshold(check_alpha(alpha))
    left = np.empty(2 * m + 1, dtype=np.int64)
    right = np.empty(2 * m + 1, dtype=np.int64)
    _k.fisher_region_bounds(m, thresh, min(1e-30, thresh * 1e-3 / (m + 2)), left, right)
    return left, right


def _fisher_dp(p_a: float, p_b: float, sizes: np.ndarray, alpha: float):
    """Exact DP for the default Fisher rule without stored regions; the fixed-n rate by the
    exact power kernel (the same region)."""
    from evalsim.stats.two_sample.power import _power

    by_look = _k.sequential_rejection_dp_fisher(p_a, p_b, sizes, alpha_threshold(alpha))
    m = int(sizes[-1])
    fixed = np.array([_power(p_a, m, p_b, m, alpha)])
    if len(sizes) == 1:  # testing once is the fixed-n test: the same number, bit for bit
        by_look = fixed.copy()
    return by_look, fixed


def _regions_for(sizes: np.ndarray, alpha: float, reject: RejectRule) -> list[np.ndarray]:
    """One boolean (m+1, m+1) region per look, validated."""
    if reject is None:
        regions = [fisher_rejection_region(int(m), alpha) for m in sizes]
    elif callable(reject):
        regions = [np.asarray(reject(j, int(m))) for j, m in enumerate(sizes)]
    else:
        regions = [np.asarray(r) for r in reject]
        if len(regions) != len(sizes):
            raise ValueError(
                f"reject must give one region per look: {len(sizes)} looks, "
                f"got {len(regions)} regions"
            )
    for j, (m, r) in enumerate(zip(sizes, regions, strict=True)):
        if r.shape != (m + 1, m + 1) or r.dtype != bool:
            raise ValueError(
                f"the region of look {j} (m={m}) must be a boolean array of shape "
                f"({m + 1}, {m + 1}), got dtype {r.dtype} shape {r.shape}"
            )
    return regions


def _pack(regions: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate regions (uint8, row-major) and their start offsets."""
    flat = [r.astype(np.uint8).ravel() for r in regions]
    offsets = np.zeros(len(flat), dtype=np.int64)
    if len(flat) > 1:
        offsets[1:] = np.cumsum([f.size for f in flat[:-1]])
    return np.concatenate(flat), offsets


def _short_sizes(sizes) -> str:
    s = list(sizes)
    if len(s) > 6:
        return f"({s[0]}, {s[1]}, {s[2]}, ..., {s[-1]}; {len(s)} looks)"
    return "(" + ", ".join(str(v) for v in s) + ")"


@dataclass(frozen=True)
class PeekingResult:
    """Exact probability of declaring a winner under a look schedule.

    Attributes
    ----------
    n : int
        Trials per arm at the last look.
    p_a, p_b : float
        True success rates (equal for a false-win rate).
    alpha : float or None
        Level of the default Fisher rule; None when a custom rule was passed.
    look_sizes : tuple of int
        Trials per arm at each look.
    rejection_by_look : tuple of float
        P(the first rejection happens at look j).
    false_win_rate : float
        P(a rejection at any look) = sum of ``rejection_by_look``; with ``p_a != p_b`` this
        is the power of the sequential design.
    fixed_rate : float
        P(rejection) when testing once, at the last look's size with the last look's region
        (for the Fisher rule: the size of the fixed-n test).
    """

    n: int
    p_a: float
    p_b: float
    alpha: float | None
    look_sizes: tuple[int, ...]
    rejection_by_look: tuple[float, ...]
    false_win_rate: float
    fixed_rate: float

    @property
    def n_looks(self) -> int:
        return len(self.look_sizes)

    @property
    def inflation(self) -> float:
        """false_win_rate / fixed_rate."""
        return self.false_win_rate / self.fixed_rate if self.fixed_rate > 0 else math.inf

    def __repr__(self) -> str:
        rule = "custom rule" if self.alpha is None else f"Fisher p < {self.alpha:g}"
        return (
            f"PeekingResult(n={self.n}, p_a={self.p_a:g}, p_b={self.p_b:g}, {rule}, "
            f"looks={_short_sizes(self.look_sizes)}, false_win_rate={self.false_win_rate:.6f}, "
            f"fixed_rate={self.fixed_rate:.6f})"
        )


def _setting(n, p_a, p_b, alpha, sizes) -> dict:
    """The fields every peeking result shares: trials per arm, the two rates, the level of
    the default rule (None for a custom rule) and the look sizes."""
    return {
        "n": n,
        "p_a": p_a,
        "p_b": p_b,
        "alpha": alpha,
        "look_sizes": tuple(int(m) for m in sizes),
    }


def _exact_result(setting: dict, by_look: np.ndarray, fixed) -> PeekingResult:
    """A :class:`PeekingResult` from the exact rejection probability at each look and the
    fixed-n test's."""
    return PeekingResult(
        **setting,
        rejection_by_look=tuple(float(v) for v in by_look),
        false_win_rate=float(by_look.sum()),
        fixed_rate=float(fixed),
    )


def sequential_rejection_probability(
    n, p_a, p_b, alpha=0.05, looks="every", reject: RejectRule = None
) -> PeekingResult:
    """Exact probability that a looked-at two-arm experiment stops with a rejection.

    Parameters
    ----------
    n : int
        Trials per arm at the end (both arms get one trial per step).
    p_a, p_b : float
        True success rates of arms A and B.
    alpha : float
        Level of the default rule (Fisher two-sided p < alpha); ignored by a custom rule.
    looks : "every", int or sequence of int
        Look schedule, see :func:`look_sizes`.
    reject : None, callable or sequence of arrays
        Decision rule, see :data:`RejectRule`.

    Returns
    -------
    PeekingResult

    Notes
    -----
    Cost O(n^3) for the propagation plus the regions; rejection is absorbing, so a path
    that crossed at an earlier look never counts again [1]_.
    """
    n = check_n(n, "n")
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    alpha = check_alpha(alpha)
    sizes = look_sizes(n, looks)
    if reject is None:
        by_look, fixed = _fisher_dp(p_a, p_b, sizes, alpha)
    else:
        regions = _regions_for(sizes, alpha, reject)
        flat, offsets = _pack(regions)
        by_look = _k.sequential_rejection_dp(p_a, p_b, sizes, flat, offsets)
        last = regions[-1]
        fixed = _k.sequential_rejection_dp(
            p_a, p_b, sizes[-1:], last.astype(np.uint8).ravel(), np.zeros(1, dtype=np.int64)
        )
    return _exact_result(
        _setting(n, p_a, p_b, alpha if reject is None else None, sizes), by_look, fixed[0]
    )


def sequential_mcnemar_probability(n, p10, p01, alpha=0.05, looks="every") -> PeekingResult:
    """Exact probability that a looked-at *paired* experiment stops with a rejection.

    The paired design labs run: each step both policies try the same initial condition. A
    pair is discordant "A only" with probability ``p10``, "B only" with ``p01``, concordant
    otherwise; at every look the two-sided exact McNemar test (binomial test of the
    discordant pairs at 1/2, tie rule of :mod:`evalsim.stats.decision`) runs on the pairs so
    far, and the first rejection stops the experiment. With ``p10 == p01`` every rejection
    is a false win.

    Parameters
    ----------
    n : int
        Pairs at the last look.
    p10, p01 : float
        Probabilities of the two discordant outcomes of a pair, ``p10 + p01 <= 1``.
    alpha : float
        Level of the McNemar test.
    looks : "every", int or sequence of int
        Look schedule in pairs, see :func:`look_sizes`.

    Returns
    -------
    PeekingResult
        ``p_a``/``p_b`` hold ``p10``/``p01``; ``fixed_rate`` is the exact McNemar power
        (size, with equal discordant rates) of testing once at ``n`` pairs.
    """
    from evalsim.stats.two_sample.paired_design import mcnemar_critical_values, mcnemar_power_exact

    n = check_n(n, "n")
    p10 = check_probability(p10, "p10")
    p01 = check_probability(p01, "p01")
    if not np.isscalar(p10) or not np.isscalar(p01) or p10 + p01 > 1.0 + 1e-12:
        raise ValueError(f"p10 + p01 must be at most 1, got p10={p10!r}, p01={p01!r}")
    alpha = check_alpha(alpha)
    sizes = look_sizes(n, looks)
    crit = mcnemar_critical_values(n, alpha)
    by_look = _k.paired_rejection_dp(p10, p01, sizes, crit)
    fixed = mcnemar_power_exact(n, p10, p01, alpha) if p10 + p01 > 0 else 0.0
    return _exact_result(_setting(n, p10, p01, alpha, sizes), by_look, fixed)


def false_win_rate_exact(n=40, p=0.7, alpha=0.05, looks="every", reject: RejectRule = None):
    """Exact false-win rate for two equal policies (rate ``p``) under a look schedule.

    Parameters
    ----------
    n : int
        Trials per policy (document 002: 40).
    p : float
        The common true success rate (document 002: 0.7).
    alpha : float
        Level of Fisher's two-sided test (p < alpha).
    looks : "every", int or sequence of int
        See :func:`look_sizes`.
    reject : optional
        A custom decision rule (see :data:`RejectRule`) instead of Fisher's test.

    Returns
    -------
    PeekingResult
        ``.false_win_rate`` (any look) and ``.fixed_rate`` (testing once at n).

    Examples
    --------
    >>> r = false_win_rate_exact(40, 0.7, 0.05, looks=1)
    >>> r.false_win_rate == r.fixed_rate
    True
    """
    p = check_probability(p, "p")
    return sequential_rejection_probability(n, p, p, alpha=alpha, looks=looks, reject=reject)

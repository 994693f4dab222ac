"""Exact power of Fisher's two-sided test, P(B does not beat A), and n per arm for a power.

The exact power of a test is the probability of its rejection region, summed [1]_: with
``k1 ~ Binomial(n1, p1)`` and ``k2 ~ Binomial(n2, p2)`` independent,

    power = sum over (k1, k2) with fisher_pvalue(k1, n1, k2, n2) < alpha of b1(k1) b2(k2).

Tables are grouped by margin ``K = k1 + k2``. For each margin the p-values rise from both
tails towards the mode, so the rejection set is two tails; they are found from the margin's
hypergeometric weights sorted once (two monotone sides merged) and a cumulative sum, without
storing the (n1 + 1)(n2 + 1) table of p-values. Weights below 1e-30 of the mode's are left
out of the sort (their tables have p far below alpha and are rejected; the omitted mass,
< 1e-26 of the margin, cannot move a p-value across alpha except within ~1e-26 of it), and
pairs whose binomial probability is below 1e-50 of the arm's largest are skipped. A p-value
within 1e-9 (relative) of alpha is a tie and does not reject (:mod:`evalsim.stats.decision`), as in
:func:`evalsim.stats.two_sample.fisher.fisher_rejects`. The result equals the brute
force double loop over ``scipy.stats.fisher_exact`` (``tests/test_power.py``).

References
----------
.. [1] R. F. Casagrande, M. C. Pike, P. G. Smith, "The power function of the 'exact' test
   for comparing two binomial distributions", Applied Statistics 27 (1978) 176-180.
.. [2] J. L. Fleiss, B. Levin, M. C. Paik, "Statistical Methods for Rates and
   Proportions", 3rd ed., 2003, eq. 4.14 (normal-approximation n per arm, the search's start).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.decision import alpha_threshold
from evalsim.stats.proportion._kernels import binom_pmf_vector
from evalsim.stats.two_sample import _fisher_kernels as _k

__all__ = [
    "N_DEFINITION",
    "n_definition",
    "FisherPowerN",
    "PowerSearchN",
    "fisher_power",
    "fisher_power_curve",
    "n_for_fisher_power",
    "prob_b_not_better",
]


def n_definition(test_short: str) -> str:
    """The definitions of ``n`` and ``n_first`` of a power search, naming the test whose exact
    power is searched (its short name: "Fisher", "Boschloo", "Barnard")."""
    return (
        f"n = the smallest n per arm from which exact {test_short} power stays >= target for "
        "every n' in n..n + window; n_first = the smallest n per arm with power >= target, "
        "searched downward from a bracketed crossing until `window` consecutive n' fall below "
        "target"
    )


N_DEFINITION = n_definition("Fisher")


def _cut(alpha: float, n1: int) -> float:
    # Weights below cut (relative to the mode) have p < (n1 + 1) * cut * (1 + 1e-14) < alpha.
    return min(1e-30, alpha * 1e-3 / (n1 + 2))


#: Binomial probabilities below this share of an arm's largest are left out of the power sum
#: (their pairs add less than ~1e-47 absolute at any n this library accepts).
_TRIM = 1e-50


def _trimmed(b: np.ndarray) -> np.ndarray:
    """``b`` with entries below ``_TRIM`` of its maximum set to 0 (the kernel skips zeros)."""
    b[b < _TRIM * b.max()] = 0.0
    return b


def _power(p1: float, n1: int, p2: float, n2: int, alpha: float) -> float:
    """Exact power on validated scalars (kernel wrapper)."""
    b1 = _trimmed(binom_pmf_vector(n1, p1))
    b2 = _trimmed(binom_pmf_vector(n2, p2))
    size = min(n1, n2) + 1
    w = np.empty(size, dtype=np.float64)
    order = np.empty(size, dtype=np.int64)
    # The kernel rejects p < its threshold: alpha less the tie tolerance (evalsim.stats.decision).
    thresh = alpha_threshold(alpha)
    return float(_k.power_kernel(n1, b1, n2, b2, thresh, _cut(thresh, n1), w, order))


def _check_two_arms(p1, n1, p2, n2, names):
    """Validate two arms' success rates and trial counts, each a single value.

    Parameters
    ----------
    p1, n1, p2, n2
        Success rates (in [0, 1]) and trials (>= 1) of the two arms.
    names : tuple of str
        The caller's names of ``p1, n1, p2, n2``, for the error messages.

    Returns
    -------
    p1, n1, p2, n2
        Validated: float rates, int trials.

    Raises
    ------
    ValueError
        A rate or a count out of range, or an array where a single value is needed.
    """
    p1_name, n1_name, p2_name, n2_name = names
    p1, p2 = check_probability(p1, p1_name), check_probability(p2, p2_name)
    n1, n2 = check_n(n1, n1_name), check_n(n2, n2_name)
    for name, v in ((p1_name, p1), (p2_name, p2), (n1_name, n1), (n2_name, n2)):
        if not np.isscalar(v):
            raise ValueError(f"{name} must be a single value, got {v!r}")
    return p1, n1, p2, n2


def fisher_power(p1, n1, p2, n2, alpha=0.05) -> float:
    """Exact power of the two-sided Fisher exact test at level ``alpha`` (reject if p < alpha).

    Parameters
    ----------
    p1, p2 : float
        True success rates of the two arms, in [0, 1].
    n1, n2 : int
        Trials per arm (>= 1).
    alpha : float
        Significance level in (0, 1); the test rejects when its p-value is ``< alpha``.

    Returns
    -------
    float
        ``P(fisher_pvalue(k1, n1, k2, n2) < alpha)`` for independent binomial counts. With
        ``p1 == p2`` it is the test's exact size (<= alpha, Fisher's test is conservative).

    Examples
    --------
    >>> round(fisher_power(0.737, 20, 0.877, 20), 3)
    0.119
    """
    p1, n1, p2, n2 = _check_two_arms(p1, n1, p2, n2, ("p1", "n1", "p2", "n2"))
    return _power(p1, n1, p2, n2, check_alpha(alpha))


def fisher_power_curve(p1, p2, n_values, alpha=0.05) -> np.ndarray:
    """Exact Fisher power at ``n`` trials per arm for each ``n`` in ``n_values``.

    Shows the saw-tooth: the power is not monotone in n because the test is discrete.
    """
    p1 = check_probability(p1, "p1")
    p2 = check_probability(p2, "p2")
    alpha = check_alpha(alpha)
    ns = np.atleast_1d(check_n(np.asarray(n_values), "n_values"))
    return np.array([_power(p1, int(n), p2, int(n), alpha) for n in ns.ravel()]).reshape(ns.shape)


def prob_b_not_better(p_a, n_a, p_b, n_b) -> float:
    """P(B's observed rate <= A's): ``P(k_B / n_B <= k_A / n_A)``, counts independent binomial.

    With ``n_a == n_b`` this is ``P(k_B <= k_A)``, lesson 25's "B scores <= A". Rates are
    compared exactly in integers (``k_B * n_A <= k_A * n_B``).

    Parameters
    ----------
    p_a, p_b : float
        True success rates in [0, 1].
    n_a, n_b : int
        Trials of each policy (>= 1).

    Examples
    --------
    >>> round(prob_b_not_better(0.737, 20, 0.877, 20), 3)
    0.173
    """
    p_a, n_a, p_b, n_b = _check_two_arms(p_a, n_a, p_b, n_b, ("p_a", "n_a", "p_b", "n_b"))
    ba = binom_pmf_vector(n_a, p_a)
    bb = binom_pmf_vector(n_b, p_b)
    return float(min(_k.prob_not_better_kernel(n_a, ba, n_b, bb), 1.0))


@dataclass(frozen=True)
class PowerSearchN:
    """Trials per arm for a target exact power, as :func:`search_n` finds them (see
    :data:`N_DEFINITION`); the fields every test's sample-size result shares.

    Attributes
    ----------
    n : int
        Smallest n per arm from which the power stays >= ``target`` for ``window`` more n.
    n_first : int
        Smallest n per arm whose power reaches ``target`` (it may dip below again).
    power, power_first : float
        Exact power at ``n`` and at ``n_first``.
    target, alpha, p1, p2 : float
        The inputs.
    window : int
        Monotonicity window of the definition of ``n``.
    n_normal : int
        Normal-approximation n per arm that started the search.
    evaluations : int
        Exact power evaluations the search used.
    definition : str
        The definitions of ``n`` and ``n_first`` in words.
    """

    n: int
    n_first: int
    power: float
    power_first: float
    target: float
    alpha: float
    p1: float
    p2: float
    window: int
    n_normal: int
    evaluations: int
    definition: str = N_DEFINITION


@dataclass(frozen=True)
class FisherPowerN(PowerSearchN):
    """Trials per arm for a target exact power of the two-sided Fisher test
    (:func:`n_for_fisher_power`); the fields are those of :class:`PowerSearchN`.
    """

    def __repr__(self) -> str:
        return (
            f"FisherPowerN(n={self.n}, n_first={self.n_first}, power={self.power:.4f}, "
            f"power_first={self.power_first:.4f}, target={self.target}, alpha={self.alpha}, "
            f"p1={self.p1}, p2={self.p2}, window={self.window}, n_normal={self.n_normal}, "
            f"evaluations={self.evaluations})"
        )


def _normal_n(p1: float, p2: float, alpha: float, power: float) -> int:
    """Fleiss' normal-approximation n per arm (no continuity correction) [2]_; a start only."""
    za = ndtri(1.0 - alpha / 2.0)
    zb = ndtri(power)
    pbar = 0.5 * (p1 + p2)
    num = za * math.sqrt(2.0 * pbar * (1.0 - pbar)) + zb * math.sqrt(
        p1 * (1.0 - p1) + p2 * (1.0 - p2)
    )
    return max(1, math.ceil((num / (p1 - p2)) ** 2))


def n_for_fisher_power(
    p1, p2, power=0.8, alpha=0.05, window: int = 20, n_max: int = 1_000_000
) -> FisherPowerN:
    """Trials per arm for exact two-sided Fisher power ``>= power`` (equal n per arm).

    Power is not monotone in n (a saw-tooth: the test is discrete), so "the smallest n"
    needs a definition. ``.n`` is the smallest n from which the power stays at or above the
    target for every n' in ``n .. n + window``; ``.n_first`` is the first n that reaches it.

    Search. (1) Start at the normal-approximation n [2]_ and bracket a crossing by
    geometric steps (power below the target at ``lo``, at or above at ``hi``); (2) bisect to
    a crossing ``lo + 1 = hi``; (3) scan down from it until ``window`` consecutive n are below
    the target, keeping the smallest n that reached it (``n_first``); (4) scan up from
    ``n_first`` until ``window + 1`` consecutive n reach the target (``n``). Step (3) finds
    the global first crossing provided the saw-tooth never climbs back to the target below a
    run of ``window`` failures, true in every case checked by a full scan from n = 1 in
    ``tests/test_power.py``. Each power evaluation is exact (:func:`fisher_power`).

    Parameters
    ----------
    p1, p2 : float
        True rates in [0, 1], ``p1 != p2``.
    power : float
        Target power in (0, 1).
    alpha : float
        Significance level in (0, 1) (reject when p < alpha).
    window : int
        Monotonicity window (>= 1) of the definition of ``.n``.
    n_max : int
        Give up (ValueError) above this n per arm.

    Returns
    -------
    FisherPowerN
    """
    p1 = check_probability(p1, "p1")
    p2 = check_probability(p2, "p2")
    if not np.isscalar(p1) or not np.isscalar(p2):
        raise ValueError(f"p1 and p2 must be single values, got p1={p1!r}, p2={p2!r}")
    alpha, window, n_max = check_search(p1, p2, alpha, power, window, n_max)
    power = float(power)
    return FisherPowerN(
        **search_n(
            lambda n: _power(p1, n, p2, n, alpha), p1, p2, alpha, power, window, n_max, power
        )
    )


def check_search(p1, p2, alpha, power, window, n_max) -> tuple[float, int, int]:
    """Check the arguments of an equal-n search for power, the rates already checked.

    Parameters
    ----------
    p1, p2 : float
        True rates, each already checked.
    alpha : float
        Significance level in (0, 1).
    power : float
        Target power in (0, 1).
    window, n_max : int
        Monotonicity window and the largest n per arm, each >= 1.

    Returns
    -------
    tuple of (float, int, int)
        ``alpha``, ``window`` and ``n_max``, checked.

    Raises
    ------
    ValueError
        If ``p1 == p2`` or an argument is out of range.
    """
    if p1 == p2:
        raise ValueError(f"p1 and p2 must differ, got p1 = p2 = {p1!r}")
    alpha = check_alpha(alpha)
    if (
        isinstance(power, bool | np.bool_)
        or not isinstance(power, numbers.Real)
        or not 0.0 < power < 1.0
    ):
        raise ValueError(f"power must be a number in (0, 1), got {power!r}")
    return alpha, check_n(window, "window"), check_n(n_max, "n_max")


def search_n(power_at, p1, p2, alpha, target: float, window: int, n_max: int, shown) -> dict:
    """Run the saw-tooth search (:func:`saw_tooth_n`) on one exact power function.

    Parameters
    ----------
    power_at : callable
        ``power_at(n)``: the exact power with n per arm; called at most once per n.
    p1, p2 : float
        True rates (the normal-approximation start and the error messages).
    alpha : float
        Significance level (the normal-approximation start).
    target : float
        Target power.
    window, n_max : int
        As in :func:`saw_tooth_n`.
    shown
        The target as the error message names it.

    Returns
    -------
    dict
        The fields every sample-size result shares: ``n``, ``n_first``, ``power``,
        ``power_first``, ``target``, ``alpha``, ``p1``, ``p2``, ``window``, ``n_normal`` and
        ``evaluations`` (distinct n whose power was computed).
    """
    cache: dict[int, float] = {}

    def pw(n: int) -> float:
        if n not in cache:
            cache[n] = power_at(n)
        return cache[n]

    def ok(n: int) -> bool:
        return pw(n) >= target

    n0 = min(_normal_n(p1, p2, alpha, target), n_max)
    n_first, n_stable = saw_tooth_n(ok, n0, n_max, window, shown, p1, p2)
    return dict(
        n=n_stable,
        n_first=n_first,
        power=pw(n_stable),
        power_first=pw(n_first),
        target=target,
        alpha=alpha,
        p1=p1,
        p2=p2,
        window=window,
        n_normal=n0,
        evaluations=len(cache),
    )


def saw_tooth_n(ok, n0: int, n_max: int, window: int, power, p1, p2) -> tuple[int, int]:
    """The first n with ``ok(n)`` and the first n from which ``ok`` holds ``window`` more n.

    Exact power is a saw-tooth in n, so the search brackets from the normal-approximation
    ``n0``, bisects to a crossing, scans down for the first n reaching the target until
    ``window`` consecutive misses, then up for ``window + 1`` consecutive successes. ``power``,
    ``p1`` and ``p2`` only name the problem in the error messages. Returns (n_first, n_stable).
    """
    # (1) bracket
    if ok(n0):
        hi, lo, step = n0, n0, max(1, n0 // 8)
        while lo > 1 and ok(lo):
            hi = lo
            lo = max(1, lo - step)
            step *= 2
        if ok(lo):  # reached n = 1
            hi = lo
    else:
        lo, hi, step = n0, n0, max(1, n0 // 8)
        while not ok(hi):
            lo = hi
            if hi >= n_max:
                raise ValueError(
                    f"power {power!r} not reached for p1={p1!r}, p2={p2!r} up to n_max={n_max!r}"
                )
            hi = min(n_max, hi + step)
            step *= 2
    # (2) bisect to a crossing: not ok(lo), ok(hi)
    while hi - lo > 1 and not ok(lo):
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    # (3) scan down for the first n reaching the target
    n_first = hi
    fails = 0
    m = hi - 1
    while m >= 1 and fails < window:
        if ok(m):
            n_first = m
            fails = 0
        else:
            fails += 1
        m -= 1
    # (4) scan up for a run of window + 1 successes
    run = 0
    m = n_first
    while True:
        if m > n_max:
            raise ValueError(
                f"power {power!r} not held for {window!r} + 1 consecutive n up to "
                f"n_max={n_max!r} (p1={p1!r}, p2={p2!r})"
            )
        if ok(m):
            run += 1
            if run == window + 1:
                return n_first, m - window
        else:
            run = 0
        m += 1

"""Exact power, rejection region and n per arm of the exact unconditional tests of the
two-sample registry (:data:`evalsim.stats.names.TWO_SAMPLE_TESTS`, entries with
``certified``), with the registry's four calls (``pvalue_record``, ``exact_power``, ``region``,
``n_for_power``); Fisher's answers them in :mod:`evalsim.stats.two_sample.conditional`.

The exact power of a test is the probability of its rejection region under independent
binomial arms [1]_: ``power = sum over tables with p < alpha of b(k1; n1, p1) b(k2; n2, p2)``
(rejection rule of :mod:`evalsim.stats.decision`).

Rejection regions of the unconditional tests. Without the Berger-Boos restriction a table's
p-value is the supremum of its region's tail polynomial, and regions are nested along the
statistic's order, so the p-values are non-decreasing along that order and the rejection
region is a prefix of it (for two-sided Boschloo, the union of the two one-sided prefixes at
``alpha / 2``). The prefix is found by bisection, each step deciding ``sup < alpha`` with a
certified supremum (:func:`evalsim.stats.two_sample._nuisance_sup_kernels.certified_sup`):
the decision is certain when the certified interval ``[p, upper]`` lies on one side of
alpha; otherwise it is recomputed at a relative tolerance of 1e-12 and, if still undecided,
taken from the attained ``p`` and counted in ``undecided``. With ``gamma`` (Berger-Boos) the
p-values of every table come from
:func:`evalsim.stats.two_sample.unconditional.unconditional_pvalue_table`.

n per arm: :func:`n_for_power` uses the rule of
:func:`evalsim.stats.two_sample.power.n_for_fisher_power`
(power is a saw-tooth in n): ``n`` is the smallest n from which the power stays at or above
the target for ``window`` more n, ``n_first`` the first n that reaches it.

References
----------
.. [1] R. F. Casagrande, M. C. Pike, P. G. Smith, Applied Statistics 27 (1978) 176-180.
.. [2] C. R. Mehta, P. Senchaudhuri, "Conditional versus unconditional exact tests for
   comparing two binomials", Cytel Software Corporation (2003).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.decision import alpha_threshold
from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.stats.proportion._kernels import binom_pmf_vector
from evalsim.stats.two_sample import unconditional as _u
from evalsim.stats.two_sample._nuisance_sup_kernels import (
    certified_sup,
    certified_sup_stop,
    prefix_over_on_grid,
)
from evalsim.stats.two_sample.power import (
    PowerSearchN,
    check_search,
    n_definition,
    search_n,
)

__all__ = [
    "TestPowerN",
    "exact_power",
    "n_for_power",
    "power_of_region",
    "pvalue_record",
    "region",
    "rejection_region",
]


def _prefix_region(space, score, tie, thr):
    """Boolean mask of the tables whose p-value (supremum over [0, 1]) is below ``thr``.

    Returns ``(mask, undecided)``.
    """
    order = np.argsort(score, kind="stable")
    s_sorted = score[order]
    # a table's region: the scores up to its own plus the tie tolerance (tie_threshold)
    thr_sorted = np.where(s_sorted >= 0.0, s_sorted * (1.0 + tie), s_sorted * (1.0 - tie))
    ends = np.searchsorted(s_sorted, thr_sorted, side="right")
    # prefix lengths of the distinct regions, increasing (ends is sorted: its distinct values)
    cands = ends[np.concatenate(([True], ends[1:] != ends[:-1]))]
    kidx = space.margins()[order]
    hyp = space.hyp[order]
    nn = space.n1 + space.n2
    undecided = 0

    def below(length: int) -> bool:
        nonlocal undecided
        beta = np.minimum(np.bincount(kidx[:length], hyp[:length], minlength=nn + 1), 1.0)
        # stop at thr: a value attained at or above it decides "not below" (the supremum
        # found without the stop is at least that value); below it nothing changes
        p, up = certified_sup_stop(beta, 0.0, 1.0, 32, 1e-6, 200_000, thr)[:2]
        if up < thr:
            return True
        if p >= thr:
            return False
        p, up = certified_sup(beta, 0.0, 1.0, 64, 1e-12, 2_000_000)[:2]
        if up >= thr > p:
            undecided += 1
        return p < thr

    lo, hi = _bracket(kidx, hyp, cands, nn, thr, below)
    while hi - lo > 1:  # below(cands[lo]) true (lo = -1: none), below(cands[hi]) false
        mid = (lo + hi) // 2
        if below(int(cands[mid])):
            lo = mid
        else:
            hi = mid
    mask = np.zeros(space.m, dtype=bool)
    if lo >= 0:
        mask[order[: int(cands[lo])]] = True
    return mask, undecided


#: Rates at which :func:`_bracket` evaluates the prefixes (even in arcsine scale, as the
#: certified supremum's first grid).
_BRACKET_GRID = np.sin(np.linspace(0.0, np.pi / 2.0, 65)[1:-1]) ** 2


def _bracket(kidx, hyp, cands, nn, thr, below):
    """``(lo, hi)`` with ``below(cands[lo])`` true (or ``lo = -1``) and ``below(cands[hi])``
    false (or ``hi = len(cands)``), where the boundary lies, for the bisection.

    ``below`` is monotone in the prefix's length (a longer prefix adds tables, so its p-value
    supremum is larger). A prefix whose probability reaches ``thr (1 + 1e-9)`` at a rate of a
    grid is not below: its supremum is at least that value, which the sums' rounding (about
    1e-14 relative) and the certified search's tolerance (1e-12) cannot bring under ``thr``.
    That gives ``hi`` in one pass over the tables; the certified checks then step down from
    it, doubling the step (the grid misses the peak by little). The bisection between the two
    finds the same boundary as from ``(-1, len(cands))``, in one or two certified suprema
    instead of about log2 of the number of candidates.
    """
    hi = int(prefix_over_on_grid(kidx, hyp, cands, nn, _BRACKET_GRID, thr * (1.0 + 1e-9)))
    step, lo = 1, hi - 1
    while lo >= 0 and not below(int(cands[lo])):
        hi, lo = lo, lo - step
        step *= 2
    return max(lo, -1), hi


def rejection_region(test, n1, n2, alpha=0.05, alternative="two-sided", gamma=None):
    """Rejection region ``p < alpha`` of an unconditional test: bool ``(n1 + 1, n2 + 1)``.

    Returns ``(region, undecided)``; ``undecided`` counts the regions whose certified
    p-value interval still contained alpha at a relative tolerance of 1e-12 (0 in every
    case tested).
    """
    gamma = _u._check_test(test, alternative, gamma)
    n1, n2 = _u._check_ns(n1, n2)
    alpha = check_alpha(alpha)
    thr = alpha_threshold(alpha)
    if gamma is not None:
        p, up = _u.unconditional_pvalue_table(test, n1, n2, alternative, gamma)
        return p < thr, int(np.count_nonzero((p < thr) & (up >= thr)))
    space = _u._Space(n1, n2)
    sides = space.sides(test, alternative)
    if len(sides) == 2:
        thr = thr / 2.0  # 2 min(p_less, p_greater) < alpha
    mask = np.zeros(space.m, dtype=bool)
    undecided = 0
    for _side, score, tie in sides:
        m, u = _prefix_region(space, score, tie, thr)
        mask |= m
        undecided += u
    return mask.reshape(n1 + 1, n2 + 1), undecided


def _check_scalar_rates(p1, p2):
    p1 = check_probability(p1, "p1")
    p2 = check_probability(p2, "p2")
    if not np.isscalar(p1) or not np.isscalar(p2):
        raise ValueError(f"p1 and p2 must be single values, got p1={p1!r}, p2={p2!r}")
    return p1, p2


def power_of_region(region, p1: float, p2: float) -> float:
    """Probability of a rejection region ``(n1 + 1, n2 + 1)`` (from :func:`rejection_region`)
    at rates ``p1``, ``p2``: the exact power of the test whose region it is (its size when
    ``p1 == p2``). For a caller that needs the region anyway (the MDE), so it is built once."""
    n1, n2 = region.shape[0] - 1, region.shape[1] - 1
    b1 = binom_pmf_vector(n1, p1)
    b2 = binom_pmf_vector(n2, p2)
    return float(min(b1 @ region.astype(np.float64) @ b2, 1.0))


def _power_of(test, p1, n1, p2, n2, alpha, alternative, gamma) -> float:
    return power_of_region(_shared_region(test, n1, n2, alpha, alternative, gamma), p1, p2)


@functools.lru_cache(maxsize=2048)  # at most about 0.1 MB each (n = 300)
def _shared_region(test, n1, n2, alpha, alternative, gamma) -> np.ndarray:
    """:func:`rejection_region`, read only and memoised: the region depends on the sizes and
    alpha, not on the rates, so a power table over rate pairs, the size curve over the common
    rate and the sample-size search each build it once per n."""
    region, _ = rejection_region(test, n1, n2, alpha, alternative, gamma)
    region.setflags(write=False)
    return region


def exact_power(test, p1, n1, p2, n2, alpha=0.05, alternative="two-sided", gamma=None) -> float:
    """Exact power of ``test`` at rates ``p1``, ``p2`` with ``n1``, ``n2`` trials.

    Parameters
    ----------
    test : str
        One of :data:`evalsim.stats.two_sample.unconditional.TESTS`.
    p1, p2 : float
        True rates of arm 1 and arm 2, in [0, 1]. With ``p1 == p2`` the result is the
        test's exact size at that common rate.
    n1, n2 : int
        Trials per arm.
    alpha : float
        Level; the test rejects when ``p < alpha`` (:mod:`evalsim.stats.decision`).
    alternative, gamma
        As :func:`evalsim.stats.two_sample.unconditional.unconditional_pvalue` (Fisher: two-sided).

    Returns
    -------
    float

    Examples
    --------
    >>> round(exact_power("boschloo", 0.737, 20, 0.877, 20), 3)
    0.184
    """
    gamma = _u._check_test(test, alternative, gamma)
    p1, p2 = _check_scalar_rates(p1, p2)
    n1 = check_n(n1, "n1")
    n2 = check_n(n2, "n2")
    if not isinstance(n1, int) or not isinstance(n2, int):
        raise ValueError(f"n1 and n2 must be single integers, got n1={n1!r}, n2={n2!r}")
    _u._check_memory(n1, n2)
    alpha = check_alpha(alpha)
    return _power_of(test, p1, n1, p2, n2, alpha, alternative, gamma)


def pvalue_record(test, k1, n1, k2, n2, alternative="two-sided") -> tuple[float, dict]:
    """``(p, certificate)``: the certified p-value of arm 1 against arm 2 and its JSON record
    (:func:`evalsim.stats.two_sample.unconditional.unconditional_pvalue`)."""
    record = _u.unconditional_pvalue(test, k1, n1, k2, n2, alternative=alternative).as_dict()
    return record["pvalue"], record


def region(test, n1, n2, alpha=0.05) -> np.ndarray:
    """The two-sided rejection region of :func:`rejection_region`, read only and memoised (a
    caller's power and MDE read the same array)."""
    _u._check_test(test, "two-sided", None)
    n1, n2 = _u._check_ns(n1, n2)
    return _shared_region(test, n1, n2, check_alpha(alpha), "two-sided", None)


@dataclass(frozen=True)
class TestPowerN(PowerSearchN):
    """Trials per arm for a target exact power of one test (see
    :data:`evalsim.stats.two_sample.power.N_DEFINITION`).

    Attributes
    ----------
    test : str
        The test's id (keyword-only); the other fields are those of
        :class:`evalsim.stats.two_sample.power.PowerSearchN`.
    """

    __test__ = False  # not a pytest class

    test: str = field(kw_only=True)


def n_for_power(
    test,
    p1,
    p2,
    power=0.8,
    alpha=0.05,
    alternative="two-sided",
    gamma=None,
    window: int = 20,
    n_max: int = 5000,
) -> TestPowerN:
    """Equal n per arm for exact power ``>= power`` of ``test`` (saw-tooth rule of Fisher's).

    Search as :func:`evalsim.stats.two_sample.power.n_for_fisher_power`: bracket from the normal
    approximation, bisect to a crossing, scan down for the first n reaching the target until
    ``window`` consecutive misses, then up for ``window + 1`` consecutive successes.

    Raises
    ------
    ValueError
        For bad rates (``p1 == p2`` included), power outside (0, 1), a bad test, or when the
        target is not reached (and held) up to ``n_max``.
    """
    gamma = _u._check_test(test, alternative, gamma)
    p1, p2 = _check_scalar_rates(p1, p2)
    alpha, window, n_max = check_search(p1, p2, alpha, power, window, n_max)
    _u._check_memory(n_max, n_max)
    fields = search_n(
        lambda n: _power_of(test, p1, n, p2, n, alpha, alternative, gamma),
        p1,
        p2,
        alpha,
        float(power),
        window,
        n_max,
        power,
    )
    fields["definition"] = n_definition(TWO_SAMPLE_TESTS[test].short)
    return TestPowerN(test=test, **fields)

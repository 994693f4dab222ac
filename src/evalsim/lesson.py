"""The lessons' toolkit under the lessons' own names, as a thin layer over :mod:`evalsim.stats`.

Lesson 25 ("Evaluating robot policies", document 000) ends with "What you keep": a module
with ``wald``, ``wilson``, ``binom_pmf``, ``coverage``, ``trials_needed``, ``fisher_p`` and
``power`` that later lessons import. Document 002 ("What it takes to say a policy works")
has the reader fill in ``trial_math.py``: a Wilson interval, the sample-size formula and the
peeking loop. A student can import these names from here instead::

    from evalsim.lesson import wilson, fisher_p, power
    wilson(9, 10)            # (0.5958..., 0.9821...)
    fisher_p(14, 20, 18, 20) # 0.2351...

Every function keeps the document's signature and defaults (``z = 1.96``, not SciPy's
1.959964; ``alpha = 0.05``; equal n per policy in ``power``) and returns plain Python
numbers or tuples, as the lesson's code does. The work is done by the validated, numba-backed
functions of :mod:`evalsim.stats`; bad input raises ``ValueError`` quoting the value.

Signatures the documents do not show, and the choice made here:

==========================  ================================================================
lesson 25 (Build it)        ``wald(k, n, z=1.96)``, ``wilson(k, n, z=1.96)``,
                            ``binom_pmf(k, n, p)``, ``coverage(interval, n, p, z=1.96)``,
                            ``trials_needed(p, half_width, z=1.96)``,
                            ``fisher_p(k1, n1, k2, n2)``, ``power(p1, p2, n, alpha=0.05)``
                            -- all as printed.
002 ``trial_math.py``       not printed; chosen here: ``wilson_interval(k, n, z=1.96)``,
                            ``trials_per_policy(p1, p2, alpha=0.05, power=0.8)`` (document
                            001's normal-approximation formula, Fleiss without continuity
                            correction; 199 for 90% vs 80%) and
                            ``peeking_simulation(p=0.7, n=40, experiments=100_000,
                            alpha=0.05, seed=0)`` returning ``(test_once, every_trial)``.
==========================  ================================================================

Where the lesson's hand-written code and evalsim differ, evalsim follows SciPy:
``fisher_p`` counts tables "no more likely" with SciPy's relative tolerance 1e-14 where the
lesson writes 1e-7 (the two give the same p-value for every table with n1, n2 <= 130,
:mod:`evalsim.stats.two_sample.fisher`); ``wilson`` at k = 0 and k = n returns exactly 0 and 1.

References
----------
.. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
   J. Amer. Statist. Assoc. 22 (158), 209-212, 1927.
.. [2] L. D. Brown, T. T. Cai, A. DasGupta, "Interval Estimation for a Binomial Proportion",
   Statistical Science 16 (2), 101-133, 2001.
.. [3] J. L. Fleiss, B. Levin, M. C. Paik, "Statistical Methods for Rates and Proportions",
   3rd ed., 2003, section 4.2.
.. [4] P. Armitage, C. K. McPherson, B. C. Rowe, "Repeated significance tests on
   accumulating data", J. R. Statist. Soc. A 132 (2), 235-244, 1969.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from evalsim.stats._validate import check_n, check_probability
from evalsim.stats.proportion import binomial as _binomial
from evalsim.stats.proportion import budget as _budget
from evalsim.stats.proportion import coverage as _coverage
from evalsim.stats.proportion import intervals as _intervals
from evalsim.stats.sequential import peeking_simulation as _peeking_simulation
from evalsim.stats.two_sample import design as _design
from evalsim.stats.two_sample import fisher as _fisher
from evalsim.stats.two_sample import power as _power

__all__ = [
    "PeekingRates",
    "binom_pmf",
    "coverage",
    "fisher_p",
    "peeking_simulation",
    "power",
    "trials_needed",
    "trials_per_policy",
    "wald",
    "wilson",
    "wilson_interval",
]

#: The lesson's normal multiplier for a 95% interval (SciPy uses 1.959964...).
Z95 = 1.96


# ------------------------------------------------------------------ lesson 25, Build it


def wald(k, n, z=Z95) -> tuple[float, float]:
    """Textbook normal-approximation interval p +- z sqrt(p(1-p)/n), clipped to [0, 1].

    Lesson 25, Build it step 1. Collapses to a point at k = 0 and k = n: ``wald(10, 10)`` is
    ``(1.0, 1.0)``, "certainty after ten trials".

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n, n >= 1.
    z : float
        Normal multiplier; 1.96 for 95%.

    Returns
    -------
    (float, float)
        Lower and upper bound.
    """
    lo, hi = _intervals.wald_interval(k, n, z=z)
    return float(lo), float(hi)


def wilson(k, n, z=Z95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials (Wilson 1927) [1]_.

    Lesson 25, Build it step 1; the interval lessons 26-29 report. As in the lesson,
    ``n = 0`` (no trials) gives the uninformative ``(0.0, 1.0)``.

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n.
    z : float
        Normal multiplier; 1.96 for 95%.

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> [round(b, 3) for b in wilson(9, 10)]
    [0.596, 0.982]
    """
    if isinstance(n, int) and not isinstance(n, bool) and n == 0 and k == 0:
        return 0.0, 1.0
    lo, hi = _intervals.wilson_interval(k, n, z=z)
    return float(lo), float(hi)


def binom_pmf(k, n, p) -> float:
    """Probability of exactly k successes in n independent trials with rate p.

    Lesson 25, Build it step 2; :func:`evalsim.stats.proportion.binomial.binom_pmf` (log-space,
    exact at
    p = 0 and 1).
    """
    return float(_binomial.binom_pmf(k, n, p))


_METHOD_OF = {}  # filled below: the lesson's interval functions -> evalsim method names


def coverage(interval: Callable | str, n, p, z=Z95) -> float:
    """Exact probability that ``interval(k, n, z)`` contains p when k ~ Binomial(n, p).

    Lesson 25, Build it step 2: the sum of ``binom_pmf(k, n, p)`` over every k whose interval
    contains p [2]_.

    Parameters
    ----------
    interval : callable or str
        An interval function ``interval(k, n, z) -> (lower, upper)``, e.g. :func:`wilson` or
        :func:`wald` of this module (those two run in evalsim's numba kernel), a function of
        your own (called for every k, then summed by the same kernel), or a method name of
        :data:`evalsim.stats.proportion.intervals.METHODS`.
    n : int
        Trials, >= 1.
    p : float
        True success rate in [0, 1].
    z : float
        Normal multiplier passed to the interval.

    Returns
    -------
    float

    Examples
    --------
    >>> round(coverage(wald, 5, 221 / 300), 3)
    0.764
    """
    method = interval if isinstance(interval, str) else _METHOD_OF.get(interval)
    if method is not None:
        return float(_coverage.exact_coverage(method, n, p, z=z))
    if not callable(interval):
        raise ValueError(
            f"interval must be an interval function or one of {_intervals.METHODS}, "
            f"got {interval!r}"
        )
    n = check_n(n, "n")
    p = check_probability(p, "p")
    lower, upper = zip(*(interval(k, n, z) for k in range(n + 1)), strict=True)
    return float(_coverage.coverage_of_bounds(lower, upper, [p])[0])


def trials_needed(p, half_width, z=Z95) -> int:
    """Smallest n whose Wilson interval at observed rate p has half-width <= half_width.

    Lesson 25, Build it step 3 (table D): k = round(p n) with Python's round (halves to
    even). The half-width is not monotone in n, see
    :func:`evalsim.stats.proportion.budget.half_width_budget` for the n from which it holds for
    good.

    Examples
    --------
    >>> trials_needed(0.70, 0.05)
    320
    """
    p, half_width, z = float(p), float(half_width), float(z)
    if 0 < p < 1 and 0 < half_width and z > 0:
        approx = z * z * p * (1 - p) / (half_width * half_width)  # the Wald n, near the answer
        if approx > TRIALS_NEEDED_MAX_N:
            raise ValueError(
                f"half_width={half_width!r} at p={p!r} needs about {approx:.3g} trials, above "
                f"the bound {TRIALS_NEEDED_MAX_N} of this scan (the Wald n z^2 p (1-p) / h^2 "
                "is within a few trials of the answer there)"
            )
    return _budget.half_width_budget(p, half_width, z=z).first_n


#: trials_needed scans n upward; above this many trials (by the Wald estimate) it refuses
#: rather than scan for minutes (0.5 at +/-1e-4 is ~9.6e7 trials).
TRIALS_NEEDED_MAX_N = 10_000_000


def fisher_p(k1, n1, k2, n2) -> float:
    """Two-sided Fisher exact test for k1/n1 vs k2/n2.

    Lesson 25, Build it step 4: with the margins fixed, the total probability of all tables
    no more likely than the observed one; equal to ``scipy.stats.fisher_exact``.

    Examples
    --------
    >>> round(fisher_p(74, 100, 88, 100), 3)
    0.018
    """
    return float(_fisher.fisher_pvalue(k1, n1, k2, n2))


def power(p1, p2, n, alpha=0.05) -> float:
    """Exact probability that Fisher's test at level alpha separates two policies.

    Lesson 25, Build it step 5: rates p1 and p2, n trials each, reject when
    ``fisher_p < alpha``; :func:`evalsim.stats.two_sample.power.fisher_power`.

    Examples
    --------
    >>> round(power(0.737, 0.877, 20), 3)
    0.119
    """
    return float(_power.fisher_power(p1, n, p2, n, alpha))


_METHOD_OF.update({wald: "wald", wilson: "wilson"})


# ------------------------------------------------------------------ document 002, trial_math.py


def wilson_interval(k, n, z=Z95) -> tuple[float, float]:
    """``trial_math.py``'s Wilson interval: the same as :func:`wilson` (document 002).

    Examples
    --------
    >>> [round(b, 3) for b in wilson_interval(9, 10)]
    [0.596, 0.982]
    """
    return wilson(k, n, z)


def trials_per_policy(p1, p2, alpha=0.05, power=0.8) -> int:
    """``trial_math.py``'s sample-size formula: trials per policy to separate p1 from p2.

    The normal-approximation n per arm of a two-sided two-proportion test [3]_ (document
    001's ``n_per_arm``)::

        n = [z_(1-alpha/2) sqrt(2 pbar (1 - pbar)) + z_power sqrt(p1 q1 + p2 q2)]^2 / (p1 - p2)^2

    rounded up, with pbar = (p1 + p2) / 2. Document 002 says "around two hundred trials per
    policy" for 90% vs 80% at 80% power; this gives 199. The exact Fisher power at that n
    is lower (:func:`evalsim.stats.two_sample.power.n_for_fisher_power`).

    Examples
    --------
    >>> trials_per_policy(0.90, 0.80)
    199
    """
    return int(_design.n_per_arm_normal(p1, p2, alpha, power, "fleiss").n)


class PeekingRates(NamedTuple):
    """False-win rates of the peeking simulation (document 002)."""

    test_once: float
    every_trial: float


def peeking_simulation(p=0.7, n=40, experiments=100_000, alpha=0.05, seed=0) -> PeekingRates:
    """``trial_math.py``'s peeking loop: how often two equal policies produce a "winner".

    Two policies both truly at rate ``p`` get ``n`` trials each, one pair at a time; in each
    of ``experiments`` simulated experiments Fisher's test is run once at the end
    (``test_once``) and, on the same trials, after every pair, stopping at the first
    p < alpha (``every_trial``) [4]_. Document 002: 2.8% and 11.0% at p = 0.7, n = 40,
    100,000 experiments. Runs in numba
    (:func:`evalsim.stats.sequential.peeking_simulation.false_win_rate_mc`); the exact rates
    are :func:`evalsim.stats.sequential.peeking.false_win_rate_exact`.

    Parameters
    ----------
    p : float
        The common true success rate.
    n : int
        Trials per policy.
    experiments : int
        Simulated experiments.
    alpha : float
        Level of Fisher's two-sided test.
    seed : int
        Seed of the simulation (same seed, same rates).

    Returns
    -------
    PeekingRates
        ``(test_once, every_trial)``, a named tuple of two floats.
    """
    r = _peeking_simulation.false_win_rate_mc(
        n=n, p=p, alpha=alpha, looks="every", n_experiments=experiments, seed=seed
    )
    return PeekingRates(float(r.fixed_rate), float(r.false_win_rate))

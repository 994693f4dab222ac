"""Two policies over many tasks, paired: the exact stratified McNemar test.

When A and B ran from the same starting states within every task, each task's trials form
matched pairs, and only the discordant pairs carry information about the difference: in
task (stratum) ``s``, ``x_s`` pairs where only the first policy succeeded and ``y_s`` where
only the second did. :func:`stratified_mcnemar_test` is the exact conditional test of "the
two policies have the same success rate in every task" on those counts, pooled over the
tasks -- the paired counterpart of :func:`evalsim.stats.multi.exact_stratified_test`, which
treats the two arms of each task as independent samples.

References
----------
.. [1] McNemar, Q. (1947). Note on the sampling error of the difference between correlated
   proportions or percentages. Psychometrika 12, 153-157.
.. [2] Agresti, A. (2013). Categorical Data Analysis, 3rd ed., Wiley, sections 11.1 and
   11.3 (conditional inference for matched pairs; the Mantel-Haenszel estimate of the
   common odds ratio for matched pairs is ``sum y / sum x``).
.. [3] Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits
   illustrated in the case of the binomial. Biometrika 26, 404-413.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import check_confidence, check_n
from evalsim.stats.proportion.intervals import clopper_pearson_interval
from evalsim.stats.two_sample.paired import mcnemar_pvalue

__all__ = ["ALTERNATIVES", "StratifiedMcNemarResult", "stratified_mcnemar_test"]

#: The alternatives of :func:`stratified_mcnemar_test`, in the words of its docstring.
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class StratifiedMcNemarResult:
    """Result of :func:`stratified_mcnemar_test`.

    Attributes
    ----------
    statistic : int
        ``S = sum_s x_s``, the pairs (over all tasks) where only the first policy succeeded.
    n_discordant : int
        ``M = sum_s (x_s + y_s)``.
    pvalue : float
        Exact p-value under the stated ``alternative``.
    alternative : str
    odds_ratio : float
        ``sum y / sum x``: the Mantel-Haenszel (and conditional ML) common odds ratio of the
        second policy vs the first for matched pairs [2]_; ``nan`` with no discordant pair.
    odds_ratio_lower, odds_ratio_upper : float
        Its exact interval: the Clopper-Pearson interval [3]_ of ``sum y / M`` mapped by
        ``pi / (1 - pi)`` (two-sided, at ``confidence``).
    confidence : float
    n_strata, n_informative : int
        Tasks given, and tasks with at least one discordant pair.
    """

    statistic: int
    n_discordant: int
    pvalue: float
    alternative: str
    odds_ratio: float
    odds_ratio_lower: float
    odds_ratio_upper: float
    confidence: float
    n_strata: int
    n_informative: int


def stratified_mcnemar_test(
    x, y, alternative: str = "two-sided", confidence: float = 0.95
) -> StratifiedMcNemarResult:
    """Exact conditional test on the discordant pairs of several strata (tasks).

    Parameters
    ----------
    x, y : array_like of int
        Per stratum: discordant pairs where only the first policy succeeded (``x``) and
        where only the second did (``y``); non-negative, one entry per stratum.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: the first policy's rate is the higher (large ``S``); ``"less"``: the
        lower; ``"two-sided"``: they differ.
    confidence : float
        Level of the odds ratio's interval.

    Returns
    -------
    StratifiedMcNemarResult

    Raises
    ------
    ValueError
        Negative or non-integer counts, arrays of different lengths or not 1-d, an unknown
        alternative, a confidence outside (0, 1).

    Notes
    -----
    Conditioning on each stratum's number of discordant pairs ``m_s = x_s + y_s`` removes
    the strata's nuisance parameters (the concordant outcomes and each task's difficulty):
    under the null of equal success rates in every stratum, each discordant pair is
    "first only" with probability 1/2, independently, so ``x_s ~ Binomial(m_s, 1/2)`` [1]_
    [2]_. The statistic is ``S = sum_s x_s``; its exact null law is the convolution of the
    strata's ``Binomial(m_s, 1/2)`` laws, which is ``Binomial(M, 1/2)`` with
    ``M = sum_s m_s`` (binomials with one success probability add up), so the p-values are
    exact binomial tail sums on ``(S, M)``, computed by
    :func:`evalsim.stats.two_sample.paired.mcnemar_pvalue`: two-sided, the probability of every
    value
    no more likely than ``S`` (SciPy's ``binomtest``; by symmetry twice the smaller tail,
    capped at 1); one-sided, ``P(X >= S)`` or ``P(X <= S)``. With one stratum it is the exact
    McNemar test. With no discordant pair every p-value is 1.

    The test conditions on the tasks as they are (tasks fixed) and gives each discordant
    pair the same weight: a task with more discordant pairs counts for more.
    """
    x = np.atleast_1d(np.asarray(check_n(np.atleast_1d(x), "x", minimum=0), dtype=np.int64))
    y = np.atleast_1d(np.asarray(check_n(np.atleast_1d(y), "y", minimum=0), dtype=np.int64))
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"x and y must be 1-d and of one length (one entry per stratum), got shapes "
            f"{x.shape} and {y.shape}"
        )
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {list(ALTERNATIVES)}, got {alternative!r}")
    confidence = check_confidence(confidence)
    s, m = int(x.sum()), int((x + y).sum())
    p = float(mcnemar_pvalue(s, m - s, alternative))
    if m == 0:
        ratio = lower = upper = math.nan
    else:
        ratio = math.inf if s == 0 else (m - s) / s
        cp = clopper_pearson_interval(m - s, m, confidence=confidence)
        lo_pi, hi_pi = float(cp.lower), float(cp.upper)
        lower = lo_pi / (1.0 - lo_pi) if lo_pi < 1.0 else math.inf
        upper = hi_pi / (1.0 - hi_pi) if hi_pi < 1.0 else math.inf
    return StratifiedMcNemarResult(
        statistic=s,
        n_discordant=m,
        pvalue=p,
        alternative=alternative,
        odds_ratio=ratio,
        odds_ratio_lower=lower,
        odds_ratio_upper=upper,
        confidence=confidence,
        n_strata=int(x.size),
        n_informative=int(((x + y) > 0).sum()),
    )

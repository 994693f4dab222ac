"""The exact binomial test of one success rate against a stated rate (issue 45, item 25).

"Is my reproduction within the paper's noise?": ``k`` successes of ``n`` trials against the
rate ``rate`` a paper reports. The one-sided p-values are the binomial tails,
P(X >= k) and P(X <= k) under ``rate``; the two-sided p-value is the sum of the
probabilities of every count no more likely than ``k`` (the "minimum likelihood" rule of
Clopper-Pearson's exact test, with the relative tolerance 1e-7 of R's ``binom.test`` and
SciPy's ``binomtest`` so that a count as likely as ``k`` up to rounding counts as equal).
The tails come from :mod:`evalsim.stats.proportion.binomial` (Loader's pmf, sums that keep
their relative accuracy far into the tails).

References
----------
.. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26 (1934).
.. [2] R Core Team, ``binom.test`` (stats package): two-sided p-value rule with
   ``relErr <- 1 + 1e-7``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import check_counts, check_probability
from evalsim.stats.proportion.binomial import binom_cdf, binom_logpmf, binom_sf

__all__ = ["TWO_SIDED_RULE", "RateTest", "rate_test"]

#: Relative tolerance of "no more likely than the observed count" (R, SciPy).
RELATIVE_TOLERANCE = 1e-7

#: The two-sided rule, in words (printed and carried by the JSON).
TWO_SIDED_RULE = (
    "sum of P(X = j) over every count j with P(X = j) <= P(X = k) (1 + 1e-7) "
    "(R's binom.test, SciPy's binomtest)"
)


@dataclass(frozen=True)
class RateTest:
    """The exact binomial test of ``k`` of ``n`` against ``rate``.

    Attributes
    ----------
    k, n : int
        Successes and trials.
    rate : float
        The stated rate tested.
    pvalue_two_sided : float
        By :data:`TWO_SIDED_RULE`.
    pvalue_greater : float
        P(X >= k): small when the true rate is above ``rate``.
    pvalue_less : float
        P(X <= k): small when the true rate is below ``rate``.
    """

    k: int
    n: int
    rate: float
    pvalue_two_sided: float
    pvalue_greater: float
    pvalue_less: float

    def pvalue(self, alternative: str = "two-sided") -> float:
        """The p-value of ``alternative`` (two-sided, greater or less)."""
        return {
            "two-sided": self.pvalue_two_sided,
            "greater": self.pvalue_greater,
            "less": self.pvalue_less,
        }[alternative]

    def to_dict(self) -> dict:
        """Plain values (the command's JSON)."""
        return {
            "rate": self.rate,
            "pvalue": {
                "two-sided": self.pvalue_two_sided,
                "greater": self.pvalue_greater,
                "less": self.pvalue_less,
            },
            "two_sided_rule": TWO_SIDED_RULE,
        }


def rate_test(k: int, n: int, rate: float) -> RateTest:
    """Exact binomial test of ``k`` successes in ``n`` trials against the rate ``rate``.

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n, n >= 1.
    rate : float
        The stated success rate, in [0, 1].

    Returns
    -------
    RateTest
        The two-sided p-value (:data:`TWO_SIDED_RULE`) and both one-sided ones; they equal
        ``scipy.stats.binomtest(k, n, rate, alternative=...).pvalue``.
    """
    k, n = check_counts(k, n)
    rate = check_probability(rate, "rate")
    less = min(1.0, float(binom_cdf(k, n, rate)))
    greater = min(1.0, float(binom_sf(k - 1, n, rate))) if k > 0 else 1.0
    if k == rate * n:
        two = 1.0
    else:
        j = np.arange(n + 1)
        logpmf = np.asarray(binom_logpmf(j, n, rate), dtype=np.float64)
        limit = logpmf[k] + np.log1p(RELATIVE_TOLERANCE)
        if k < rate * n:  # k's own tail, plus the far tail's counts no more likely than k
            far = j[(j > rate * n) & (logpmf <= limit)]
            two = less + (float(binom_sf(far[0] - 1, n, rate)) if far.size else 0.0)
        else:
            near = j[(j < rate * n) & (logpmf <= limit)]
            two = greater + (float(binom_cdf(near[-1], n, rate)) if near.size else 0.0)
        two = min(1.0, two)
    return RateTest(k, n, rate, two, greater, less)

"""Fisher's exact test behind the two-sample registry's four calls.

:class:`evalsim.stats.names.TwoSampleTest` calls ``pvalue_record``, ``exact_power``,
``region`` and ``n_for_power`` of its ``module`` with the test's id first; this module answers
them for the conditional test of :data:`evalsim.stats.names.TWO_SAMPLE_TESTS` (Fisher's, the
documents' test) from :mod:`evalsim.stats.two_sample.fisher` and
:mod:`evalsim.stats.two_sample.power`. The exact unconditional tests answer them in
:mod:`evalsim.stats.two_sample.unconditional_power`.

References
----------
.. [1] R. A. Fisher, "The Design of Experiments", 1935.
"""

from __future__ import annotations

from evalsim.stats.two_sample.fisher import fisher_pvalue, fisher_pvalue_one_sided
from evalsim.stats.two_sample.power import FisherPowerN, fisher_power, n_for_fisher_power

__all__ = ["exact_power", "n_for_power", "pvalue_record", "region"]


def pvalue_record(test: str, k1, n1, k2, n2, alternative: str = "two-sided"):
    """``(p, None)``: Fisher's exact p-value of arm 1 against arm 2 (two-sided, or one-sided
    ``"less"`` / ``"greater"``); a finite sum, so no certificate."""
    if alternative == "two-sided":
        return float(fisher_pvalue(k1, n1, k2, n2)), None
    return float(fisher_pvalue_one_sided(k1, n1, k2, n2, alternative)), None


def exact_power(test: str, p1, n1, p2, n2, alpha=0.05) -> float:
    """Exact two-sided power: :func:`evalsim.stats.two_sample.power.fisher_power`."""
    return fisher_power(p1, n1, p2, n2, alpha)


def region(test: str, n1, n2, alpha=0.05) -> None:
    """None: Fisher's power kernel visits only the margins that matter, faster than a region,
    and :func:`evalsim.stats.two_sample.design.mde_exact` builds Fisher's region itself."""
    return None


def n_for_power(test: str, p1, p2, power=0.8, alpha=0.05, window: int = 20) -> FisherPowerN:
    """Equal n per arm: :func:`evalsim.stats.two_sample.power.n_for_fisher_power`."""
    return n_for_fisher_power(p1, p2, power=power, alpha=alpha, window=window)

"""Checks that a log's trials are independent and identically distributed (:mod:`.checks`:
runs, trend and halves tests, their exact null laws and power); kernels in ``_kernels``.

The package re-exports :mod:`.checks`, what ``evalsim.stats.independence`` held before it
became a package.
"""

from evalsim.stats.independence.checks import (
    CHECKS,
    EXACT_TREND_MAX_N,
    HalvesResult,
    IndependenceChecks,
    RunsResult,
    TrendResult,
    as_success_sequence,
    exact_rejection_probabilities,
    halves_test,
    independence_checks,
    poisson_binomial_pmf,
    rejection_rates_mc,
    rejection_tables,
    runs_null_pmf,
    runs_test,
    trend_null_pmf,
    trend_test,
)

__all__ = [
    "CHECKS",
    "EXACT_TREND_MAX_N",
    "HalvesResult",
    "IndependenceChecks",
    "RunsResult",
    "TrendResult",
    "as_success_sequence",
    "exact_rejection_probabilities",
    "halves_test",
    "independence_checks",
    "poisson_binomial_pmf",
    "rejection_rates_mc",
    "rejection_tables",
    "runs_null_pmf",
    "runs_test",
    "trend_null_pmf",
    "trend_test",
]

"""Names the ``evalsim`` command offers as choices, importable without SciPy or numba.

The statistics modules that own these registries re-export them
(:data:`evalsim.stats.two_sample.unconditional_power.TWO_SAMPLE_TESTS` and ``POWER_TESTS``,
:data:`evalsim.stats.simreal.METHODS`), so the command line can declare its options without
loading the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalsim._registry import by_id

__all__ = [
    "POWER_TESTS",
    "SIMREAL_DEFAULT_REAL_SHARE",
    "SIMREAL_FULL_JOINT_RATIO",
    "SIMREAL_METHOD_LABELS",
    "SIMREAL_METHODS",
    "TWO_SAMPLE_TESTS",
    "TwoSampleTest",
]


@dataclass(frozen=True)
class TwoSampleTest:
    """One unpaired test of two binomial proportions: what the code, the command, the figures
    and the tests read.

    Attributes
    ----------
    id : str
        The name used in the API (``test=``), the config and the command's ``--test``.
    label : str
        Its name in the command's tables, verdict and JSON ``test`` (e.g. "Fisher's exact").
    short : str
        Its short name in figure legends, table titles and ``plan`` (e.g. "Fisher").
    scipy : str
        The SciPy function that computes the same p-value, the tests' cross-check (e.g.
        ``scipy.stats.fisher_exact``), on the table ``[[k1, k2], [n1 - k1, n2 - k2]]`` with
        the same ``alternative``.
    certified : bool
        The p-value is a supremum over the common rate (an exact unconditional test,
        :mod:`evalsim.stats.two_sample.unconditional`) and comes with a certified upper bound;
        False for
        a conditional test, whose p-value is a finite sum.
    color : str
        Its color in figures (an Okabe-Ito color, distinct across tests).
    reference : str
        Where the test is defined.
    """

    id: str
    label: str
    short: str
    scipy: str
    certified: bool
    color: str
    reference: str


#: Unpaired two-sample tests with exact p-values, power and sample size, in the order of the
#: command's choices and of T38's columns and F12's curves; the first is the default. Adding a
#: test: one entry here and its p-value and power in
#: :mod:`evalsim.stats.two_sample.unconditional_power`
#: (the command, T38, F12 and the tests' SciPy cross-check read the registry).
TWO_SAMPLE_TESTS: dict[str, TwoSampleTest] = by_id(
    TwoSampleTest(
        "fisher",
        "Fisher's exact",
        "Fisher",
        scipy="scipy.stats.fisher_exact",
        certified=False,
        color="#0072B2",  # Okabe-Ito blue
        reference="Fisher (1935)",
    ),
    TwoSampleTest(
        "boschloo",
        "Boschloo's exact",
        "Boschloo",
        scipy="scipy.stats.boschloo_exact",
        certified=True,
        color="#E69F00",  # orange
        reference="Boschloo (1970)",
    ),
    TwoSampleTest(
        "barnard",
        "Barnard's exact",
        "Barnard",
        scipy="scipy.stats.barnard_exact",
        certified=True,
        color="#009E73",  # bluish green
        reference="Barnard (1947), pooled score statistic",
    ),
)

#: Unpaired two-sample tests with exact power and sample size: the registry's ids.
POWER_TESTS = tuple(TWO_SAMPLE_TESTS)

#: Sim + real interval methods (:mod:`evalsim.stats.simreal.methods`).
SIMREAL_METHODS = (
    "clopper_pearson",
    "wilson",
    "ppi",
    "ppi_plus",
    "stratified_exact",
    "discordant_exact",
    "joint_exact",
    "full_joint_exact",
)

#: Each sim + real method's name in figure legends and tables (same order as the ids).
SIMREAL_METHOD_LABELS = {
    "clopper_pearson": "Clopper-Pearson (real only)",
    "wilson": "Wilson (real only)",
    "ppi": "PPI",
    "ppi_plus": "PPI++",
    "stratified_exact": "stratified exact",
    "discordant_exact": "discordant exact",
    "joint_exact": "joint exact",
    "full_joint_exact": "full joint exact",
}
#: ``simreal.recommended(n, N)`` picks ``full_joint_exact`` while N <= this times n, and
#: ``joint_exact`` above (simreal; the command's help reads it too).
SIMREAL_FULL_JOINT_RATIO = 20

#: Default share of alpha spent on the real-only Clopper-Pearson interval (simreal).
SIMREAL_DEFAULT_REAL_SHARE = 0.8

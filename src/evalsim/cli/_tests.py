"""``--test`` of ``evalsim compare`` and ``evalsim plan``: the unpaired two-sample tests.

The choices, labels, properties and computations come from the registry
:data:`evalsim.stats.names.TWO_SAMPLE_TESTS` (importable without SciPy or numba; each entry
imports its module on first use). Fisher's exact test stays the default (the documents'
test). The exact unconditional tests (the entries with ``certified``) come from
:mod:`evalsim.stats.two_sample.unconditional` at any n (no cap), each p-value with its
certified upper bound, which the JSON carries.
"""

from __future__ import annotations

# evalsim.stats modules are imported inside the functions that use them (and the registry
# imports each test's module on first use): they load numba kernels and SciPy, which a
# command on a small log should not pay for at start (issue 24).
from evalsim.answers.plan import DEFAULT_TEST  # the test ``--test`` takes when not given
from evalsim.stats.names import POWER_TESTS


def _spoken(words: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def add_test_option(p) -> None:
    """Add ``--test`` (default :data:`DEFAULT_TEST`) to a subcommand parser."""
    others = [t for t in POWER_TESTS if t != DEFAULT_TEST]
    p.add_argument(
        "--test",
        choices=POWER_TESTS,
        default=DEFAULT_TEST,
        help=f"unpaired test: {DEFAULT_TEST} (default, the documents' test), {_spoken(others)}",
    )


def boschloo_secondary(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float | None, str]:
    """Two-sided Boschloo p-value for the secondary row of ``compare``, or None and why.

    The row is for reference, so it never stops the command: where the (n_a+1)(n_b+1) tables
    would not fit the library's memory budget (a few thousand trials per arm), the row says
    so and the deciding test stands (``--test boschloo`` itself refuses such n in one line).
    """
    tables = (n_a + 1) * (n_b + 1)
    from evalsim.stats.two_sample.unconditional import (
        BYTES_PER_TABLE,
        MEMORY_BUDGET_BYTES,
        unconditional_pvalue,
    )

    budget = MEMORY_BUDGET_BYTES
    if tables * BYTES_PER_TABLE > budget:
        return None, f"not computed: {tables:.3g} tables exceed the memory budget"
    r = unconditional_pvalue("boschloo", k_a, n_a, k_b, n_b)
    return r.pvalue, f"certified <= {r.upper:.6g}"

"""Time evalsim's exact unconditional tests against SciPy, in one run (issue 28).

Keys of ``--json``:

- ``{test}_pvalue_n200_speedup_vs_scipy`` for each certified test of the registry
  (``boschloo``, ``barnard``): its SciPy cross-check (``scipy.stats.boschloo_exact`` /
  ``barnard_exact``, default ``n=32``) on the table 147/200 vs 175/200 (the lesson's rates),
  divided by ``unconditional_pvalue`` on it (best of ``--repeat`` after JIT warm-up). Target
  >= 100. Also the seconds of each.
- ``boschloo_all_tables_n200_seconds``: ``unconditional_pvalue_table("boschloo", 200, 200)``.
  Target <= 10.
- ``boschloo_power_n200_seconds``: ``exact_power("boschloo", 0.737, 200, 0.877, 200)``.
  Target <= 10.
- ``boschloo_n_for_power_seconds`` and ``boschloo_n_for_power``: ``n_for_power("boschloo",
  0.737, 0.877)`` at 80%. Target <= 30.
- ``peak_rss_mb_n500``: peak resident memory (ru_maxrss) after a p-value, the power and the
  rejection region at 500 per arm. Target <= 2048.

Usage: python benchmarks/bench_unconditional.py [--json] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import scipy.stats
from _common import best_of, print_result

from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.stats.two_sample.unconditional import (
    TESTS,
    unconditional_pvalue,
    unconditional_pvalue_table,
)
from evalsim.stats.two_sample.unconditional_power import exact_power, n_for_power


def _scipy_function(test: str):
    """The registry's SciPy cross-check of ``test`` (``scipy.stats.<name>``)."""
    name = TWO_SAMPLE_TESTS[test].scipy
    return getattr(scipy.stats, name.removeprefix("scipy.stats."))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    k1, n1, k2, n2 = 147, 200, 175, 200
    table = [[k1, k2], [n1 - k1, n2 - k2]]
    for test in TESTS:  # JIT warm-up
        unconditional_pvalue(test, 3, 5, 4, 6)
    unconditional_pvalue_table("boschloo", 5, 6)
    exact_power("boschloo", 0.3, 5, 0.6, 6)
    res: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in TESTS:
            fn = _scipy_function(test)
            s = best_of(lambda fn=fn: fn(table), args.repeat)
            e = best_of(lambda test=test: unconditional_pvalue(test, k1, n1, k2, n2), args.repeat)
            res[f"{test}_pvalue_n200_scipy_seconds"] = s
            res[f"{test}_pvalue_n200_seconds"] = e
            res[f"{test}_pvalue_n200_speedup_vs_scipy"] = s / e
    t = time.perf_counter()
    unconditional_pvalue_table("boschloo", 200, 200)
    res["boschloo_all_tables_n200_seconds"] = time.perf_counter() - t
    res["boschloo_power_n200_seconds"] = best_of(
        lambda: exact_power("boschloo", 0.737, 200, 0.877, 200), 1
    )
    t = time.perf_counter()
    r = n_for_power("boschloo", 0.737, 0.877, 0.8)
    res["boschloo_n_for_power_seconds"] = time.perf_counter() - t
    res["boschloo_n_for_power"] = r.n
    unconditional_pvalue("boschloo", 368, 500, 438, 500)
    exact_power("boschloo", 0.737, 500, 0.877, 500)
    res["peak_rss_mb_n500"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print_result(res, args.json)


if __name__ == "__main__":
    main()

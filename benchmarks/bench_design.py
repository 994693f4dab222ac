"""Speed of the peeking computations (issue 5, item 7).

- ``peeking_exact_seconds_n40``: exact false-win rate, p = 0.7, 40 trials per arm, a look
  after every trial pair (DP over (k_A, k_B)), median of repeated calls after a warm-up
  (numba compiled, Fisher regions cached). Target <= 0.05 s.
- ``peeking_exact_seconds_n40_cold_regions``: the same with the Fisher region cache
  cleared before each call (40 p-value tables built each time).
- ``peeking_mc_seconds_100k``: Monte Carlo of 100,000 experiments (numba), best of a few
  runs after a warm-up. Target <= 2 s.
- ``peeking_mc_speedup_vs_python``: a plain-Python loop in the style of document 002's
  ``trial_math.py`` peeking loop (``random.random`` per trial, ``scipy.stats.fisher_exact``
  at every look, stop at the first p < alpha), timed in the same run on fewer experiments
  and scaled to 100,000, divided by the numba time.

Run: ``python benchmarks/bench_design.py [--json] [--python-experiments N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.getcwd(), ".cache", "numba"))

from _common import timings  # noqa: E402
from scipy.stats import fisher_exact  # noqa: E402

from evalsim.stats.sequential import peeking, peeking_simulation  # noqa: E402

P, N, ALPHA, EXPERIMENTS = 0.7, 40, 0.05, 100_000


def python_peeking(p: float, n: int, alpha: float, experiments: int, seed: int) -> int:
    """Document 002's peeking loop in plain Python: count experiments that ever reject."""
    rnd = random.Random(seed)
    wins = 0
    for _ in range(experiments):
        k_a = k_b = 0
        for t in range(1, n + 1):
            k_a += rnd.random() < p
            k_b += rnd.random() < p
            if fisher_exact([[k_a, t - k_a], [k_b, t - k_b]]).pvalue < alpha:
                wins += 1
                break
    return wins


def run(python_experiments: int) -> dict:
    # Warm-up: compile (or load from cache) the kernels and fill the region cache.
    peeking.false_win_rate_exact(N, P, ALPHA, looks="every")
    peeking_simulation.false_win_rate_mc(N, P, ALPHA, looks="every", n_experiments=1000, seed=0)

    exact = statistics.median(
        timings(lambda: peeking.false_win_rate_exact(N, P, ALPHA, looks="every"), 50)
    )

    def cold():
        peeking._fisher_region_cached.cache_clear()
        peeking.false_win_rate_exact(N, P, ALPHA, looks="every")

    exact_cold = statistics.median(timings(cold, 10))
    mc_result = {}

    def mc():
        mc_result["r"] = peeking_simulation.false_win_rate_mc(
            N, P, ALPHA, looks="every", n_experiments=EXPERIMENTS, seed=1
        )

    mc_seconds = min(timings(mc, 3))
    t0 = time.perf_counter()
    py_wins = python_peeking(P, N, ALPHA, python_experiments, seed=1)
    py_seconds = time.perf_counter() - t0
    py_scaled = py_seconds * EXPERIMENTS / python_experiments
    return {
        "peeking_exact_seconds_n40": exact,
        "peeking_exact_seconds_n40_cold_regions": exact_cold,
        "peeking_mc_seconds_100k": mc_seconds,
        "peeking_python_seconds_100k_scaled": py_scaled,
        "peeking_python_experiments_timed": python_experiments,
        "peeking_mc_speedup_vs_python": py_scaled / mc_seconds,
        "peeking_mc_false_win_rate": mc_result["r"].false_win_rate,
        "peeking_python_false_win_rate": py_wins / python_experiments,
        "peeking_exact_false_win_rate": peeking.false_win_rate_exact(
            N, P, ALPHA, looks="every"
        ).false_win_rate,
        "targets": {"peeking_exact_seconds_n40": 0.05, "peeking_mc_seconds_100k": 2.0},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument(
        "--python-experiments",
        type=int,
        default=300,
        help="experiments for the plain-Python baseline (scaled to 100,000)",
    )
    args = ap.parse_args(argv)
    res = run(args.python_experiments)
    if args.json:
        print(json.dumps(res, sort_keys=True))
        return 0
    rows = [
        ("exact DP, n = 40, every trial (warm)", res["peeking_exact_seconds_n40"], "<= 0.05 s"),
        ("exact DP, cold Fisher regions", res["peeking_exact_seconds_n40_cold_regions"], ""),
        ("Monte Carlo, 100,000 experiments", res["peeking_mc_seconds_100k"], "<= 2 s"),
        (
            f"plain Python + scipy, scaled from {args.python_experiments}",
            res["peeking_python_seconds_100k_scaled"],
            "",
        ),
    ]
    print(f"{'what':<48} {'seconds':>12}  target")
    for name, sec, target in rows:
        print(f"{name:<48} {sec:12.5f}  {target}")
    print(
        f"{'Monte Carlo speed-up vs plain Python':<48} {res['peeking_mc_speedup_vs_python']:12.0f}x"
    )
    print(
        f"false-win rate: exact {res['peeking_exact_false_win_rate']:.5f}, "
        f"MC {res['peeking_mc_false_win_rate']:.5f}, "
        f"Python ({args.python_experiments}) {res['peeking_python_false_win_rate']:.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

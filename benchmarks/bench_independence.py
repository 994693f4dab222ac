"""Speed of the independence checks and of the drift study's exact laws (issue 18).

Each figure is a ratio against a baseline timed in the same run:

- ``trend_speedup_vs_scipy_n{N}``: :func:`evalsim.stats.independence.trend_test` (exact law by
  Harding's generating function) against ``scipy.stats.mannwhitneyu(method="exact")`` on the
  same sequences (success positions vs failure positions), median per call;
- ``checks_seconds_n{N}``: all three checks of one sequence (what ``--order`` runs per
  policy);
- ``exact_power_seconds_n100``: the exact rejection probabilities of the three checks under
  a drifting rate (DP over (K, R) and (K, S)), and ``mc_speedup_vs_python``: the numba Monte
  Carlo of the warning rule against a plain-Python loop of SciPy's exact trend (Mann-Whitney)
  and halves (Fisher) tests per sequence (SciPy has no exact runs test) on fewer
  sequences, scaled.

Run: ``python benchmarks/bench_independence.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.getcwd(), ".cache", "numba"))

import numpy as np  # noqa: E402
from _common import median_time  # noqa: E402
from scipy import stats  # noqa: E402

from evalsim.stats.independence import checks as ind  # noqa: E402


def _python_warning_rate(p: np.ndarray, sims: int, rng) -> float:
    """The warning rule in plain Python with SciPy's tests (exact Mann-Whitney, Fisher)."""
    n, h = p.size, p.size // 2
    pos = np.arange(1, n + 1)
    hits = 0
    for _ in range(sims):
        x = rng.random(n) < p
        k = int(x.sum())
        pv = [1.0, 1.0]
        if 0 < k < n:
            pv[0] = stats.mannwhitneyu(pos[x], pos[~x], method="exact").pvalue
        k1 = int(x[:h].sum())
        pv[1] = stats.fisher_exact([[k1, h - k1], [k - k1, n - h - k + k1]]).pvalue
        hits += min(pv) < 0.05 / 3
    return hits / sims


def run(python_sims: int) -> dict:
    rng = np.random.default_rng(1)
    res: dict = {}
    ind.independence_checks(rng.random(30) < 0.5)  # compile / load kernels
    for n in (50, 200):
        seqs = [rng.random(n) < np.linspace(0.8, 0.6, n) for _ in range(5)]
        pos = np.arange(1, n + 1)
        ours = median_time(lambda s=seqs: [ind.trend_test(x) for x in s], 5) / len(seqs)
        theirs = median_time(
            lambda s=seqs, q=pos: [stats.mannwhitneyu(q[x], q[~x], method="exact") for x in s],
            3,
        ) / len(seqs)
        res[f"trend_seconds_n{n}"] = ours
        res[f"scipy_mannwhitneyu_exact_seconds_n{n}"] = theirs
        res[f"trend_speedup_vs_scipy_n{n}"] = theirs / ours
        res[f"checks_seconds_n{n}"] = median_time(
            lambda s=seqs: [ind.independence_checks(x) for x in s], 5
        ) / len(seqs)
    p = np.linspace(0.85, 0.45, 100)
    ind.exact_rejection_probabilities(p[:20])
    res["exact_power_seconds_n100"] = median_time(lambda: ind.exact_rejection_probabilities(p), 3)
    sims = 20_000
    mc_rng = np.random.default_rng(2)
    ind.rejection_rates_mc(p, 0.05, 100, mc_rng, bonferroni=True)
    t0 = time.perf_counter()
    mc = ind.rejection_rates_mc(p, 0.05, sims, mc_rng, bonferroni=True)
    mc_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    _python_warning_rate(p, python_sims, np.random.default_rng(3))
    py_scaled = (time.perf_counter() - t0) * sims / python_sims
    res.update(
        {
            "mc_seconds_20k_n100": mc_seconds,
            "python_seconds_20k_n100_scaled": py_scaled,
            "python_sims_timed": python_sims,
            "mc_speedup_vs_python": py_scaled / mc_seconds,
            "mc_warning_rate_n100": mc["any"],
        }
    )
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--python-sims", type=int, default=200, help="plain-Python sequences timed")
    args = ap.parse_args(argv)
    res = run(args.python_sims)
    if args.json:
        print(json.dumps(res, sort_keys=True))
        return 0
    for key in sorted(res):
        print(f"{key:<42} {res[key]:.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

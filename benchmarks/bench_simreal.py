"""Exact operating characteristics of the sim + real intervals on issue 27's grid.

Keys of ``--json``:

- ``grid_seconds``: wall seconds to enumerate the whole grid (every feasible law of
  p_R x correlation x sim bias x n x N below, every method of ``simreal.METHODS`` each),
  after a warm-up call that loads the numba cache; ``grid_cpu_seconds`` the same in process
  CPU time; ``grid_points`` the number of feasible laws.
- ``finite_sample_method``: the recommended finite-sample method, chosen per design by
  ``simreal.recommended(n, N)``; ``min_coverage_finite_sample`` and ``targets`` report it
  point by point, ``interval_ms`` at the design it is timed at;
  ``interval_ms_by_method``, ``min_coverage_by_method`` and ``targets_by_method`` report
  every finite-sample sim + real method (the ``*_exact`` methods of ``simreal.METHODS``).
- ``interval_ms``: one interval at n = 50, N = 10,000 (best of ``--repeat``), milliseconds;
  the joint methods' bound tables are built anew in each timed call (their caches are cleared).
- ``min_coverage_finite_sample``: the smallest exact coverage over the grid (target
  >= 1 - alpha - 1e-9), with ``min_coverage_clopper_pearson`` beside it.
- ``max_coverage_shortfall_asymptotic``: per asymptotic method, max over the grid of
  (1 - alpha) - coverage.
- ``width_ratio_vs_cp``: ``{method: {correlation: {n: mean over the grid's other axes of
  E[width] / E[CP width]}}}``; ``max_width_ratio_vs_cp`` the maximum over those axes.
- ``targets``: each of the issue's targets and whether the grid meets it;
  ``gain_corr0.9_max_ratio_by_n_n_sim`` the largest ratio at correlation 0.9 per n and N;
  ``gain_failures`` every grid point of the gain target (correlation 0.9, n >= 50) above
  0.85, with its ratio.

``--bounds`` prints instead the lower bounds of :mod:`evalsim.stats.simreal._bounds` at the
gain target's laws (correlation 0.9, p_S = p_R: the only sim bias of the grid the
correlation allows), p_S known:

- ``deterministic_family``: per p_R in {0.9, 0.95} and n in {50, 100}, the smallest over
  real shares 0.05, 0.10, ..., 0.95 of the bound on E[width] / E[CP width] for
  ``discordant_exact``'s family with deterministic discordant bounds, the share, and the
  bound at the default share;
- ``randomized_family``: at p_R = 0.95, n = 50, the same for the family with randomized
  discordant bounds (which contains ``discordant_exact``), shares 0.1, ..., 0.9;
- ``pratt_all_exact_intervals``: at p_R = 0.95, n = 50, the bound for every exact
  interval.

Usage: python benchmarks/bench_simreal.py [--json] [--repeat 20] [--quick] [--bounds]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
from _common import print_result

from evalsim.stats.simreal import _bounds as sb
from evalsim.stats.simreal import full_joint as sfj
from evalsim.stats.simreal import joint as sj
from evalsim.stats.simreal import methods as sr

P_REAL = (0.5, 0.7, 0.8, 0.9, 0.95)
CORRELATION = (0.0, 0.3, 0.6, 0.9)
BIAS = (-0.2, -0.1, 0.0, 0.1)
N_REAL = (10, 20, 50, 100)
N_SIM = (500, 2000, 10000)
CONFIDENCE = 0.95


def _grid(quick: bool):
    n_sim = (500,) if quick else N_SIM
    n_real = (10, 20) if quick else N_REAL
    for pr, rho, bias, n, big_n in itertools.product(P_REAL, CORRELATION, BIAS, n_real, n_sim):
        ps = round(pr + bias, 10)
        if not 0.0 < ps < 1.0:
            continue
        try:
            sr.joint_law(pr, ps, rho)
        except ValueError:
            continue  # the marginals do not allow this correlation
        yield pr, ps, rho, n, big_n


def _targets(rows, pick, alpha: float) -> dict:
    """The issue's targets over the enumerated grid for the finite-sample method
    ``pick(row)`` (one method, or the one :func:`simreal.recommended` picks per design)."""
    min_cov = min(r.coverage[pick(r)] for r in rows)
    r0 = [r.width[pick(r)] / r.width["clopper_pearson"] for r in rows if r.correlation == 0.0]
    r9 = [
        r.width[pick(r)] / r.width["clopper_pearson"]
        for r in rows
        if r.correlation == 0.9 and r.n >= 50
    ]
    by: dict = {}
    failures = []
    for r in rows:
        if r.correlation == 0.9:
            ratio = r.width[pick(r)] / r.width["clopper_pearson"]
            key = f"n={r.n},N={r.n_sim}"
            by[key] = round(max(by.get(key, 0.0), ratio), 4)
            if r.n >= 50 and ratio > 0.85:
                failures.append(
                    {
                        "p_real": r.p_real,
                        "p_sim": r.p_sim,
                        "n": r.n,
                        "N": r.n_sim,
                        "ratio": round(ratio, 4),
                    }
                )
    return {
        "validity_min_coverage_ge_1_minus_alpha": bool(min_cov >= 1 - alpha - 1e-9),
        "adaptivity_corr0_max_ratio": round(max(r0), 4),
        "adaptivity_corr0_le_1.10": bool(max(r0) <= 1.10),
        "moonshot_corr0_never_wider_than_cp": bool(max(r0) <= 1.0),
        "gain_corr0.9_n_ge_50_max_ratio": round(max(r9), 4) if r9 else None,
        "gain_corr0.9_n_ge_50_le_0.85": bool(r9) and bool(max(r9) <= 0.85),
        "moonshot_corr0.9_le_0.75": bool(r9) and bool(max(r9) <= 0.75),
        "gain_corr0.9_max_ratio_by_n_n_sim": by,
        "gain_failures": failures,
    }


def _bounds() -> dict:
    """The lower bounds of ``--bounds`` (module docstring)."""
    shares = [round(0.05 * i, 2) for i in range(1, 20)]
    det = {}
    for n in (50, 100):
        for pr in (0.9, 0.95):
            r = sb.discordant_family_ratio(pr, pr, 0.9, n, shares, CONFIDENCE)
            det[f"p_R={pr},n={n}"] = {
                "min_ratio": round(r["min_ratio"], 4),
                "argmin_share": r["argmin_share"],
                "ratio_at_default_share": round(r["ratio"][sr.DISCORDANT_REAL_SHARE], 4),
            }
    rnd = sb.discordant_family_ratio(
        0.95, 0.95, 0.9, 50, [round(0.1 * i, 1) for i in range(1, 10)], CONFIDENCE, True
    )
    pratt = sb.pratt_width_bound(0.95, 0.95, 0.9, 50, CONFIDENCE)
    return {
        "deterministic_family": det,
        "randomized_family": {
            "p_R=0.95,n=50": {
                "min_ratio": round(rnd["min_ratio"], 4),
                "argmin_share": rnd["argmin_share"],
                "ratio": {str(k): round(v, 4) for k, v in rnd["ratio"].items()},
            }
        },
        "pratt_all_exact_intervals": {
            "p_R=0.95,n=50": {
                "ratio": round(pratt["ratio"], 4),
                "width_bound": round(pratt["width_bound"], 5),
                "cp_width": round(pratt["cp_width"], 5),
            }
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="n in {10, 20}, N = 500 only")
    ap.add_argument("--bounds", action="store_true", help="the width lower bounds only")
    args = ap.parse_args()
    if args.bounds:
        print_result(_bounds(), args.json, indent=1)
        return
    sr.operating_characteristics(0.8, 0.8, 0.5, 5, 10)  # warm-up: load the numba cache
    t0, c0 = time.perf_counter(), time.process_time()
    rows = [sr.operating_characteristics(*pt, confidence=CONFIDENCE) for pt in _grid(args.quick)]
    grid_s, grid_cpu = time.perf_counter() - t0, time.process_time() - c0

    rng = np.random.default_rng(0)
    real = rng.integers(0, 2, 50)
    twin = np.where(rng.random(50) < 0.9, real, 1 - real)
    data = sr.simreal_data(real, twin, 7900, 10000)
    finite = [m for m in sr.METHODS if sr.VALIDITY[m] == "finite-sample" and m.endswith("_exact")]
    timing = {}
    for m in finite:
        best = np.inf
        for _ in range(args.repeat):
            sj._table.cache_clear()  # joint_exact builds its two tables in every timed call
            sfj._table.cache_clear()  # full_joint_exact its table and tails likewise
            sfj._sf_table.cache_clear()
            t = time.perf_counter()
            sr.simreal_interval(data, m, CONFIDENCE)
            best = min(best, time.perf_counter() - t)
        timing[m] = round(best * 1e3, 4)

    alpha = 1.0 - CONFIDENCE
    shortfall = {
        m: max(CONFIDENCE - r.coverage[m] for r in rows)
        for m in sr.METHODS
        if sr.VALIDITY[m] == "asymptotic"
    }
    ratio: dict = {}
    ratio_max: dict = {}
    for m in sr.METHODS:
        ratio[m], ratio_max[m] = {}, {}
        for rho in CORRELATION:
            ratio[m][str(rho)], ratio_max[m][str(rho)] = {}, {}
            for n in sorted({r.n for r in rows}):
                vals = [
                    r.width[m] / r.width["clopper_pearson"]
                    for r in rows
                    if r.correlation == rho and r.n == n
                ]
                if vals:
                    ratio[m][str(rho)][str(n)] = round(float(np.mean(vals)), 4)
                    ratio_max[m][str(rho)][str(n)] = round(float(np.max(vals)), 4)
    targets = {m: _targets(rows, lambda r, m=m: m, alpha) for m in finite}
    min_cov = {m: min(r.coverage[m] for r in rows) for m in finite}

    def pick(r):
        return sr.recommended(r.n, r.n_sim)

    out = {
        "grid_seconds": round(grid_s, 2),
        "grid_cpu_seconds": round(grid_cpu, 2),
        "grid_points": len(rows),
        "finite_sample_method": (
            f"recommended(n, N): full_joint_exact when N <= {sr.FULL_JOINT_RATIO} n, "
            "else joint_exact"
        ),
        "interval_ms": timing[sr.recommended(50, 10_000)],
        "interval_ms_by_method": timing,
        "min_coverage_finite_sample": min(r.coverage[pick(r)] for r in rows),
        "min_coverage_by_method": min_cov,
        "min_coverage_clopper_pearson": min(r.coverage["clopper_pearson"] for r in rows),
        "max_skipped_mass": max(r.skipped_mass for r in rows),
        "max_coverage_shortfall_asymptotic": shortfall,
        "width_ratio_vs_cp": ratio,
        "max_width_ratio_vs_cp": ratio_max,
        "targets": _targets(rows, pick, alpha),
        "targets_by_method": targets,
        "real_share": sr.DEFAULT_REAL_SHARE,
        "discordant_real_share": sr.DISCORDANT_REAL_SHARE,
        "cores": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    print_result(out, args.json, indent=1)


if __name__ == "__main__":
    main()

"""Targets of the sequential designs (issue 13, item 5), measured in one run.

Keys of ``--json``:

- ``max_type1_certified``: {design: certified upper bound} for every design of
  ``sequential.designs`` in config/config.yaml (target <= alpha, no excess at all);
- ``vs_step``: the optimised one-sided unpaired design at the STEP scenarios, a list of
  {p_a, p_b, power, ess, step_power, step_ess} (target power >= STEP - 0.01, ESS <= 1.05 STEP);
- ``ess_saving_vs_fixed_n``: {"p_a,p_b": 1 - ESS / n_fixed} at (0.7, 0.9) and (0.5, 0.7), n_fixed
  the smallest one-sided Fisher n of the same power (STEP: 0.69 and 0.59);
- ``null_ess_with_futility``: expected pairs at p_A = p_B = 0.5 of the optimised design with
  futility, and ``futility_max_power_loss`` over the STEP scenarios (targets <= 150, <= 0.02);
- ``design_seconds_n200`` / ``design_seconds_n500``: building an unpaired one-sided Pocock
  design looking after every trial pair (calibration, integer boundaries and the certificate
  included), median of 3 after a warm-up (targets <= 1 s and <= 5 s); every ``*_seconds`` key
  has a ``*_cpu_seconds`` twin (process CPU time: the machine is shared, see
  ``load_average_1min``);
  ``certify_seconds_n200`` / ``certify_seconds_n500``: the certificate alone;
  ``optimise_seconds_n200``: the whole optimiser (one-off, not part of the targets);
- ``oc_seconds_n200``: exact OC of the n = 200 design at one (p_A, p_B), median of 20
  (target <= 0.02 s); ``baseline_peeking_dp_seconds_n200``: the existing peeking DP
  (evalsim.stats.sequential.peeking, the same look schedule) in the same run, and the ratio;
- ``mc_type1``: 10^5 simulated experiments of the n = 200 Pocock design at its certified worst
  p, exact vs Monte Carlo, ``within_3se``.

- ``optimal_design_seconds_nmax200``: building and certifying the optimal paired design
  (evalsim.stats.sequential.optimal) at 0.737 vs 0.877, power 0.8, n_max 200 (target <= 10 s);
  ``t41_seconds``: the table T41 as a whole (target <= 60 s).

Run: ``python benchmarks/bench_sequential.py [--json]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.getcwd(), ".cache", "numba"))

import numpy as np  # noqa: E402
from _common import median_time, print_result  # noqa: E402

from evalsim.config import load_config  # noqa: E402
from evalsim.products.sequential.designs import build_design  # noqa: E402
from evalsim.stats.sequential import _kernels as K  # noqa: E402
from evalsim.stats.sequential.designs import (
    certify_type1,
    operating_characteristics,
    unpaired_design,
)
from evalsim.stats.sequential.optimise import fixed_n_for_power  # noqa: E402
from evalsim.stats.sequential.peeking import sequential_rejection_probability  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"


def _timed(out: dict, key: str, fn, repeat: int) -> None:
    """Wall-clock median under ``key`` and the process CPU-time median under ``key_cpu``.

    The machine is shared: with other jobs running, wall time overstates the work; the
    kernels are single-threaded, so CPU time is the cost of the computation itself.
    """
    out[key] = median_time(fn, repeat)
    out[key.replace("_seconds", "_cpu_seconds")] = median_time(fn, repeat, time.process_time)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--mc-experiments", type=int, default=100_000)
    args = ap.parse_args(argv)
    cfg = load_config(CONFIG)["sequential"]
    alpha, n_max = cfg["alpha"], cfg["n_max"]
    common = {k: cfg[k] for k in ("alpha", "n_max", "alternative", "looks", "futility", "optimise")}

    designs = {}
    t0 = time.perf_counter()
    for spec in cfg["designs"]:
        designs[spec["name"]] = build_design(spec, **common)
    all_designs_seconds = time.perf_counter() - t0
    out: dict = {"max_type1_certified": {n: d.certificate.upper for n, d in designs.items()}}
    out["all_certified_at_most_alpha"] = all(d.certificate.upper <= alpha for d in designs.values())

    opt_name = next(
        s["name"] for s in cfg["designs"] if s["boundary"] == "optimised" and not s.get("futility")
    )
    fut_name = next(
        s["name"] for s in cfg["designs"] if s["boundary"] == "optimised" and s.get("futility")
    )
    opt, fut = designs[opt_name], designs[fut_name]
    vs_step, loss = [], []
    for s in cfg["step"]:
        oc = operating_characteristics(opt, s["p_a"], s["p_b"])
        ocf = operating_characteristics(fut, s["p_a"], s["p_b"])
        loss.append(oc.power - ocf.power)
        vs_step.append(
            {
                "p_a": s["p_a"],
                "p_b": s["p_b"],
                "power": oc.power,
                "ess": oc.ess,
                "step_power": s["power"],
                "step_ess": s["ess"],
                "meets": bool(oc.power >= s["power"] - 0.01 and oc.ess <= 1.05 * s["ess"]),
            }
        )
    out["optimised_design"] = repr(opt)
    out["vs_step"] = vs_step
    saving = {}
    for p_a, p_b in ((0.7, 0.9), (0.5, 0.7)):
        oc = operating_characteristics(opt, p_a, p_b)
        n_fixed = fixed_n_for_power(oc.power, p_a, p_b, alpha)
        saving[f"{p_a},{p_b}"] = {
            "saving": 1 - oc.ess / n_fixed,
            "ess": oc.ess,
            "n_fixed": n_fixed,
            "power": oc.power,
        }
    out["ess_saving_vs_fixed_n"] = saving
    out["null_ess_with_futility"] = operating_characteristics(fut, 0.5, 0.5).ess
    out["null_ess_without_futility"] = operating_characteristics(opt, 0.5, 0.5).ess
    out["futility_max_power_loss"] = max(loss)
    out["all_designs_seconds"] = all_designs_seconds

    for n in (200, 500):
        unpaired_design(alpha, n, "one-sided", "pocock")  # warm-up (numba, caches)
        _timed(
            out,
            f"design_seconds_n{n}",
            lambda n=n: unpaired_design(alpha, n, "one-sided", "pocock"),
            3,
        )
        d = unpaired_design(alpha, n, "one-sided", "pocock")
        _timed(out, f"certify_seconds_n{n}", lambda d=d: certify_type1(d), 3)
        out[f"certificate_n{n}"] = d.certificate.to_dict()
    t0, c0 = time.perf_counter(), time.process_time()
    build_design(next(s for s in cfg["designs"] if s["name"] == opt_name), **common)
    out["optimise_seconds_n200"] = time.perf_counter() - t0
    out["optimise_cpu_seconds_n200"] = time.process_time() - c0

    d200 = unpaired_design(alpha, n_max, "one-sided", "pocock")
    operating_characteristics(d200, 0.7, 0.9)
    _timed(out, "oc_seconds_n200", lambda: operating_characteristics(d200, 0.7, 0.9), 20)
    regions = [
        d200.rows["upper"][j, : m + 1][:, None] <= np.arange(m + 1)[None, :]
        for j, m in enumerate(d200.look_sizes)
    ]
    sequential_rejection_probability(n_max, 0.7, 0.9, alpha, "every", regions)
    _timed(
        out,
        "baseline_peeking_dp_seconds_n200",
        lambda: sequential_rejection_probability(n_max, 0.7, 0.9, alpha, "every", regions),
        5,
    )
    out["oc_speedup_vs_peeking_dp"] = (
        out["baseline_peeking_dp_cpu_seconds_n200"] / out["oc_cpu_seconds_n200"]
    )
    out["load_average_1min"] = os.getloadavg()[0]

    c = d200.certificate
    r = d200.rows
    rng = np.random.default_rng(20261130)
    _, verdict = K.unpaired_mc(
        c.p_at,
        c.p_at,
        args.mc_experiments,
        rng,
        d200.look_sizes,
        r["upper"],
        r["lower"],
        r["fut_lo"],
        r["fut_hi"],
    )
    exact = operating_characteristics(d200, c.p_at, c.p_at).verdicts["B better"]
    mc = float((verdict == 1).mean())
    se = math.sqrt(exact * (1 - exact) / args.mc_experiments)
    out["mc_type1"] = {
        "design": repr(d200),
        "p": c.p_at,
        "experiments": args.mc_experiments,
        "exact": exact,
        "mc": mc,
        "se": se,
        "z": (mc - exact) / se,
        "within_3se": bool(abs(mc - exact) <= 3 * se),
    }
    # issue 44: the optimal paired design (built and certified) and T41 as a whole
    from evalsim.products.sequential.stopping_rules import stopping_rules_table
    from evalsim.stats.sequential.optimal import optimal_paired_design

    optimal_paired_design(0.6, 0.9, alpha, 0.8, 50)  # warm-up (numba cache)
    t0, c0 = time.perf_counter(), time.process_time()
    opt = optimal_paired_design(0.737, 0.877, alpha, 0.8, 200)
    out["optimal_design_seconds_nmax200"] = time.perf_counter() - t0
    out["optimal_design_cpu_seconds_nmax200"] = time.process_time() - c0
    out["optimal_design_nmax200"] = opt.to_dict()
    sr = cfg["stopping_rules"]
    t0, c0 = time.perf_counter(), time.process_time()
    stopping_rules_table(
        alpha, n_max, cfg["step"], sr["scenarios"], sr["power"], sr["peer_looks"], sr["null_rates"]
    )
    out["t41_seconds"] = time.perf_counter() - t0
    out["t41_cpu_seconds"] = time.process_time() - c0
    print_result(out, args.json, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

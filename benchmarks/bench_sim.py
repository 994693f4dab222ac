"""Benchmark of the simulate stage: trial throughput against bare mj_step, and the default pools.

Measured in one run on the default config's first task:

- ``bare_mj_step_steps_per_second``: ``mujoco.mj_step(model, data, nstep=...)`` from the trial
  start state (cube on the table, gripper open above it), one trial's length at a time,
  ``mj_resetData`` between repeats -- the physics alone, no Python in the loop;
- ``trials_per_second_per_core``: full trials of policy A (controller at 50 Hz, contact
  checks, outcome) in one process;
- ``ratio_to_bare_mj_step``: trial throughput in physics steps per second divided by the bare
  rate above (1.0 would mean the controller costs nothing);
- ``default_pools_wall_seconds_2_cores``: every task x policy x seed of the default config
  through :func:`evalsim.sim.pool.simulate_pools` with 2 worker processes.

Times are CPU seconds of this process for the first three (the machine may be shared; CPU time
is what one core delivers), wall seconds for the pools; both are printed.

Run: ``python benchmarks/bench_sim.py [--json] [--trials 200] [--skip-pools]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import mujoco

REPO = Path(__file__).resolve().parents[1]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def bench(trials: int, skip_pools: bool, config_path: Path) -> dict:
    from evalsim.config import load_config
    from evalsim.sim.pool import simulate_pools
    from evalsim.sim.rollout import run_policy_trials
    from evalsim.sim.scene import make_scene

    config = load_config(config_path)
    task = config["tasks"][0]
    scene = make_scene(config, task)
    policy = config["policies"][0]["name"]
    run_policy_trials(config, task["name"], policy, 0, 0, 5, scene=scene)  # warm up
    n_steps = scene.controller.n_ticks * scene.steps_per_tick

    # bare physics: same model, same start states, same number of steps per trial
    reps = max(20, trials // 4)
    w0, c0 = _clock()
    for i in range(reps):
        scene.reset(0.16 + 0.12 * (i % 7) / 6, -0.08 + 0.16 * (i % 5) / 4, 0.1 * (i % 3))
        mujoco.mj_step(scene.model, scene.data, nstep=n_steps)
    w1, c1 = _clock()
    bare_cpu = reps * n_steps / (c1 - c0)
    bare_wall = reps * n_steps / (w1 - w0)

    w0, c0 = _clock()
    run_policy_trials(config, task["name"], policy, 0, 0, trials, scene=scene)
    w1, c1 = _clock()
    tps_cpu = trials / (c1 - c0)
    tps_wall = trials / (w1 - w0)

    out = {
        "trials": trials,
        "steps_per_trial": n_steps,
        "bare_mj_step_steps_per_second": round(bare_cpu, 1),
        "trial_steps_per_second": round(tps_cpu * n_steps, 1),
        "trials_per_second_per_core": round(tps_cpu, 2),
        "trials_per_second_per_core_wall": round(tps_wall, 2),
        "bare_mj_step_steps_per_second_wall": round(bare_wall, 1),
        "ratio_to_bare_mj_step": round(tps_cpu * n_steps / bare_cpu, 3),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "mujoco_version": mujoco.__version__,
    }
    if not skip_pools:
        n_pool = len(config["tasks"]) * len(config["policies"])
        n_pool *= config["simulation"]["n_seeds"] * config["simulation"]["trials_per_seed"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        df = simulate_pools(config, processes=2)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert len(df) == n_pool
        out["default_pools_trials"] = n_pool
        out["default_pools_wall_seconds_2_cores"] = round(wall, 1)
        out["default_pools_cpu_seconds"] = round(
            (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 1
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--skip-pools", action="store_true")
    ap.add_argument("--config", default=str(REPO / "config" / "config.yaml"))
    args = ap.parse_args(argv)
    res = bench(args.trials, args.skip_pools, Path(args.config))
    if args.json:
        print(json.dumps(res))
        return
    width = max(len(k) for k in res)
    targets = {
        "trials_per_second_per_core": ">= 50",
        "ratio_to_bare_mj_step": ">= 0.5",
        "default_pools_wall_seconds_2_cores": "<= 120",
    }
    for key, value in res.items():
        print(f"{key:<{width}}  {value!s:>12}  {targets.get(key, '')}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

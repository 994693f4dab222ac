"""Benchmark of the simulate stage: trial throughput against bare mj_step, and the default pools.

Measured in one run on the default config's first task, for every scene of
:data:`evalsim.sim.scenes.SCENES` (keys prefixed ``so101_`` and ``gripper_table_``):

- ``bare_mj_step_steps_per_second``: the physics alone on the same model, no Python between
  steps. For SO-101: the trials' own open-loop plans (IK done beforehand) replayed from their
  start states by ``mujoco.rollout`` (same contacts, same grasps, in C); the arm idling at
  home through ``mj_step(nstep=...)`` is reported too (``idle_mj_step_steps_per_second``,
  ``ratio_to_idle_mj_step``: no contacts, so faster). Every scene of the scene base
  (:class:`evalsim.sim.scene.PickScene`) has ``plan``, so gripper_table is measured the same
  way (before the base it was ``mj_step`` from the trial start state);
- ``trials_per_second_per_core``: full trials of policy A (for SO-101: IK once per trial from
  the perceived pose, then the plan at 50 Hz with contact checks) in one process;
- ``ratio_to_bare_mj_step``: trial throughput in physics steps per second divided by the bare
  rate above (1.0 would mean the controller costs nothing). A trial counts its nominal
  ``steps_per_trial``, so trials that end early once their outcome is decided (SO-101:
  pushed, at the end of the squeeze; dropped, once the cube rests on the table out of the
  rising jaws' reach) count as whole trials and can push this above 1;
- ``trials_per_million_bare_steps``: trials per second per core divided by the bare rate,
  times 10^6 (issue 22's machine-free speed figure);
- ``default_pools_wall_seconds_2_cores``: every task x policy x seed of the default config
  (the default scene) through :func:`evalsim.sim.pool.simulate_pools` with 2 worker processes.

Why not ``mujoco.rollout``: the plan is open loop, but the outcome needs the pad-cube contacts
at every control tick (missed / pushed / dropped); stepping ``nstep`` physics steps per tick
from Python already keeps the ratio above 0.7, and the 2 cores are filled by the workflow's
parallel chunks.

Times are CPU seconds of this process for the first three (the machine may be shared; CPU time
is what one core delivers), wall seconds for the pools; both are printed.

Run: ``python benchmarks/bench_sim.py [--json] [--trials 200] [--skip-pools]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def bench_scene(config: dict, trials: int) -> dict:
    """Trials per second per core and the ratio to bare ``mj_step`` of the config's scene."""
    from evalsim.sim.rollout import run_policy_trials
    from evalsim.sim.scenes import make_scene

    task = config["tasks"][0]
    scene = make_scene(config, task)
    policy = config["policies"][0]["name"]
    run_policy_trials(config, task["name"], policy, 0, 0, 3, scene=scene)  # warm up
    n_steps = scene.steps_per_trial

    # bare physics: same model, same start states, same number of steps per trial
    reps = max(10, trials // 4)
    poses = [
        (0.16 + 0.12 * (i % 7) / 6, -0.08 + 0.16 * (i % 5) / 4, 0.1 * (i % 3)) for i in range(reps)
    ]
    w0, c0 = _clock()
    for x, y, yaw in poses:
        scene.reset(x, y, yaw)
        mujoco.mj_step(scene.model, scene.data, nstep=n_steps)
    w1, c1 = _clock()
    idle_cpu = reps * n_steps / (c1 - c0)
    bare_cpu, bare_wall = idle_cpu, reps * n_steps / (w1 - w0)
    extra = {}
    if hasattr(scene, "plan"):  # the trials' own physics: their open-loop plans, in C
        from mujoco import rollout

        m, d = scene.model, scene.data
        kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
        states, controls = [], []
        for x, y, yaw in poses:
            controls.append(np.repeat(scene.plan(x, y, yaw), scene.steps_per_tick, axis=0))
            scene.reset(x, y, yaw)
            st = np.empty(mujoco.mj_stateSize(m, kind))
            mujoco.mj_getState(m, d, st, kind)
            states.append(st)
        w0, c0 = _clock()
        for st, u in zip(states, controls, strict=True):
            rollout.rollout(m, d, st, u)
        w1, c1 = _clock()
        bare_cpu = reps * n_steps / (c1 - c0)
        bare_wall = reps * n_steps / (w1 - w0)
        extra["idle_mj_step_steps_per_second"] = round(idle_cpu, 1)

    w0, c0 = _clock()
    run_policy_trials(config, task["name"], policy, 0, 0, trials, scene=scene)
    w1, c1 = _clock()
    tps_cpu = trials / (c1 - c0)
    tps_wall = trials / (w1 - w0)
    out = {
        "trials": trials,
        "steps_per_trial": n_steps,
        "bare_mj_step_steps_per_second": round(bare_cpu, 1),
        "bare_mj_step_steps_per_second_wall": round(bare_wall, 1),
        "trial_steps_per_second": round(tps_cpu * n_steps, 1),
        "trials_per_second_per_core": round(tps_cpu, 2),
        "trials_per_second_per_core_wall": round(tps_wall, 2),
        "ratio_to_bare_mj_step": round(tps_cpu * n_steps / bare_cpu, 3),
        "trials_per_million_bare_steps": round(tps_cpu / bare_cpu * 1e6, 1),
        **extra,
    }
    if extra:
        out["ratio_to_idle_mj_step"] = round(tps_cpu * n_steps / idle_cpu, 3)
    return out


def bench(trials: int, skip_pools: bool, config_path: Path) -> dict:
    """Both scenes (prefixed ``so101_`` and ``gripper_table_``), then the default pools."""
    from evalsim.config import load_config
    from evalsim.sim.pool import simulate_pools
    from evalsim.sim.scenes import SCENES

    config = load_config(config_path)
    out: dict = {"default_scene": config["scene"]["name"]}
    for name in SCENES:
        cfg = copy.deepcopy(config)
        cfg["scene"]["name"] = name
        n = trials if name == "gripper_table" else max(20, trials // 2)
        for key, value in bench_scene(cfg, n).items():
            out[f"{name}_{key}"] = value
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    out["mujoco_version"] = mujoco.__version__
    n_pool = len(config["tasks"]) * len(config["policies"])
    n_pool *= config["simulation"]["n_seeds"] * config["simulation"]["trials_per_seed"]
    out["default_pools_trials"] = n_pool
    tps = out[f"{config['scene']['name']}_trials_per_second_per_core"]
    # what 2 cores need at this process's rate (an estimate; the measurement follows)
    out["default_pools_cpu_seconds_estimate"] = round(n_pool / tps, 1)
    if not skip_pools:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        df = simulate_pools(config, processes=2)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert len(df) == n_pool
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
        "so101_trials_per_second_per_core": ">= 20",
        "so101_ratio_to_bare_mj_step": ">= 0.7",
        "gripper_table_trials_per_second_per_core": ">= 50",
        "gripper_table_ratio_to_bare_mj_step": ">= 0.5",
        "default_pools_wall_seconds_2_cores": "<= 300",
    }
    for key, value in res.items():
        print(f"{key:<{width}}  {value!s:>12}  {targets.get(key, '')}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

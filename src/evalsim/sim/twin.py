"""The "real" twin of the SO-101 scene: the same arm with a configured sim-to-real gap.

Issue 27's testbed. A lab evaluates a policy on many cheap simulated trials and a few real
ones; some real trials have a simulated *twin* (the same initial state run in simulation).
Here the study's pools are the simulation, and the twin pools stand in for the real robot:
each twin trial runs the same cube pose, training seed and trial index as a pool trial, on a
scene whose physics differ by a *gap* made of physical knobs only (:data:`GAP_KNOBS`):

- ``pad_friction``: the pads' sliding friction (worn or dusty pads grip less);
- ``cube_mass_kg``: the real cube's mass (of the twins' task);
- ``arm_kp``: the arm servos' position gain (N m / rad);
- ``latency_s``: control latency, set points reach the servos this late
  (:class:`evalsim.sim.so101_model.SO101Params`);
- ``perception_bias_mm``: a constant (x, y) perception offset of the real camera (mm),
  added to the policy's aim error.

A knob left out of a gap keeps the simulation's value. ``simreal.twin_noise`` says whether a
twin shares its pool trial's perception draw (``shared``: a deterministic policy replayed
from the same initial state, so only the physics differ) or draws its own (``own``: the
stream of the policy key ``<policy>/real-<gap>``).

Twin pools are ordinary pools (:func:`evalsim.sim.rollout.run_trials` records), one file per
gap (``results/pools/twins/<gap>.parquet``), paired with the pools by (task, policy, seed,
trial).
"""

from __future__ import annotations

import copy

import pandas as pd

from evalsim.sim.rollout import (
    policy_sigma_mm,
    run_trials,
    seed_bias_mm,
    seed_sigma_factor,
    task_by_name,
)
from evalsim.sim.scenes import make_scene

__all__ = ["GAP_KNOBS", "SCENE_KNOBS", "gap_by_name", "twin_config", "run_twin_trials"]

#: Knobs of ``scene.so101`` a gap may set.
SCENE_KNOBS = ("pad_friction", "arm_kp", "latency_s")
#: Every knob a gap may set (besides its ``name``): the scene's, the task's cube mass, and the
#: real camera's perception bias.
GAP_KNOBS = (*SCENE_KNOBS, "cube_mass_kg", "perception_bias_mm")


def gap_by_name(config: dict, gap: str) -> dict:
    """The gap ``gap`` of ``config["simreal"]["gaps"]``."""
    gaps = config["simreal"]["gaps"]
    for g in gaps:
        if g["name"] == gap:
            return g
    names = ", ".join(g["name"] for g in gaps)
    raise ValueError(f"unknown simreal gap {gap!r}; configured gaps: {names}")


def twin_config(config: dict, gap: str, task: str) -> dict:
    """The study config with the gap's physics: ``scene.so101`` and the task's cube mass.

    Raises
    ------
    ValueError
        The scene is not ``so101`` (the twin is the SO-101's), or an unknown gap or task.
    """
    if config["scene"]["name"] != "so101":
        raise ValueError(
            f"config key 'scene.name': the real twin (simreal) needs the so101 scene, "
            f"got {config['scene']['name']!r}"
        )
    g = gap_by_name(config, gap)
    out = copy.deepcopy(config)
    so101 = out["scene"].setdefault("so101", {})
    for k in SCENE_KNOBS:
        if k in g:
            so101[k] = g[k]
    t = task_by_name(out, task)
    if "cube_mass_kg" in g:
        t["cube_mass_kg"] = g["cube_mass_kg"]
    return out


def run_twin_trials(
    config: dict, gap: str, task: str, policy: str, seed: int, start: int, stop: int
) -> pd.DataFrame:
    """The real twins of pool trials ``start .. stop-1`` of (task, policy, seed).

    Same poses, training-seed bias and (``twin_noise: shared``) perception draws as the pool
    trials; the gap's physics and perception bias. Returns the trials' pool records
    (:data:`evalsim.sim.pool.POOL_COLUMNS`).
    """
    cfg = twin_config(config, gap, task)
    g = gap_by_name(config, gap)
    shared = config["simreal"]["twin_noise"] == "shared"
    bx, by = seed_bias_mm(config, policy, seed)
    px, py = (float(v) for v in g.get("perception_bias_mm", (0.0, 0.0)))
    df = run_trials(
        cfg,
        task,
        policy if shared else f"{policy}/real-{gap}",
        policy_sigma_mm(config, policy) * seed_sigma_factor(config, policy, seed),
        seed,
        start,
        stop,
        bias_mm=(bx + px, by + py),
        scene=make_scene(cfg, task_by_name(cfg, task)),
        policy_label=policy,
    )
    return df

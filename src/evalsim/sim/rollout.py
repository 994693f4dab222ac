"""Trials: cube poses, perception errors, seed biases, and batches of rollouts.

Every random draw comes from :func:`evalsim.seeding.rng_for` with a key naming what it is:

- ``("pose", task)``: the task's cube poses, one row (x, y, yaw) per trial, drawn as one
  ``(n, 3)`` array of uniforms in row order, so trial ``i`` has the same pose for every
  policy, every training seed and every trial count (a shorter list is a prefix);
- ``("bias", policy, seed)``: the training seed's fixed perception bias, N(0, tau^2) per
  horizontal axis (mm);
- ``("surface", task, trial)``: the trial's surface condition (a scene whose contact
  friction varies from trial to trial, e.g. ``scene.so101.pad_friction_sd`` > 0), the same for
  every policy and training seed, like the pose;
- ``("aim", task, policy, seed, trial)``: the trial's standard-normal perception draws, scaled
  by sigma. Keyed per trial, so a trial's record does not depend on how trials are chunked.
  The sigma sweep uses the policy key ``"sweep"`` for every sigma (common random numbers).

Structure (issue 22, item 4; ``simulation.structure``, off by default): the perception error
grows with the cube's range from the camera (:func:`range_scale`), and a pose has its own
perception error, the same for every policy and seed (what the camera makes of that scene:
:func:`structured_error_mm`), so poses are easy or hard for all policies; and a training seed
has its own precision (:func:`seed_sigma_factor`, stream ``("seed-sigma", policy, seed)``).

Drift (servo heating, issue 18): with ``simulation.drift_mm_per_100_trials`` = r (0, off, by
default) trial ``i`` also gets a deterministic perception offset of r * i / 100 mm along the
world y axis (:func:`drift_offset_mm`). In ``gripper_table`` that is the jaws' closing
direction; on the SO-101 the jaw closes along the cube face normal chosen per trial, so a world-y
offset falls partly across and partly along the jaws, depending on the cube's yaw and position.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pandas as pd

from evalsim.seeding import rng_for
from evalsim.sim.scene import Scene
from evalsim.sim.scenes import make_scene

log = logging.getLogger(__name__)

SWEEP_POLICY = "sweep"


def task_by_name(config: dict, task: str) -> dict:
    for t in config["tasks"]:
        if t["name"] == task:
            return t
    names = ", ".join(t["name"] for t in config["tasks"])
    raise ValueError(f"unknown task {task!r}; configured tasks: {names}")


def policy_sigma_mm(config: dict, policy: str) -> float:
    for p in config["policies"]:
        if p["name"] == policy:
            return float(p["sigma_mm"])
    names = ", ".join(p["name"] for p in config["policies"])
    raise ValueError(f"unknown policy {policy!r}; configured policies: {names}")


def task_poses(config: dict, task: str, n_trials: int) -> np.ndarray:
    """Cube poses of the first ``n_trials`` trials of ``task``: columns x (m), y (m), yaw (rad)."""
    sc = config["scene"]
    u = rng_for(config["study_seed"], "pose", task).random((n_trials, 3))
    x0, x1 = sc["x_range_m"]
    y0, y1 = sc["y_range_m"]
    yaw = math.radians(sc["yaw_max_deg"])
    return np.column_stack(
        [x0 + (x1 - x0) * u[:, 0], y0 + (y1 - y0) * u[:, 1], -yaw + 2.0 * yaw * u[:, 2]]
    )


def seed_bias_mm(config: dict, policy: str, seed: int) -> tuple[float, float]:
    """The training seed's fixed perception bias (x, y), N(0, tau^2) per axis, in mm."""
    tau = float(config["simulation"]["tau_mm"])
    z = rng_for(config["study_seed"], "bias", policy, int(seed)).standard_normal(2)
    return float(tau * z[0]), float(tau * z[1])


def aim_noise_unit(config: dict, task: str, policy: str, seed: int, trial: int) -> np.ndarray:
    """The trial's two standard-normal perception draws (x, y)."""
    return rng_for(
        config["study_seed"], "aim", task, policy, int(seed), int(trial)
    ).standard_normal(2)


def range_scale(config: dict, x_m: float, y_m: float) -> float:
    """The perception error's multiplier at cube position (x, y) (``simulation.structure``):
    ``max(0, 1 + range_gain_per_m (r - ref_range_m))``, r the range from the camera; 1 when
    the structure is off."""
    st = config["simulation"].get("structure")
    if not st or not st["range_gain_per_m"]:
        return 1.0
    cx, cy = st["camera_xy_m"]
    r = math.hypot(x_m - cx, y_m - cy)
    return max(0.0, 1.0 + st["range_gain_per_m"] * (r - st["ref_range_m"]))


def seed_sigma_factor(config: dict, policy: str, seed: int) -> float:
    """A training seed's own sigma multiplier ``exp(seed_sigma_sd z)``, z ~ N(0, 1) from the
    stream ``("seed-sigma", policy, seed)``; 1 when ``simulation.structure`` is off."""
    st = config["simulation"].get("structure")
    if not st or not st["seed_sigma_sd"]:
        return 1.0
    z = rng_for(config["study_seed"], "seed-sigma", policy, int(seed)).standard_normal()
    return math.exp(st["seed_sigma_sd"] * float(z))


def structured_error_mm(
    config: dict,
    task: str,
    trial: int,
    x_m: float,
    y_m: float,
    own_mm: np.ndarray,
    bias_mm: tuple[float, float],
    drift_mm: tuple[float, float],
) -> tuple[float, float]:
    """A trial's perception error (x, y) in mm with ``simulation.structure`` on: the policy's
    own error ``own_mm`` plus the pose's shared error (``shared_error_mm`` times a standard
    normal pair from the stream ``("pose-aim", task, trial)``, the same for every policy and
    seed), both times :func:`range_scale`, plus the seed bias and the drift."""
    st = config["simulation"]["structure"]
    e = np.asarray(own_mm, dtype=float)
    if st["shared_error_mm"]:
        e = e + st["shared_error_mm"] * rng_for(
            config["study_seed"], "pose-aim", task, int(trial)
        ).standard_normal(2)
    e = e * range_scale(config, x_m, y_m)
    return float(e[0] + bias_mm[0] + drift_mm[0]), float(e[1] + bias_mm[1] + drift_mm[1])


def surface_draw(config: dict, task: str, trial: int) -> float:
    """Trial ``trial``'s standard-normal surface draw (stream ``("surface", task, trial)``):
    the contact surfaces' condition, the same for every policy and seed on that trial."""
    return float(rng_for(config["study_seed"], "surface", task, int(trial)).standard_normal())


def drift_vector_mm(offset_mm: float) -> tuple[float, float]:
    """A perception drift of ``offset_mm`` as an (x, y) offset in mm: along world y."""
    return 0.0, float(offset_mm)


def drift_offset_mm(config: dict, trial: int) -> tuple[float, float]:
    """Trial ``trial``'s drift offset (x, y) in mm: drift_mm_per_100_trials * trial / 100."""
    rate = float(config["simulation"].get("drift_mm_per_100_trials", 0.0))
    return drift_vector_mm(rate * trial / 100.0)


def run_trials(
    config: dict,
    task: str,
    policy_key: str,
    sigma_mm: float,
    seed: int,
    start: int,
    stop: int,
    bias_mm: tuple[float, float] = (0.0, 0.0),
    scene: Scene | None = None,
    policy_label: str | None = None,
    progress_every: int | None = None,
) -> pd.DataFrame:
    """Run trials ``start .. stop-1`` of one (task, policy, seed) and return their records.

    ``policy_key`` names the perception noise stream; ``policy_label`` (default the key) is
    what the ``policy`` column says. Progress is logged every ``progress_every`` trials
    (default: every 10% of the chunk; 0 turns it off).
    """
    if not 0 <= start <= stop:
        raise ValueError(f"need 0 <= start <= stop, got start={start!r}, stop={stop!r}")
    if sigma_mm < 0:
        raise ValueError(f"sigma_mm must be >= 0, got {sigma_mm!r}")
    scene = scene if scene is not None else make_scene(config, task_by_name(config, task))
    poses = task_poses(config, task, stop)
    if progress_every is None:
        progress_every = max(1, math.ceil((stop - start) / 10))
    structured = bool(config["simulation"].get("structure"))
    rows = []
    t0 = time.perf_counter()
    for i in range(start, stop):
        x, y, yaw = poses[i]
        if scene.surface_varies:  # the trial's surfaces: the same for every policy and seed
            scene.set_surface(surface_draw(config, task, i))
        z = aim_noise_unit(config, task, policy_key, seed, i)
        dx, dy = drift_offset_mm(config, i)
        ex = sigma_mm * z[0] + bias_mm[0] + dx
        ey = sigma_mm * z[1] + bias_mm[1] + dy
        if structured:
            ex, ey = structured_error_mm(config, task, i, x, y, sigma_mm * z, bias_mm, (dx, dy))
        out = scene.run_trial(float(x), float(y), float(yaw), x + ex / 1000.0, y + ey / 1000.0)
        rows.append(
            (
                i,
                x,
                y,
                yaw,
                ex,
                ey,
                out.success,
                out.success_loose,
                out.failure,
                out.lift_height_m,
                out.max_lift_m,
                out.touched,
            )
        )
        done = i - start + 1
        if progress_every and (done % progress_every == 0 or i == stop - 1):
            rate = done / max(time.perf_counter() - t0, 1e-9)
            log.info(
                "%s/%s/seed %d: %d/%d trials (%.1f trials/s)",
                task,
                policy_label or policy_key,
                seed,
                done,
                stop - start,
                rate,
            )
    cols = [
        "trial",
        "cube_x_m",
        "cube_y_m",
        "cube_yaw_rad",
        "aim_error_x_mm",
        "aim_error_y_mm",
        "success",
        "success_loose",
        "failure",
        "lift_height_m",
        "max_lift_m",
        "touched",
    ]
    df = pd.DataFrame.from_records(rows, columns=cols)
    df.insert(0, "task", task)
    df.insert(1, "policy", policy_label or policy_key)
    df.insert(2, "sigma_mm", float(sigma_mm))
    df.insert(3, "seed", int(seed))
    df.insert(8, "bias_x_mm", float(bias_mm[0]))
    df.insert(9, "bias_y_mm", float(bias_mm[1]))
    return df


def run_policy_trials(
    config: dict,
    task: str,
    policy: str,
    seed: int,
    start: int,
    stop: int,
    scene: Scene | None = None,
) -> pd.DataFrame:
    """Trials of a configured policy: its sigma (times the seed's own factor, with
    ``simulation.structure``) and its training seed's bias."""
    return run_trials(
        config,
        task,
        policy,
        policy_sigma_mm(config, policy) * seed_sigma_factor(config, policy, seed),
        seed,
        start,
        stop,
        bias_mm=seed_bias_mm(config, policy, seed),
        scene=scene,
    )


def run_sweep_trials(
    config: dict, sigma_mm: float, start: int, stop: int, scene: Scene | None = None
) -> pd.DataFrame:
    """Trials of the sigma sweep (first task, seed 0, no seed bias, common random numbers)."""
    task = sweep_task(config)
    return run_trials(
        config,
        task,
        SWEEP_POLICY,
        sigma_mm,
        0,
        start,
        stop,
        scene=scene,
        policy_label=f"sigma_{sigma_mm:g}",
    )


def sweep_task(config: dict) -> str:
    return config["simulation"]["sweep"].get("task") or config["tasks"][0]["name"]

"""The ``mujoco`` runner: the study's SO-101 arm in MuJoCo is the robot (the demo's robot).

An arm's specification in ``study.yaml``::

    runner: {kind: mujoco, sigma_mm: 9.0}

On Start, the cube is placed at the trial's position (``x_cm``, ``y_cm`` in the arm's base
frame, as in the pools: x 16-28 cm, y -8..8 cm), and the arm picks it aiming at the
position plus its perception error, N(0, sigma^2) per horizontal axis. The outcome and the
failure type come from the physics (:meth:`evalsim.sim.scene.PickScene.run_trial`, the
lesson's strict test and :func:`evalsim.sim.so101.so101_failure_type`); they are only a
suggestion, which the operator confirms, and both are stored.

Every draw is keyed (:func:`evalsim.seeding.rng_for`) so that a trial's run depends only on
its identity, never on the order trials are run in or on reruns of others:

- the cube's yaw and the pad surfaces: ``("console-pose", condition, block)`` and
  ``("console-surface", condition, block)``, the same for both arms of a pair, as the pools
  give every policy the same poses;
- the perception error: ``("console-aim", trial, attempt)``, the trial's own.

The scene's physical parameters come from the study config (``config``: a path relative to
the study folder, default the repository's ``config/config.yaml``), the task (``task``:
default the config's first, the lesson's 30 mm cube). The scene is built once per runner
(about 0.3 s) and reused: a trial takes some 0.05-0.1 s (``benchmarks/bench_console.py``).

What the result says holds no arm name and no sigma, only the physical record (cube pose,
lift height, whether a pad touched it), so the console can show it before the unblinding.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from evalsim.seeding import rng_for
from evalsim.study.runners import RunnerError, RunResult, TrialRequest, finished_run

__all__ = ["MujocoRunner", "default_config_path", "WORKSPACE_X_CM", "WORKSPACE_Y_CM"]

#: The arm's workspace in the pools (config ``scene.x_range_m``, ``scene.y_range_m``), in cm.
WORKSPACE_X_CM = (16.0, 28.0)
WORKSPACE_Y_CM = (-8.0, 8.0)
RECORD_NAME = "mujoco.json"


def default_config_path() -> Path:
    """The repository's study config, ``config/config.yaml`` (the calibrated SO-101)."""
    return Path(__file__).resolve().parents[4] / "config" / "config.yaml"


_SCENES: dict[tuple[str, str], object] = {}
_SCENES_LOCK = threading.Lock()


def _scene_for(config_path: Path, config: dict, task: str):
    """The SO-101 scene of (config, task), built once per process."""
    from evalsim.sim.rollout import task_by_name
    from evalsim.sim.scenes import make_scene

    key = (str(config_path), task)
    with _SCENES_LOCK:
        if key not in _SCENES:
            _SCENES[key] = make_scene(config, task_by_name(config, task))
        return _SCENES[key]


class MujocoRunner:
    """The SO-101 arm in MuJoCo with one arm's aim noise (see the module docstring).

    Parameters
    ----------
    sigma_mm : float
        The arm's perception error, sd per horizontal axis (mm): lesson 25's A is 9, B is 6.
    study_dir : pathlib.Path
        The study folder.
    task : str, optional
        The config's task (the cube); default its first.
    config : path, optional
        The config file, relative to the study folder; default :func:`default_config_path`.
    seed : int
        The seed of the runner's draws (the study's seed).
    """

    kind = "mujoco"

    def __init__(
        self,
        sigma_mm: float,
        study_dir: Path,
        task: str | None = None,
        config: str | None = None,
        seed: int = 0,
    ) -> None:
        if isinstance(sigma_mm, bool) or not isinstance(sigma_mm, (int, float)):
            raise RunnerError(f"runner (mujoco): sigma_mm must be a number, got {sigma_mm!r}")
        if not (0.0 <= float(sigma_mm) <= 100.0):
            raise RunnerError(f"runner (mujoco): sigma_mm must be in [0, 100], got {sigma_mm!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise RunnerError(f"runner (mujoco): seed must be an integer >= 0, got {seed!r}")
        from evalsim.config import load_config

        self.study_dir = Path(study_dir)
        self.config_path = (self.study_dir / config) if config else default_config_path()
        if not self.config_path.is_file():
            raise RunnerError(f"runner (mujoco): no config file {self.config_path}")
        self.config = load_config(self.config_path)
        names = [t["name"] for t in self.config["tasks"]]
        self.task = task or names[0]
        if self.task not in names:
            raise RunnerError(
                f"runner (mujoco): unknown task {self.task!r}; configured: {', '.join(names)}"
            )
        self.sigma_mm = float(sigma_mm)
        self.seed = seed

    @classmethod
    def from_spec(cls, spec: Mapping, study_dir: Path) -> MujocoRunner:
        """The runner of an arm's ``runner:`` mapping (``kind: mujoco``)."""
        if "sigma_mm" not in spec:
            raise RunnerError("runner (mujoco): missing key 'sigma_mm'")
        kw = {k: spec[k] for k in ("task", "config", "seed") if k in spec}
        return cls(spec["sigma_mm"], study_dir, **kw)

    @property
    def scene(self):
        """The SO-101 scene (built on first use, then shared within the process)."""
        return _scene_for(self.config_path, self.config, self.task)

    def pose_draws(self, req: TrialRequest) -> tuple[float, float]:
        """The trial's cube yaw (rad) and surface draw, shared by both arms of a pair."""
        yaw_max = math.radians(float(self.config["scene"]["yaw_max_deg"]))
        u = rng_for(self.seed, "console-pose", req.condition, req.block).random()
        yaw = -yaw_max + 2.0 * yaw_max * float(u)
        surface = float(
            rng_for(self.seed, "console-surface", req.condition, req.block).standard_normal()
        )
        return yaw, surface

    def run(self, req: TrialRequest) -> RunResult:
        """Run one pick at the trial's position; the suggestion comes from the physics."""
        t0 = time.monotonic()
        x_m, y_m = req.x_cm / 100.0, req.y_cm / 100.0
        yaw, surface = self.pose_draws(req)
        z = rng_for(self.seed, "console-aim", req.trial, int(req.attempt)).standard_normal(2)
        ex_m, ey_m = self.sigma_mm * z[0] / 1000.0, self.sigma_mm * z[1] / 1000.0
        scene = self.scene
        with _SCENES_LOCK:  # one MjData per scene: trials of two pages run one at a time
            if scene.surface_varies:
                scene.set_surface(surface)
            out = scene.run_trial(x_m, y_m, yaw, x_m + ex_m, y_m + ey_m)
        details = {
            "task": self.task,
            "cube_x_cm": round(req.x_cm, 3),
            "cube_y_cm": round(req.y_cm, 3),
            "cube_yaw_deg": round(math.degrees(yaw), 2),
            "success_strict": out.success,
            "success_loose": out.success_loose,
            "failure": out.failure,
            "lift_height_cm": round(100.0 * out.lift_height_m, 2),
            "max_lift_cm": round(100.0 * out.max_lift_m, 2),
            "touched": out.touched,
            "physics_steps": out.n_steps,
        }
        req.out_dir.mkdir(parents=True, exist_ok=True)
        record = req.out_dir / RECORD_NAME
        tmp = record.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(details, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(record)
        tail = (
            f"SO-101 pick at ({req.x_cm:g}, {req.y_cm:g}) cm, cube yaw "
            f"{details['cube_yaw_deg']:+.1f} deg: "
            + ("lifted" if out.success else f"{out.failure}")
            + f" (lift {details['lift_height_cm']:.1f} cm)"
        )
        return finished_run(
            self.kind,
            t0,
            self.study_dir,
            [record],
            tail,
            suggested=("success", None) if out.success else ("failure", out.failure),
            details=details,
        )

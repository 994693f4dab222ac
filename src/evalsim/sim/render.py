"""F04: the scene, rendered with MuJoCo's offscreen renderer.

Rendering needs an OpenGL backend: ``MUJOCO_GL=egl`` (Mesa's EGL, Debian package
``libegl-mesa0`` with ``libegl1``/``libgl1``) or ``MUJOCO_GL=osmesa`` (``libosmesa6``). The
backend must be chosen before ``mujoco`` is imported, so :func:`gl_backend` probes each in
a fresh process and :func:`render_scene_figure` is meant to run in a process that set
``MUJOCO_GL`` first (``workflow/scripts/simulate_render.py``).

The figure re-simulates trials of the pools (deterministic: same inputs, same outcome) and
shows the workspace rectangle at the start of a trial, one successful grasp during the hold,
and the last frame of one trial of each failure type.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd

#: The outcomes F04 shows, in panel order: ``evalsim.sim.scene.FAILURES``, repeated here so
#: that this module does not import mujoco before ``MUJOCO_GL`` is set (a test checks them).
OUTCOMES = ("none", "missed", "pushed", "dropped", "held_low")

#: Backends tried by :func:`gl_backend`, in order.
BACKENDS = ("egl", "osmesa")
#: What to install when no backend works (Debian/Ubuntu package names).
GL_PACKAGES = "libegl1 libegl-mesa0 libgl1 (MUJOCO_GL=egl) or libosmesa6 (MUJOCO_GL=osmesa)"

_PROBE = (
    "import mujoco\n"
    "xml = '<mujoco><worldbody><geom size=\".1\"/></worldbody></mujoco>'\n"
    "m = mujoco.MjModel.from_xml_string(xml)\n"
    "r = mujoco.Renderer(m, 32, 32)\n"
    "d = mujoco.MjData(m)\n"
    "r.update_scene(d)\n"
    "assert r.render().shape == (32, 32, 3)\n"
)


def gl_backend(timeout_s: float = 60.0) -> str | None:
    """The first backend of :data:`BACKENDS` that renders in a fresh process, or None.

    An explicit ``MUJOCO_GL`` in the environment is tried first.
    """
    order = [os.environ["MUJOCO_GL"]] if os.environ.get("MUJOCO_GL") else []
    order += [b for b in BACKENDS if b not in order]
    for backend in order:
        env = {**os.environ, "MUJOCO_GL": backend, "PYOPENGL_PLATFORM": backend}
        try:
            res = subprocess.run(
                [sys.executable, "-c", _PROBE],
                env=env,
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if res.returncode == 0:
            return backend
    return None


def _add_workspace(scene, x_range, y_range, z: float = 0.0008) -> None:
    """Draw the workspace rectangle's four edges into an ``mjvScene`` (render only)."""
    import mujoco

    (x0, x1), (y0, y1) = x_range, y_range
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for (ax, ay), (bx, by) in zip(corners, corners[1:] + corners[:1], strict=True):
        if scene.ngeom >= scene.maxgeom:
            return
        g = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(
            g,
            mujoco.mjtGeom.mjGEOM_LINE,
            np.zeros(3),
            np.zeros(3),
            np.zeros(9),
            np.array([0.0, 0.6, 0.45, 1.0], dtype=np.float32),
        )
        mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_LINE, 4.0, [ax, ay, z], [bx, by, z])
        scene.ngeom += 1


def _camera(target, distance=0.55, azimuth=135.0, elevation=-30.0):
    import mujoco

    cam = mujoco.MjvCamera()
    cam.lookat[:] = target
    cam.distance = distance
    cam.azimuth = azimuth
    cam.elevation = elevation
    return cam


def pick_examples(pools: pd.DataFrame, task: str | None = None) -> dict[str, pd.Series]:
    """The first trial (pool order) of each outcome on ``task`` (default: the first task).

    An outcome that never occurs on ``task`` is taken from the first other task (in pool
    order) where it does; an outcome found nowhere is left out.
    """
    task = task or str(pools["task"].iloc[0])
    tasks = [task, *(t for t in pd.unique(pools["task"]) if t != task)]
    out = {}
    for kind in OUTCOMES:
        for t in tasks:
            rows = pools[(pools["task"] == t) & (pools["failure"] == kind)]
            if len(rows):
                out[kind] = rows.iloc[0]
                break
    return out


def render_scene_figure(config: dict, pools: pd.DataFrame, width: int = 480, height: int = 360):
    """F04: a 2 x 3 grid of rendered frames (workspace, a grasp, each failure type)."""
    import matplotlib.pyplot as plt
    import mujoco

    from evalsim.figures import PAGE_WIDTH_IN
    from evalsim.sim.rollout import surface_draw, task_by_name
    from evalsim.sim.scenes import make_scene

    examples = pick_examples(pools)
    task = str(pools["task"].iloc[0])
    scenes = {task: make_scene(config, task_by_name(config, task))}
    scene = scenes[task]
    renderer = mujoco.Renderer(scene.model, height, width)
    sc = config["scene"]
    opt = mujoco.MjvOption()
    centre = [np.mean(sc["x_range_m"]), np.mean(sc["y_range_m"]), 0.03]

    def frame(cam) -> np.ndarray:
        renderer.update_scene(scene.data, camera=cam, scene_option=opt)
        _add_workspace(renderer.scene, sc["x_range_m"], sc["y_range_m"])
        return renderer.render().copy()

    panels: list[tuple[str, np.ndarray | None]] = []
    first = pools.iloc[0]
    scene.reset(first.cube_x_m, first.cube_y_m, first.cube_yaw_rad)
    panels.append(
        (
            "workspace (x {:.0f}-{:.0f} cm, y {:.0f}-{:.0f} cm)".format(
                *(100 * v for v in (*sc["x_range_m"], *sc["y_range_m"]))
            ),
            frame(_camera(centre, distance=0.75, azimuth=150.0, elevation=-35.0)),
        )
    )
    titles = {
        "none": "grasp: lifted and held",
        "missed": "missed: no jaw contact",
        "pushed": "pushed: never both jaws",
        "dropped": "dropped: left the jaws",
        "held_low": "held low: held below 4 cm",
    }
    for kind in OUTCOMES:
        r = examples.get(kind)
        if r is None:
            panels.append((f"{titles[kind]}\n(none in the pools)", None))
            continue
        if r.task not in scenes:  # an outcome only another task's pools have
            scenes[r.task] = make_scene(config, task_by_name(config, r.task))
        scene = scenes[r.task]
        renderer.close()
        renderer = mujoco.Renderer(scene.model, height, width)
        shots: dict[str, np.ndarray] = {}
        cube_target = [r.cube_x_m, r.cube_y_m, 0.04]
        want = scene.n_ticks - 1 if kind != "none" else scene.n_ticks - 10

        def grab(tick: int, shots=shots, want=want, target=cube_target) -> None:
            if tick == want:
                shots["img"] = frame(_camera(target, distance=0.35))

        if scene.surface_varies:  # the trial's own surfaces, as in the pools
            scene.set_surface(surface_draw(config, r.task, int(r.trial)))
        aim_x = r.cube_x_m + r.aim_error_x_mm / 1000.0
        aim_y = r.cube_y_m + r.aim_error_y_mm / 1000.0
        out = scene.run_trial(r.cube_x_m, r.cube_y_m, r.cube_yaw_rad, aim_x, aim_y, callback=grab)
        other = "" if r.task == task else f" (task {r.task})"
        label = (
            f"{titles[kind]}{other}\n{r.policy} seed {int(r.seed)} trial {int(r.trial)}, "
            f"aim error ({r.aim_error_x_mm:+.1f}, {r.aim_error_y_mm:+.1f}) mm"
        )
        if out.failure != kind:  # the re-simulation must reproduce the pool's outcome
            raise RuntimeError(f"re-simulated trial gave {out.failure!r}, the pool says {kind!r}")
        panels.append((label, shots.get("img")))
    renderer.close()
    fig, axes = plt.subplots(2, 3, figsize=(PAGE_WIDTH_IN, PAGE_WIDTH_IN * 0.56))
    for ax, (title, img) in zip(axes.flat, panels, strict=False):
        if img is not None:
            ax.imshow(img)
        ax.set_title(title, fontsize=6.5)
        ax.set_axis_off()
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    fig.suptitle(
        f"F04: the {sc['name']} scene, task {task} (MuJoCo {mujoco.__version__}, offscreen)",
        fontsize=8,
    )
    fig.tight_layout()
    return fig

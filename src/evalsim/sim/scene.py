"""Scenes: model from config, reset to a cube pose, run the scripted pick, classify the outcome.

A scene is anything with the :class:`Scene` interface. ``make_scene(config, task)`` picks the
implementation named by ``config["scene"]["name"]`` (an enum in the config schema) through the
registry :data:`SCENES`; a scene is one more class, one more registry entry and one more enum
value. The default is the SO-101 arm (:mod:`evalsim.sim.so101`).

:class:`GripperTableScene` is the table + cube + parallel-jaw gripper of
``assets/gripper_table.xml``. Its success tests, decided from physics (see config/README.md):

- strict: after the hold, the cube's lowest point is at least ``strict_lift_m`` above the
  table and both pads touch the cube;
- loose: both pads touch the cube on the last tick of the close phase, or the strict test
  passes (so strict implies loose by definition);
- failure types (when strict fails): ``missed`` -- no gripper geom touched the cube at any
  control tick; ``pushed`` -- touched but the cube's lowest point never rose
  ``lifted_min_m`` above the table during the lift and hold phases; ``dropped`` -- lifted at
  least that much at some tick of those phases, then not held at the end.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from importlib import resources
from typing import Protocol

import mujoco

from evalsim.sim.controller import PickController, PickTiming

FAILURES = ("none", "missed", "pushed", "dropped")


@dataclass(frozen=True)
class Outcome:
    """What one trial produced (lengths in m)."""

    success: bool
    success_loose: bool
    failure: str
    lift_height_m: float
    max_lift_m: float
    touched: bool
    n_steps: int


def cube_bottom_m(data: mujoco.MjData, body: int, half_m: float) -> float:
    """Height (m) above the table of the lowest corner of a cube of half-size ``half_m``."""
    z = data.xpos[body, 2]
    r = data.xmat[body]  # row-major 3x3; row 2 = world z of the body axes
    return float(z - half_m * (abs(r[6]) + abs(r[7]) + abs(r[8])))


def failure_type(success: bool, touched: bool, jaws_closed_on_cube: bool) -> str:
    """The lesson's failure type: none, missed (no pad contact), pushed (contact, but the
    jaws never closed on the cube) or dropped (closed on it, strict test failed)."""
    if success:
        return "none"
    if not touched:
        return "missed"
    return "dropped" if jaws_closed_on_cube else "pushed"


class Scene(Protocol):
    """The interface every scene implements."""

    model: mujoco.MjModel
    data: mujoco.MjData

    steps_per_trial: int

    def reset(self, x_m: float, y_m: float, yaw_rad: float) -> None: ...

    def run_trial(
        self,
        x_m: float,
        y_m: float,
        yaw_rad: float,
        aim_x_m: float,
        aim_y_m: float,
        callback: Callable[[int], None] | None = None,
    ) -> Outcome: ...

    def check_warnings(self) -> dict[str, int]: ...


@dataclass(frozen=True)
class GripperTableParams:
    """Every physical parameter of the gripper/table scene (SI units)."""

    cube_size_m: float = 0.030
    cube_mass_kg: float = 0.05
    cube_friction: float = 0.8
    table_friction: float = 0.5
    pad_friction: float = 1.0
    pad_width_m: float = 0.020
    pad_thickness_m: float = 0.008
    pad_height_m: float = 0.045
    jaw_opening_m: float = 0.050
    grip_force_n: float = 10.0
    arm_shoulder_z_m: float = 0.40
    arm_reach_m: float = 1.0
    grasp_clearance_m: float = 0.005
    approach_clearance_m: float = 0.02
    lift_m: float = 0.08
    strict_lift_m: float = 0.04
    lifted_min_m: float = 0.01
    timestep_s: float = 0.002
    control_hz: float = 50.0
    approach_s: float = 0.3
    descend_s: float = 0.4
    close_s: float = 0.4
    lift_s: float = 0.4
    hold_s: float = 1.0

    @classmethod
    def from_config(cls, config: dict, task: dict) -> GripperTableParams:
        """Scene keys from ``config["scene"]``, overridden by the task's own keys."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in config.get("scene", {}).items() if k in names}
        values.update({k: v for k, v in task.items() if k in names})
        return cls(**{k: float(v) for k, v in values.items()})


def _asset_xml(name: str) -> str:
    return resources.files("evalsim.sim").joinpath("assets", f"{name}.xml").read_text("utf-8")


def build_gripper_table_model(p: GripperTableParams) -> mujoco.MjModel:
    """Compile the MJCF with the parameters ``p`` applied to its named elements."""
    spec = mujoco.MjSpec.from_string(_asset_xml("gripper_table"))
    spec.option.timestep = p.timestep_s
    h = p.cube_size_m / 2.0
    cube = spec.geom("cube")
    cube.size = [h, h, h]
    cube.mass = p.cube_mass_kg
    cube.friction = [p.cube_friction, 0.005, 0.0001]
    spec.body("cube").pos = [0.22, 0.0, h]
    spec.geom("table").friction = [p.table_friction, 0.005, 0.0001]
    for side in ("left", "right"):
        pad = spec.geom(f"pad_{side}")
        sign = 1.0 if side == "left" else -1.0  # inner face stays at the finger origin
        pad.size = [p.pad_width_m / 2.0, p.pad_thickness_m / 2.0, p.pad_height_m / 2.0]
        pad.pos = [0.0, sign * p.pad_thickness_m / 2.0, -p.pad_height_m / 2.0]
        pad.friction = [p.pad_friction, 0.005, 0.0001]
        act = spec.actuator(f"finger_{side}")
        act.forcerange = [-p.grip_force_n, p.grip_force_n]
    return spec.compile()


class GripperTableScene:
    """Table, cube and parallel-jaw gripper; one instance runs many trials.

    Names are looked up once here; work arrays are reused; :func:`mujoco.mj_resetData` runs
    before every trial, so a trial's outcome depends only on its inputs.
    """

    def __init__(self, params: GripperTableParams) -> None:
        self.params = p = params
        self.model = m = build_gripper_table_model(p)
        self.data = mujoco.MjData(m)
        self.cube_body = m.body("cube").id
        self.cube_geom = m.geom("cube").id
        self.cube_qadr = int(m.jnt_qposadr[m.joint("cube_free").id])
        self.hand_qadr = [int(m.jnt_qposadr[m.joint(n).id]) for n in ("hand_x", "hand_y", "hand_z")]
        self.finger_qadr = [
            int(m.jnt_qposadr[m.joint(n).id]) for n in ("finger_left", "finger_right")
        ]
        self.act_hand = [m.actuator(n).id for n in ("hand_x", "hand_y", "hand_z")]
        self.act_finger = [m.actuator(n).id for n in ("finger_left", "finger_right")]
        self.touch_adr = tuple(
            int(m.sensor_adr[m.sensor(n).id]) for n in ("touch_left", "touch_right", "touch_palm")
        )
        self.half = p.cube_size_m / 2.0
        timing = PickTiming(p.control_hz, p.approach_s, p.descend_s, p.close_s, p.lift_s, p.hold_s)
        self.steps_per_tick = max(1, round(1.0 / (p.control_hz * p.timestep_s)))
        self.home = (0.22, 0.0, p.cube_size_m + p.approach_clearance_m + p.pad_height_m + 0.03)
        self.controller = PickController(
            timing,
            home_xyz=self.home,
            z_above_m=p.cube_size_m + p.approach_clearance_m + p.pad_height_m,
            z_grasp_m=p.grasp_clearance_m + p.pad_height_m,
            lift_m=p.lift_m,
            open_half_m=p.jaw_opening_m / 2.0,
            shoulder_z_m=p.arm_shoulder_z_m,
            reach_m=p.arm_reach_m,
        )
        self.n_ticks = self.controller.n_ticks
        self.steps_per_trial = self.n_ticks * self.steps_per_tick

    def reset(self, x_m: float, y_m: float, yaw_rad: float) -> None:
        """Cube resting at (x, y) with yaw; gripper open at its home pose."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        a = self.cube_qadr
        d.qpos[a : a + 3] = (x_m, y_m, self.half)
        d.qpos[a + 3 : a + 7] = (math.cos(yaw_rad / 2), 0.0, 0.0, math.sin(yaw_rad / 2))
        for adr, act, v in zip(self.hand_qadr, self.act_hand, self.home, strict=True):
            d.qpos[adr] = v
            d.ctrl[act] = v
        for adr, act in zip(self.finger_qadr, self.act_finger, strict=True):
            d.qpos[adr] = self.params.jaw_opening_m / 2.0
            d.ctrl[act] = self.params.jaw_opening_m / 2.0
        mujoco.mj_forward(m, d)

    def _contacts(self) -> tuple[bool, bool, bool]:
        """(any gripper geom touches the cube, left pad touches it, right pad touches it)."""
        sd, (il, ir, ip) = self.data.sensordata, self.touch_adr
        left, right = sd[il] > 0.0, sd[ir] > 0.0
        return bool(left or right or sd[ip] > 0.0), bool(left), bool(right)

    def _cube_bottom_m(self) -> float:
        return cube_bottom_m(self.data, self.cube_body, self.half)

    def run_trial(
        self,
        x_m: float,
        y_m: float,
        yaw_rad: float,
        aim_x_m: float,
        aim_y_m: float,
        callback: Callable[[int], None] | None = None,
    ) -> Outcome:
        """One pick of the cube at (x, y, yaw) aimed at the perceived (aim_x, aim_y).

        ``callback(tick)``, if given, runs after every control tick (e.g. to render a frame).
        """
        m, d, ctl = self.model, self.data, self.controller
        self.reset(x_m, y_m, yaw_rad)
        ax, ay, az = self.act_hand
        fl, fr = self.act_finger
        touched = False
        loose = False
        max_lift = 0.0
        lift_start = ctl.first_tick("lift")
        for tick in range(ctl.n_ticks):
            hx, hy, hz, q = ctl.setpoint(tick, aim_x_m, aim_y_m)
            d.ctrl[ax] = hx
            d.ctrl[ay] = hy
            d.ctrl[az] = hz
            d.ctrl[fl] = q
            d.ctrl[fr] = q
            mujoco.mj_step(m, d, nstep=self.steps_per_tick)
            any_touch, left, right = self._contacts()
            touched |= any_touch
            if tick >= lift_start:  # a cube squeezed up out of the jaws is not "lifted"
                max_lift = max(max_lift, self._cube_bottom_m())
            if ctl.is_close_settled(tick):
                loose = left and right
            if callback is not None:
                callback(tick)
        _, left, right = self._contacts()
        lift = self._cube_bottom_m()
        success = bool(lift >= self.params.strict_lift_m and left and right)
        loose = bool(loose or success)
        failure = failure_type(success, touched, max_lift >= self.params.lifted_min_m)
        return Outcome(
            success, loose, failure, lift, max_lift, touched, ctl.n_ticks * self.steps_per_tick
        )

    def check_warnings(self) -> dict[str, int]:
        """Non-zero MuJoCo warning counters of the current data (name -> count)."""
        out = {}
        for i in range(mujoco.mjtWarning.mjNWARNING.value):
            n = int(self.data.warning[i].number)
            if n:
                out[mujoco.mjtWarning(i).name] = n
        return out


#: The registry of scenes: config name -> (module, parameter class, scene class). Imported
#: lazily, so a scene's dependencies load only when it is used.
SCENES = {
    "so101": ("evalsim.sim.so101", "SO101Params", "SO101Scene"),
    "gripper_table": ("evalsim.sim.scene", "GripperTableParams", "GripperTableScene"),
}
DEFAULT_SCENE = "so101"


def scene_classes(name: str) -> tuple[type, type]:
    """(parameter class, scene class) of the scene called ``name``."""
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r}; known scenes: {', '.join(sorted(SCENES))}")
    module, params_cls, scene_cls = SCENES[name]
    mod = importlib.import_module(module)
    return getattr(mod, params_cls), getattr(mod, scene_cls)


def make_scene(config: dict, task: dict) -> Scene:
    """The scene named by ``config['scene']['name']`` for ``task``."""
    params_cls, scene_cls = scene_classes(config.get("scene", {}).get("name", DEFAULT_SCENE))
    return scene_cls(params_cls.from_config(config, task))

"""Scenes: model from config, reset to a cube pose, run the scripted pick, classify the outcome.

One scene base, :class:`PickScene`, holds what every scene shares, written once: the cube's
helpers (its names and addresses, placing it at a pose, its lowest corner, MuJoCo's warning
counters) and the trial loop (:meth:`PickScene.run_trial`: plan once from the perceived
position, reset, step the plan's control rows, record contacts and heights in a
:class:`TrialTrace`, apply the strict and loose tests at the end). A scene gives its model, its
controller (:meth:`PickScene.plan`, :meth:`PickScene.reset`), its contact test
(:meth:`PickScene.jaw_contacts`) and its failure types (:meth:`PickScene.failure`).

A scene is a subclass of :class:`PickScene` (:data:`Scene`). The registry of scenes is
:data:`evalsim.sim.scenes.SCENES`, and :func:`evalsim.sim.scenes.make_scene` picks the one
named by ``config["scene"]["name"]``; a scene is one more class and one more registry entry
(the config schema's enum is checked against the registry by a test). The default is the
SO-101 arm (:mod:`evalsim.sim.so101`).

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

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from importlib import resources

import mujoco
import numpy as np

from evalsim.sim.controller import PickController, PickTiming

#: Every failure type any scene reports, "none" first (success). ``held_low`` is the SO-101's
#: (:mod:`evalsim.sim.so101`); gripper_table never reports it.
FAILURES = ("none", "missed", "pushed", "dropped", "held_low")


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


@dataclass
class TrialTrace:
    """What the trial loop records at every control tick (lengths in m).

    Attributes
    ----------
    touched : bool
        Some gripper geom touched the cube at some tick.
    both_ever : bool
        Both jaws were on the cube at the same tick, at some tick.
    loose_both : bool
        Both jaws were on the cube at the scene's loose tick (:attr:`PickScene.loose_tick`).
    max_lift_m : float
        Highest lowest-corner height of the cube from the lift's first tick on.
    lift_m : float
        The cube's lowest-corner height after the last tick.
    both_end : bool
        Both jaws on the cube after the last tick.
    n_steps : int
        Physics steps run.
    """

    touched: bool = False
    both_ever: bool = False
    loose_both: bool = False
    max_lift_m: float = 0.0
    lift_m: float = 0.0
    both_end: bool = False
    n_steps: int = 0


class PickScene:
    """The scene base: cube helpers and the trial loop, shared by every scene.

    A subclass builds ``model`` and ``data``, calls :meth:`_init_cube` and
    :meth:`_init_ticks`, and implements :meth:`plan`, :meth:`reset`, :meth:`jaw_contacts` and
    :meth:`failure`. It sets ``loose_tick`` (the tick whose both-jaws state is the loose test)
    and ``lift_start_tick`` (from which the lift height is tracked) and ``strict_lift_m``.
    """

    model: mujoco.MjModel
    data: mujoco.MjData
    loose_tick: int
    lift_start_tick: int
    strict_lift_m: float
    #: Actions at given control ticks, run before that tick's physics steps (tick -> callable
    #: without arguments), e.g. a servo's torque limit that changes between phases.
    tick_hooks: dict[int, Callable[[], None]] = {}
    #: The tick after which :meth:`decided` may end the trial early (None: never).
    decide_tick: int | None = None

    #: The contact surfaces vary from trial to trial (:meth:`set_surface` is then called
    #: before each trial with that trial's standard-normal draw).
    surface_varies: bool = False

    def set_surface(self, z: float) -> None:
        """Set this trial's surface condition from a standard-normal draw ``z`` (a scene with
        :attr:`surface_varies` implements it)."""
        raise NotImplementedError

    #: A cube whose lowest corner is below this height (m) rests on the table (see
    #: :meth:`left_behind`).
    resting_m: float = 0.002

    def left_behind(self) -> bool:
        """True when, during the lift or hold, a cube resting on the table can no longer be
        reached by the jaws (a scene that implements it ends such a trial there: dropped)."""
        return False

    def decided(self, trace: TrialTrace) -> bool:
        """True when the outcome is already decided at ``decide_tick`` (the trial then ends
        there: its last state is the state of that tick)."""
        return False

    # ---- set-up helpers -------------------------------------------------------------------
    def _init_cube(self, cube_size_m: float) -> None:
        """Look up the cube's body, geom and free joint (named ``cube``, ``cube_free``)."""
        m = self.model
        self.cube_body = m.body("cube").id
        self.cube_geom = m.geom("cube").id
        self.cube_qadr = int(m.jnt_qposadr[m.joint("cube_free").id])
        self.half = cube_size_m / 2.0

    def _init_ticks(self, control_hz: float, timestep_s: float, n_ticks: int) -> None:
        """Physics steps per control tick, ticks and steps per trial."""
        self.steps_per_tick = max(1, round(1.0 / (control_hz * timestep_s)))
        self.n_ticks = n_ticks
        self.steps_per_trial = n_ticks * self.steps_per_tick

    # ---- cube helpers ---------------------------------------------------------------------
    def place_cube(self, x_m: float, y_m: float, yaw_rad: float) -> None:
        """Put the cube on the table at (x, y) with yaw ``yaw_rad`` (qpos only)."""
        a = self.cube_qadr
        self.data.qpos[a : a + 3] = (x_m, y_m, self.half)
        self.data.qpos[a + 3 : a + 7] = (math.cos(yaw_rad / 2), 0.0, 0.0, math.sin(yaw_rad / 2))

    def _cube_bottom_m(self) -> float:
        return cube_bottom_m(self.data, self.cube_body, self.half)

    def check_warnings(self) -> dict[str, int]:
        """Non-zero MuJoCo warning counters of the current data (name -> count)."""
        out = {}
        for i in range(mujoco.mjtWarning.mjNWARNING.value):
            n = int(self.data.warning[i].number)
            if n:
                out[mujoco.mjtWarning(i).name] = n
        return out

    # ---- what a scene gives ---------------------------------------------------------------
    def plan(self, aim_x_m: float, aim_y_m: float, yaw_rad: float) -> np.ndarray:
        """Control rows (``n_ticks`` x ``nu``) of the pick aimed at the perceived position."""
        raise NotImplementedError

    def reset(self, x_m: float, y_m: float, yaw_rad: float) -> None:
        """Cube resting at (x, y, yaw), the gripper open at its home pose."""
        raise NotImplementedError

    def jaw_contacts(self) -> tuple[bool, bool]:
        """(some gripper geom touches the cube, both jaws are on the cube) now."""
        raise NotImplementedError

    def failure(self, success: bool, trace: TrialTrace) -> str:
        """The failure type of a trial from its trace ("none" on success)."""
        raise NotImplementedError

    # ---- the trial loop -------------------------------------------------------------------
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

        ``callback(tick)``, if given, runs after every control tick (e.g. to render a frame);
        with a callback the trial always runs to its last tick. Without one, a trial whose
        outcome :meth:`decided` at ``decide_tick`` ends there (``n_steps`` says how far it ran).

        Strict: after the last tick, the cube's lowest corner is at least ``strict_lift_m``
        above the table and both jaws are on the cube. Loose: both jaws on the cube at
        ``loose_tick``, or strict (so strict implies loose).
        """
        m, d = self.model, self.data
        ctrl = self.plan(aim_x_m, aim_y_m, yaw_rad)
        self.reset(x_m, y_m, yaw_rad)
        trace = TrialTrace()
        nstep = self.steps_per_tick
        hooks = self.tick_hooks
        # after this tick the per-tick contacts only feed ``touched`` and ``both_ever``; once
        # both are True nothing reads them until the end (``both_end`` is taken after the loop)
        settled_tick = max(self.loose_tick, -1 if self.decide_tick is None else self.decide_tick)
        for tick in range(self.n_ticks):
            if tick in hooks:
                hooks[tick]()
            d.ctrl[:] = ctrl[tick]
            mujoco.mj_step(m, d, nstep=nstep)
            trace.n_steps += nstep
            if tick <= settled_tick or not trace.both_ever or not trace.touched:
                touch, both = self.jaw_contacts()
                trace.touched |= touch
                trace.both_ever |= both
            if tick == self.loose_tick:
                trace.loose_both = both
            if tick >= self.lift_start_tick:  # a cube squeezed up out of the jaws is not lifted
                bottom = self._cube_bottom_m()
                trace.max_lift_m = max(trace.max_lift_m, bottom)
                if (
                    callback is None
                    and trace.both_ever
                    and bottom < self.resting_m
                    and self.left_behind()
                ):
                    break
            if callback is not None:
                callback(tick)
            elif tick == self.decide_tick and self.decided(trace):
                break
        _, trace.both_end = self.jaw_contacts()
        trace.lift_m = self._cube_bottom_m()
        success = bool(trace.lift_m >= self.strict_lift_m and trace.both_end)
        loose = bool(trace.loose_both or success)
        return Outcome(
            success,
            loose,
            self.failure(success, trace),
            trace.lift_m,
            trace.max_lift_m,
            trace.touched,
            trace.n_steps,
        )


#: The type of every scene: each derives from :class:`PickScene`, whose public methods
#: (``reset``, ``set_surface``, ``run_trial``, ``check_warnings``) are what rollouts call.
Scene = PickScene


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

    @property
    def timing(self) -> PickTiming:
        """The scripted pick's control rate and phase durations."""
        return PickTiming(
            self.control_hz, self.approach_s, self.descend_s, self.close_s, self.lift_s, self.hold_s
        )


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


class GripperTableScene(PickScene):
    """Table, cube and parallel-jaw gripper; one instance runs many trials.

    Names are looked up once here; work arrays are reused; :func:`mujoco.mj_resetData` runs
    before every trial, so a trial's outcome depends only on its inputs. The trial loop is
    :meth:`PickScene.run_trial`; jaws are "on" the cube when each pad's touch sensor reads
    a force (any contact, a pad on the cube's top included).
    """

    def __init__(self, params: GripperTableParams) -> None:
        self.params = p = params
        self.model = m = build_gripper_table_model(p)
        self.data = mujoco.MjData(m)
        self._init_cube(p.cube_size_m)
        self.hand_qadr = [int(m.jnt_qposadr[m.joint(n).id]) for n in ("hand_x", "hand_y", "hand_z")]
        self.finger_qadr = [
            int(m.jnt_qposadr[m.joint(n).id]) for n in ("finger_left", "finger_right")
        ]
        self.act_hand = [m.actuator(n).id for n in ("hand_x", "hand_y", "hand_z")]
        self.act_finger = [m.actuator(n).id for n in ("finger_left", "finger_right")]
        self.touch_adr = tuple(
            int(m.sensor_adr[m.sensor(n).id]) for n in ("touch_left", "touch_right", "touch_palm")
        )
        timing = p.timing
        self.home = (0.22, 0.0, p.cube_size_m + p.approach_clearance_m + p.pad_height_m + 0.03)
        self.controller = ctl = PickController(
            timing,
            home_xyz=self.home,
            z_above_m=p.cube_size_m + p.approach_clearance_m + p.pad_height_m,
            z_grasp_m=p.grasp_clearance_m + p.pad_height_m,
            lift_m=p.lift_m,
            open_half_m=p.jaw_opening_m / 2.0,
            shoulder_z_m=p.arm_shoulder_z_m,
            reach_m=p.arm_reach_m,
        )
        self._init_ticks(p.control_hz, p.timestep_s, ctl.n_ticks)
        self.loose_tick = sum(ctl.phase_ticks[:3]) - 1  # last tick of the close phase
        self.lift_start_tick = ctl.first_tick("lift")
        self.strict_lift_m = p.strict_lift_m

    def plan(self, aim_x_m: float, aim_y_m: float, yaw_rad: float) -> np.ndarray:
        """The controller's set points at every tick as control rows (it ignores the yaw)."""
        ctrl = np.zeros((self.n_ticks, self.model.nu))
        (ax, ay, az), (fl, fr) = self.act_hand, self.act_finger
        for tick in range(self.n_ticks):
            hx, hy, hz, q = self.controller.setpoint(tick, aim_x_m, aim_y_m)
            ctrl[tick, [ax, ay, az, fl, fr]] = (hx, hy, hz, q, q)
        return ctrl

    def reset(self, x_m: float, y_m: float, yaw_rad: float) -> None:
        """Cube resting at (x, y) with yaw; gripper open at its home pose."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self.place_cube(x_m, y_m, yaw_rad)
        for adr, act, v in zip(self.hand_qadr, self.act_hand, self.home, strict=True):
            d.qpos[adr] = v
            d.ctrl[act] = v
        for adr, act in zip(self.finger_qadr, self.act_finger, strict=True):
            d.qpos[adr] = self.params.jaw_opening_m / 2.0
            d.ctrl[act] = self.params.jaw_opening_m / 2.0
        mujoco.mj_forward(m, d)

    def jaw_contacts(self) -> tuple[bool, bool]:
        """(any gripper geom touches the cube, both pads touch it), from the touch sensors."""
        sd, (il, ir, ip) = self.data.sensordata, self.touch_adr
        left, right = sd[il] > 0.0, sd[ir] > 0.0
        return bool(left or right or sd[ip] > 0.0), bool(left and right)

    def failure(self, success: bool, trace: TrialTrace) -> str:
        """missed / pushed / dropped by :func:`failure_type`: dropped = lifted ``lifted_min_m``."""
        return failure_type(success, trace.touched, trace.max_lift_m >= self.params.lifted_min_m)

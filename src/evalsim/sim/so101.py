"""The SO-101 arm scene: lesson 16's scripted pick on the SO-101 arm, a table and a cube.

The model (the published arm, a table and a cube, and what is changed on the arm) and its
parameters are :mod:`evalsim.sim.so101_model`.

The scripted pick (lesson 16), decided once per trial from the *perceived* cube position:
inverse kinematics (damped least squares on the ``grasp`` site, orientation weighted
``ik_orientation_weight``) puts the jaw's closing axis along the cube face normal nearest the
arm's neutral wrist roll, pointing down, tilted in the arm's vertical plane by the first angle
of :data:`TILTS_DEG` for which the position is reached. The grasp pose is solved first, then
the poses above it (pre-grasp and lift), each starting from the grasp solution ("solve
upward": a generic start sticks at joint limits). The joint set points then follow
smoothstep ramps through the phases ``move`` (home to above the cube), ``settle``,
``descend``, ``close`` (gripper set point ramped shut; the torque limit sets the grip),
``squeeze``, ``lift`` (by ``lift_m``) and ``hold``. With a control latency ``latency_s`` > 0
(the "real" twin's bus and servo delay, :mod:`evalsim.sim.twin`), every set point reaches the
servos ``round(latency_s * control_hz)`` ticks late: the first set point is held meanwhile and
the hold is as much shorter.

Success tests and failure types, from the contacts and the cube's pose (config/README.md):

- *both jaws on the cube*: each pad has a contact with the cube whose normal is near
  horizontal (``|n_z| < 0.5``). A pad resting on the cube's top is not "on" it;
- strict: after the hold, the cube's lowest point is at least ``strict_lift_m`` above the
  table and both jaws are on the cube;
- loose: both jaws on the cube at the end of the squeeze (the jaw settled), or strict;
- failure types (:func:`so101_failure_type`): missed -- no pad touched the cube at any control
  tick; pushed -- touched, but both jaws were never on the cube at the same tick; dropped --
  both jaws were on the cube, and at the end they are not (the cube left the jaws); held_low
  -- both jaws on the cube at the end, its lowest corner below the strict line.

A trial ends early once its outcome is decided (:meth:`SO101Scene.decided`: pushed, at the end
of the squeeze; :meth:`SO101Scene.left_behind`: dropped, once the cube rests on the table out
of the rising jaws' reach); its ``lift_height_m`` is then the cube's height at that tick.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from evalsim.sim.scene import PickScene, TrialTrace
from evalsim.sim.so101_model import SO101Params, build_so101_model

#: Tilts (deg) tried in order by the IK, in the arm's vertical plane (+ = fingertips toward
#: the base); the first whose position error is below :data:`IK_TOL_M` is taken.
TILTS_DEG = (0.0, 10.0, -10.0, 20.0, -20.0, 30.0, -30.0)
IK_TOL_M = 1e-3
#: Clearance (m) between the pads' lowest corners and a dropped cube's top beyond which the
#: rising jaws cannot reach it again (:meth:`SO101Scene.left_behind`).
LEFT_BEHIND_M = 0.005
#: A dropped cube is left behind once its speed is below this (m/s): it has come to rest, so
#: the early end records its resting height.
RESTING_SPEED_M_S = 0.01
ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
PHASES = ("move", "settle", "descend", "close", "squeeze", "lift", "hold")


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` (rad) about the unit ``axis`` (Rodrigues)."""
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def _sum_column_cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sum_k cross(a[:, k], b[:, k])`` for 3 x 3 ``a``, ``b``: the same operations, in the
    same order, as three :func:`numpy.cross` calls and their sum (bit for bit), on Python
    floats (numpy's overhead on arrays this small was most of the IK's time)."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = a.tolist()
    (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = b.tolist()
    return np.array(
        [
            (a10 * b20 - a20 * b10) + (a11 * b21 - a21 * b11) + (a12 * b22 - a22 * b12),
            (a20 * b00 - a00 * b20) + (a21 * b01 - a01 * b21) + (a22 * b02 - a02 * b22),
            (a00 * b10 - a10 * b00) + (a01 * b11 - a11 * b01) + (a02 * b12 - a12 * b02),
        ]
    )


def _index(adr: np.ndarray) -> slice | np.ndarray:
    """``adr`` as a slice when its addresses are consecutive (cheaper to index with), else
    itself; either selects the same elements."""
    if len(adr) and np.array_equal(adr, np.arange(adr[0], adr[0] + len(adr))):
        return slice(int(adr[0]), int(adr[0]) + len(adr))
    return adr


def moving_pad_reach_m(
    model: mujoco.MjModel, angle_rad: float, data: mujoco.MjData | None = None
) -> float:
    """How far the moving pad's nearest point lies from the ``grasp`` site along the closing
    axis (the site's x, toward the moving jaw) with the gripper at ``angle_rad``, in m.

    The pad and the site ride on the gripper, so the arm's pose does not matter; the model's
    reference pose is used. Of the pad box's eight corners, the one nearest the site counts.
    ``data``: a scratch :class:`mujoco.MjData` in the reference pose to reuse (a new one when
    None); only its gripper angle and kinematics are written.
    """
    d = mujoco.MjData(model) if data is None else data
    d.qpos[model.jnt_qposadr[model.joint("gripper").id]] = angle_rad
    mujoco.mj_kinematics(model, d)
    site, pad = model.site("grasp").id, model.geom("moving_jaw_pad").id
    r_site = d.site_xmat[site].reshape(3, 3)
    r_pad = d.geom_xmat[pad].reshape(3, 3)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    corners = d.geom_xpos[pad] + (signs * model.geom_size[pad]) @ r_pad.T
    return float(np.min((corners - d.site_xpos[site]) @ r_site[:, 0]))


def open_angle_for_clearance(
    model: mujoco.MjModel, half_cube_m: float, clearance_m: float
) -> float:
    """The gripper angle (rad) at which the moving pad's nearest point is ``clearance_m``
    beyond a cube face ``half_cube_m`` from the grasp site (bisection: the reach rises with
    the angle over the joint's range). Raises ValueError when no angle of the range reaches
    it."""
    lo, hi = (float(v) for v in model.jnt_range[model.joint("gripper").id])
    target = half_cube_m + clearance_m
    lo = max(lo, 0.0)  # below 0 rad the pad has passed the closing axis's centre
    scratch = mujoco.MjData(model)  # one for the whole bisection

    def reach(angle: float) -> float:
        return moving_pad_reach_m(model, angle, scratch)

    if not reach(lo) <= target <= reach(hi):
        raise ValueError(
            f"scene.so101.open_clearance_m = {clearance_m!r} is out of the gripper's reach "
            f"(angles {lo:.2f}-{hi:.2f} rad)"
        )
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if reach(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class SO101Scene(PickScene):
    """SO-101 arm, table and cube; one instance runs many trials (see the module docstring).

    Names are looked up once; :func:`mujoco.mj_resetData` runs before every trial, so a
    trial's outcome depends only on its inputs. The trial loop is
    :meth:`evalsim.sim.scene.PickScene.run_trial`.
    """

    def __init__(self, params: SO101Params) -> None:
        self.params = p = params
        self.model = m = build_so101_model(p)
        self.data = mujoco.MjData(m)
        self._ik = mujoco.MjData(m)
        self._init_cube(p.cube_size_m)
        self.pads = (m.geom("fixed_jaw_pad").id, m.geom("moving_jaw_pad").id)
        self.cube_dadr = int(m.jnt_dofadr[m.joint("cube_free").id])
        self.arm_qadr = np.array([m.jnt_qposadr[m.joint(n).id] for n in ARM_JOINTS])
        self.arm_dadr = np.array([m.jnt_dofadr[m.joint(n).id] for n in ARM_JOINTS])
        self.arm_range = np.array([m.jnt_range[m.joint(n).id] for n in ARM_JOINTS])
        self._arm_q, self._arm_d = _index(self.arm_qadr), _index(self.arm_dadr)
        self._ik_damping = 1e-4 * np.eye(6)  # the IK's lambda^2 I
        self.grip_qadr = int(m.jnt_qposadr[m.joint("gripper").id])
        self.arm_act = np.array([m.actuator(n).id for n in ARM_JOINTS])
        self.grip_act = m.actuator("gripper").id
        self.site = m.site("grasp").id
        self.open_rad = (
            p.gripper_open_rad
            if p.open_clearance_m is None
            else open_angle_for_clearance(m, p.cube_size_m / 2.0, p.open_clearance_m)
        )
        self.pan_xy = np.array(m.body("shoulder").pos[:2])  # pan axis in the base frame
        self.phase_ticks = tuple(max(1, round(s * p.control_hz)) for s in p.phase_s)
        self._init_ticks(p.control_hz, p.timestep_s, sum(self.phase_ticks))
        self.tick_squeezed = self.loose_tick = self.decide_tick = sum(self.phase_ticks[:5]) - 1
        self.lift_start_tick = sum(self.phase_ticks[:5])
        self.strict_lift_m = p.strict_lift_m
        # from the lift on, the gripper holds with grip_hold_fraction of its closing torque
        # (the servo's overload protection); reset() restores the closing torque
        self.grip_torque_close_nm = p.grip_torque_nm
        self.grip_torque_hold_nm = p.grip_torque_nm * p.grip_hold_fraction
        self.tick_hooks = {self.lift_start_tick: self._hold_torque}
        self.surface_varies = p.pad_friction_sd > 0.0
        # home: the grasp pose above the workspace centre, lifted (solved once)
        self.q_home = np.zeros(len(ARM_JOINTS))
        self.q_home[1], self.q_home[2] = -0.3, 0.3
        cx, cy = 0.22, 0.0
        q, _ = self.solve_grasp(cx, cy, 0.0, self.half + p.grasp_above_centre_m + 0.12)
        self.q_home = q

    # ---- inverse kinematics ---------------------------------------------------------------
    def _target_rot(self, x: float, y: float, psi: float, tilt: float) -> np.ndarray:
        """Target frame of the grasp site: x = closing axis at yaw ``psi``, z = up, tilted."""
        xa = np.array([math.cos(psi), math.sin(psi), 0.0])
        za = np.array([0.0, 0.0, 1.0])
        r = np.column_stack([xa, np.cross(za, xa), za])
        phi = math.atan2(y - self.pan_xy[1], x - self.pan_xy[0])
        axis = np.array([-math.sin(phi), math.cos(phi), 0.0])
        return _rot(axis, -tilt) @ r

    def ik(
        self, target: np.ndarray, rot: np.ndarray, q0: np.ndarray, iters: int = 60
    ) -> tuple[np.ndarray, float]:
        """Damped-least-squares IK of the grasp site; returns (joint angles, position error m).

        Work arrays are filled in place and the damping matrix is built once: the same
        operations on the same values as stacking them anew each iteration (bit for bit), with
        less overhead (the IK was a seventh of a trial's time).
        """
        m, d = self.model, self._ik
        w = self.params.ik_orientation_weight
        q = q0.copy()
        jp = np.zeros((3, m.nv))
        jr = np.zeros((3, m.nv))
        # column-major, as numpy.vstack of the fancy-indexed Jacobian rows was: jac.T @ x then
        # runs the same BLAS kernel, so the same rounding
        jac = np.empty((6, len(ARM_JOINTS)), order="F")
        e = np.empty(6)
        damping = self._ik_damping
        err_p = math.inf
        lo, hi = self.arm_range[:, 0], self.arm_range[:, 1]
        qi, di, site = self._arm_q, self._arm_d, self.site
        for _ in range(iters):
            d.qpos[qi] = q
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            pos = d.site_xpos[site]
            cur = d.site_xmat[site].reshape(3, 3)
            ep = target - pos
            er = 0.5 * _sum_column_cross(cur, rot)
            err_p = math.sqrt(float(ep.dot(ep)))  # numpy.linalg.norm's own operations
            if err_p < 1e-4 and math.sqrt(float(er.dot(er))) < 1e-3:
                break
            mujoco.mj_jacSite(m, d, jp, jr, site)
            jac[:3] = jp[:, di]
            jac[3:] = w * jr[:, di]
            e[:3] = ep
            e[3:] = w * er
            dq = jac.T @ np.linalg.solve(jac @ jac.T + damping, e)
            q = np.clip(q + dq, lo, hi)
        return q, err_p

    def _face_yaw(self, x: float, y: float, yaw: float) -> float:
        """The closing-axis yaw along a cube face normal nearest the arm's neutral roll."""
        phi = math.atan2(y - self.pan_xy[1], x - self.pan_xy[0])
        neutral = phi + math.pi / 2.0
        k = round((neutral - yaw) / (math.pi / 2.0))
        return yaw + k * math.pi / 2.0

    def solve_grasp(
        self, x: float, y: float, yaw: float, z: float
    ) -> tuple[np.ndarray, tuple[float, float]]:
        """Grasp joint angles for the site at (x, y, z); returns (q, (psi, tilt))."""
        psi = self._face_yaw(x, y, yaw)
        q0 = self.q_home.copy()
        q0[0] = math.atan2(y - self.pan_xy[1], x - self.pan_xy[0])  # pan toward the cube
        best = None
        for tdeg in TILTS_DEG:
            tilt = math.radians(tdeg)
            q, err = self.ik(np.array([x, y, z]), self._target_rot(x, y, psi, tilt), q0)
            if best is None or err < best[1]:
                best = (q, err, tilt)
            if err < IK_TOL_M:
                break
        return best[0], (psi, best[2])

    def plan(self, aim_x: float, aim_y: float, yaw: float) -> np.ndarray:
        """Control set points (n_ticks x nu) of the whole pick at the perceived position."""
        p = self.params
        z = self.half + p.grasp_above_centre_m
        q_grasp, (psi, tilt) = self.solve_grasp(aim_x, aim_y, yaw, z)
        rot = self._target_rot(aim_x, aim_y, psi, tilt)
        q_above, _ = self.ik(np.array([aim_x, aim_y, z + p.above_m]), rot, q_grasp)
        q_lift, _ = self.ik(np.array([aim_x, aim_y, z + p.lift_m]), rot, q_grasp)
        g_open, g_shut = self.open_rad, p.gripper_closed_rad
        legs = (
            (self.q_home, q_above, g_open, g_open),  # move
            (q_above, q_above, g_open, g_open),  # settle
            (q_above, q_grasp, g_open, g_open),  # descend
            (q_grasp, q_grasp, g_open, g_shut),  # close (ramped)
            (q_grasp, q_grasp, g_shut, g_shut),  # squeeze
            (q_grasp, q_lift, g_shut, g_shut),  # lift
            (q_lift, q_lift, g_shut, g_shut),  # hold
        )
        # smoothstep s(u) = u^2 (3 - 2u), u = (j + 1) / n on tick j of an n-tick phase: whole
        # phases at once, the same operations per element as a row at a time
        ctrl = np.zeros((self.n_ticks, self.model.nu))
        row = 0
        for n, (qa, qb, ga, gb) in zip(self.phase_ticks, legs, strict=True):
            u = np.arange(1, n + 1) / n
            s = u * u * (3.0 - 2.0 * u)
            ctrl[row : row + n, self.arm_act] = qa + s[:, None] * (qb - qa)
            ctrl[row : row + n, self.grip_act] = ga + s * (gb - ga)
            row += n
        lag = round(p.latency_s * p.control_hz)
        if lag > 0:  # set points arrive ``lag`` ticks late; the trial keeps its length
            ctrl = np.concatenate([np.repeat(ctrl[:1], lag, axis=0), ctrl[:-lag]])
        return ctrl

    # ---- one trial ------------------------------------------------------------------------
    def reset(self, x_m: float, y_m: float, yaw_rad: float) -> None:
        """Cube resting at (x, y) with yaw; arm at home with the gripper open."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self.place_cube(x_m, y_m, yaw_rad)
        d.qpos[self.arm_qadr] = self.q_home
        d.qpos[self.grip_qadr] = self.open_rad
        d.ctrl[self.arm_act] = self.q_home
        d.ctrl[self.grip_act] = self.open_rad
        m.actuator_forcerange[self.grip_act] = (
            -self.grip_torque_close_nm,
            self.grip_torque_close_nm,
        )
        mujoco.mj_forward(m, d)

    def set_surface(self, z: float) -> None:
        """This trial's pad-cube friction, ``pad_friction * exp(pad_friction_sd * z)``: the
        cube's and the pads' surface condition (dust, skin oil, wear) varies from trial to
        trial; a low draw lets a held cube slip out, whatever the aim."""
        p = self.params
        mu = p.pad_friction * math.exp(p.pad_friction_sd * z)
        self.model.geom_friction[list(self.pads), 0] = mu

    def _hold_torque(self) -> None:
        t = self.grip_torque_hold_nm
        self.model.actuator_forcerange[self.grip_act] = (-t, t)

    def jaw_contacts(self) -> tuple[bool, bool]:
        """(a pad touches the cube, both pads touch it with a near-horizontal normal).

        A plain loop over the few active contacts (a handful): cheaper than numpy on arrays
        this small.
        """
        d = self.data
        if d.ncon == 0:
            return False, False
        con = d.contact
        fixed, moving = self.pads
        cube = self.cube_geom
        touch = on_fixed = on_moving = False
        for (g1, g2), nz in zip(con.geom.tolist(), con.frame[:, 2].tolist(), strict=True):
            other = g2 if g1 == cube else g1 if g2 == cube else -1
            if other != fixed and other != moving:
                continue
            touch = True
            if abs(nz) < 0.5:
                if other == fixed:
                    on_fixed = True
                else:
                    on_moving = True
        return touch, on_fixed and on_moving

    def decided(self, trace: TrialTrace) -> bool:
        """At the end of the squeeze, *pushed* is decided: a pad touched the cube but both
        jaws were never on it, and the jaws are now shut and only rise, so they cannot close on
        the cube any more; the trial ends there (faster pools, issue 22 item 6; its
        ``lift_height_m`` is the cube's height at that tick). *Missed* is not decided there:
        a rising pad can still brush the cube (1 of 300 trials at sigma 9 and 20 mm)."""
        return trace.touched and not trace.both_ever

    def left_behind(self) -> bool:
        """The cube was dropped for good: it has come to rest (speed below
        :data:`RESTING_SPEED_M_S`) and both pads' lowest corners are more than
        :data:`LEFT_BEHIND_M` above its highest corner. Called from the lift on, for a
        cube that was held and now rests on the table: the set points only rise from there,
        and only the pads collide with the cube, so neither jaw can be on it at the end (it is
        *dropped*); the trial ends there (faster pools; its ``lift_height_m`` is the cube's
        height at that tick)."""
        d = self.data
        v = d.qvel[self.cube_dadr : self.cube_dadr + 3]
        if float(v.dot(v)) > RESTING_SPEED_M_S**2:  # still falling or sliding
            return False
        top = 2.0 * float(d.xpos[self.cube_body, 2]) - self._cube_bottom_m()
        for g in self.pads:
            r = d.geom_xmat[g]
            size = self.model.geom_size[g]
            low = d.geom_xpos[g, 2] - (
                abs(r[6]) * size[0] + abs(r[7]) * size[1] + abs(r[8]) * size[2]
            )
            if low < top + LEFT_BEHIND_M:
                return False
        return True

    def failure(self, success: bool, trace: TrialTrace) -> str:
        """The failure type from what happened: :func:`so101_failure_type`."""
        return so101_failure_type(success, trace)


def so101_failure_type(success: bool, trace: TrialTrace) -> str:
    """The SO-101's failure types, decided by what happened in the trial.

    - ``missed``: no pad touched the cube at any control tick;
    - ``pushed``: a pad touched it, but both jaws were never on it at the same tick;
    - ``dropped``: both jaws were on it at some tick, and at the end they are not: the cube
      left the jaws (it ends on the table, or rarely propped on a jaw);
    - ``held_low``: both jaws are on the cube at the end, but its lowest corner is below the
      strict line: held, yet pivoted in the jaws or gripped too low to clear it.

    Parameters
    ----------
    success : bool
        The strict test passed.
    trace : TrialTrace
        What the trial loop recorded.

    Returns
    -------
    str
        One of :data:`evalsim.sim.scene.FAILURES`.
    """
    if success:
        return "none"
    if not trace.touched:
        return "missed"
    if not trace.both_ever:
        return "pushed"
    return "held_low" if trace.both_end else "dropped"

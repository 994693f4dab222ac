"""The scripted pick: one readable phase machine.

The controller sees only the *perceived* cube position (true position plus perception error);
it never reads the true pose. It acts at ``control_hz`` (50 Hz by default): at each tick it
returns the hand set point (x, y, z of the pad tops, m) and the finger set point (half
opening, m) for the position servos of the scene.

Phases, in order (durations in s, from the config ``scene`` section):

``approach``  move from the home pose to above the perceived cube position (smooth ramp);
``descend``   lower the pads until their bottoms are ``grasp_clearance_m`` above the table;
``close``     drive both fingers shut; the grip force is the fingers' force limit. The loose
              test is taken when this phase has settled (its last tick);
``lift``      raise the hand by ``lift_m``;
``hold``      keep still; the strict test is taken at the end.

The hand is carried by an arm whose shoulder joint stands at height ``shoulder_z_m`` above
the robot's base at the origin of the table frame, with reach ``reach_m`` from the shoulder
to the pad tops. The arm cannot put the pad tops below the lower cap of that sphere,
``z_floor(r) = shoulder_z_m - sqrt(reach_m**2 - r**2)`` at horizontal distance ``r`` from the
base (the shoulder height when ``r >= reach_m``). Every set point is raised to that floor,
as an inverse-kinematics solver returns the nearest reachable point: far out, the scripted
pick descends only as low as the arm reaches, so the pads close on the upper part of the
cube (or above it), whatever the aim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PHASES = ("approach", "descend", "close", "lift", "hold")


def _smoothstep(u: float) -> float:
    """C1 ramp from 0 to 1 on [0, 1] (zero velocity at both ends)."""
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * (3.0 - 2.0 * u)


@dataclass(frozen=True)
class PickTiming:
    """Phase durations (s) and the control rate (Hz); the gripper/table scene's values are
    :attr:`evalsim.sim.scene.GripperTableParams.timing`."""

    control_hz: float
    approach_s: float
    descend_s: float
    close_s: float
    lift_s: float
    hold_s: float

    @property
    def durations(self) -> tuple[float, ...]:
        return (self.approach_s, self.descend_s, self.close_s, self.lift_s, self.hold_s)

    def ticks(self) -> tuple[int, ...]:
        """Number of control ticks in each phase."""
        return tuple(max(1, round(d * self.control_hz)) for d in self.durations)


class PickController:
    """Set points of the scripted pick for one trial.

    Parameters
    ----------
    timing : PickTiming
        Phase durations and control rate.
    home_xyz : tuple of float
        Hand position (m) at the start of the trial.
    z_above_m : float
        Hand height (pad tops, m) while moving above the cube.
    z_grasp_m : float
        Hand height (pad tops, m) at the bottom of the descent.
    lift_m : float
        How far the hand rises in the lift phase (m).
    open_half_m : float
        Finger set point when open: half the jaw opening (m).
    shoulder_z_m, reach_m : float
        The arm's shoulder height above the base (m) and its reach from the shoulder to the
        pad tops (m); see :meth:`z_floor`. ``reach_m = inf`` means no reach limit.
    """

    def __init__(
        self,
        timing: PickTiming,
        home_xyz: tuple[float, float, float],
        z_above_m: float,
        z_grasp_m: float,
        lift_m: float,
        open_half_m: float,
        shoulder_z_m: float = 0.4,
        reach_m: float = math.inf,
    ) -> None:
        self.timing = timing
        self.home_xyz = home_xyz
        self.z_above_m = z_above_m
        self.z_grasp_m = z_grasp_m
        self.lift_m = lift_m
        self.open_half_m = open_half_m
        self.shoulder_z_m = shoulder_z_m
        self.reach_m = reach_m
        self.phase_ticks = timing.ticks()
        # schedule[i] = (phase index, fraction of that phase done after tick i)
        self.schedule: list[tuple[int, float]] = []
        for p, n in enumerate(self.phase_ticks):
            self.schedule.extend((p, (j + 1) / n) for j in range(n))

    @property
    def n_ticks(self) -> int:
        return len(self.schedule)

    def z_floor(self, x: float, y: float) -> float:
        """Lowest pad-top height (m) the arm reaches above the table point (x, y) (m)."""
        r2 = x * x + y * y
        if r2 >= self.reach_m * self.reach_m:
            return self.shoulder_z_m
        return self.shoulder_z_m - math.sqrt(self.reach_m * self.reach_m - r2)

    def setpoint(self, tick: int, aim_x: float, aim_y: float) -> tuple[float, float, float, float]:
        """Hand (x, y, z) and finger half-opening set points (m) for control tick ``tick``.

        The scripted set point, raised to :meth:`z_floor` where the arm cannot reach it.
        """
        x, y, z, q = self._scripted(tick, aim_x, aim_y)
        return x, y, max(z, self.z_floor(x, y)), q

    def _scripted(self, tick: int, aim_x: float, aim_y: float) -> tuple[float, float, float, float]:
        phase, u = self.schedule[tick]
        hx, hy, hz = self.home_xyz
        if phase == 0:  # approach
            s = _smoothstep(u)
            return (
                hx + s * (aim_x - hx),
                hy + s * (aim_y - hy),
                hz + s * (self.z_above_m - hz),
                self.open_half_m,
            )
        if phase == 1:  # descend
            s = _smoothstep(u)
            z = self.z_above_m + s * (self.z_grasp_m - self.z_above_m)
            return aim_x, aim_y, z, self.open_half_m
        if phase == 2:  # close: finger set point fully shut, the force limit sets the grip
            return aim_x, aim_y, self.z_grasp_m, 0.0
        if phase == 3:  # lift
            return aim_x, aim_y, self.z_grasp_m + _smoothstep(u) * self.lift_m, 0.0
        return aim_x, aim_y, self.z_grasp_m + self.lift_m, 0.0  # hold

    def is_close_settled(self, tick: int) -> bool:
        """True on the last tick of the close phase (when the loose test is taken)."""
        return tick == sum(self.phase_ticks[:3]) - 1

    def first_tick(self, phase: str) -> int:
        """Index of the first control tick of ``phase``."""
        return sum(self.phase_ticks[: PHASES.index(phase)])

    def phase_of(self, tick: int) -> str:
        return PHASES[self.schedule[tick][0]]

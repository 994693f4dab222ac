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
"""

from __future__ import annotations

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
    """Phase durations (s) and the control rate (Hz)."""

    control_hz: float = 50.0
    approach_s: float = 0.3
    descend_s: float = 0.4
    close_s: float = 0.4
    lift_s: float = 0.4
    hold_s: float = 1.0

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
    """

    def __init__(
        self,
        timing: PickTiming,
        home_xyz: tuple[float, float, float],
        z_above_m: float,
        z_grasp_m: float,
        lift_m: float,
        open_half_m: float,
    ) -> None:
        self.timing = timing
        self.home_xyz = home_xyz
        self.z_above_m = z_above_m
        self.z_grasp_m = z_grasp_m
        self.lift_m = lift_m
        self.open_half_m = open_half_m
        self.phase_ticks = timing.ticks()
        # schedule[i] = (phase index, fraction of that phase done after tick i)
        self.schedule: list[tuple[int, float]] = []
        for p, n in enumerate(self.phase_ticks):
            self.schedule.extend((p, (j + 1) / n) for j in range(n))

    @property
    def n_ticks(self) -> int:
        return len(self.schedule)

    def setpoint(self, tick: int, aim_x: float, aim_y: float) -> tuple[float, float, float, float]:
        """Hand (x, y, z) and finger half-opening set points (m) for control tick ``tick``."""
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

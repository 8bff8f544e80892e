"""The simulated gimbal's mechanics: two axes that slew at a limited rate within their end stops.

A camera gimbal is not instant: a SIYI A8 mini-class gimbal turns at roughly 60-90 deg/s and
its yaw stops short of a full circle, so a look-around that points it waits for it like it
waits for a turning vehicle. This module holds only that: where the axes are, where they are
asked to go (an angle, a rate, or both: "go there at this rate"), and one fixed step of motion.
Pitch is from the horizon (the gimbal stabilises it); yaw is held relative to the vehicle's
nose, and a target given relative to north is re-aimed against the vehicle's heading on every
step, so a yaw-locked camera keeps looking the same way while the vehicle turns under it. The
MAVLink gimbal protocol v2 around it is `gimbal_manager.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GimbalSpec:
    """End stops and slew rates; the yaw stops are relative to the vehicle's nose."""

    pitch_min_deg: float = -90.0
    pitch_max_deg: float = 30.0
    yaw_min_deg: float = -160.0
    yaw_max_deg: float = 160.0
    pitch_rate_deg_s: float = 60.0
    yaw_rate_deg_s: float = 90.0


@dataclass(frozen=True)
class AxisTarget:
    """One axis's goal: an angle (None: none), and a rate to get there or to turn at (None: the axis's most)."""

    angle_deg: float | None = None
    rate_deg_s: float | None = None


def wrap180(deg: float) -> float:
    """An angle in -180..180 degrees."""
    return (deg + 180.0) % 360.0 - 180.0


def _clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


class GimbalDevice:
    """Pitch and body-relative yaw, moved toward their targets by `step`."""

    def __init__(self, spec: GimbalSpec | None = None) -> None:
        self.spec = spec or GimbalSpec()
        self.pitch_deg = 0.0
        self.yaw_body_deg = 0.0
        self.pitch_rate_deg_s = 0.0  # as moved in the last step (the attitude status's angular velocity)
        self.yaw_rate_deg_s = 0.0
        self.pitch_target = AxisTarget(0.0)
        self.yaw_target = AxisTarget(0.0)
        self.yaw_in_earth_frame = False  # the yaw target's angle is from north (yaw lock), else from the nose

    def set_target(self, pitch: AxisTarget | None, yaw: AxisTarget | None, yaw_in_earth_frame: bool) -> None:
        """New goals; an axis given None keeps its own."""
        if pitch is not None:
            self.pitch_target = pitch
        if yaw is not None:
            self.yaw_target = yaw
            self.yaw_in_earth_frame = yaw_in_earth_frame

    def yaw_north_deg(self, vehicle_yaw_deg: float) -> float:
        """The camera's heading, 0..360 clockwise from north."""
        return (vehicle_yaw_deg + self.yaw_body_deg) % 360.0

    def step(self, dt: float, vehicle_yaw_deg: float) -> None:
        s = self.spec
        before = (self.pitch_deg, self.yaw_body_deg)
        self.pitch_deg = self._move(self.pitch_deg, self.pitch_target, None, s.pitch_min_deg, s.pitch_max_deg,
                                    s.pitch_rate_deg_s, dt)
        yaw_goal = self.yaw_target.angle_deg
        if yaw_goal is not None and self.yaw_in_earth_frame:
            yaw_goal = wrap180(yaw_goal - vehicle_yaw_deg)
        self.yaw_body_deg = self._move(self.yaw_body_deg, self.yaw_target, yaw_goal, s.yaw_min_deg, s.yaw_max_deg,
                                       s.yaw_rate_deg_s, dt)
        self.pitch_rate_deg_s = (self.pitch_deg - before[0]) / dt if dt > 0 else 0.0
        self.yaw_rate_deg_s = (self.yaw_body_deg - before[1]) / dt if dt > 0 else 0.0

    @staticmethod
    def _move(now: float, target: AxisTarget, goal: float | None, lo: float, hi: float, most_deg_s: float,
              dt: float) -> float:
        """One axis, one step: toward the goal angle at the rate asked (at most the axis's), or at the rate alone.

        Yaw cannot wrap through its end stops: a goal beyond one is reached the long way round or not at all
        (held at the stop), as on the real mechanism.
        """
        goal = target.angle_deg if goal is None else goal
        rate = most_deg_s if target.rate_deg_s is None else min(abs(target.rate_deg_s), most_deg_s)
        if goal is not None:
            goal = _clamp(goal, lo, hi)
            d = goal - now
            return goal if abs(d) <= rate * dt else now + math.copysign(rate * dt, d)
        if target.rate_deg_s is None:
            return now
        return _clamp(now + math.copysign(rate * dt, target.rate_deg_s), lo, hi)

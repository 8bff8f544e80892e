"""What the agent may ask the vehicle to do, as plain values.

An intent is data, not a call: the safety envelope can inspect, clamp or
refuse it before anything reaches MAVSDK, and the setpoint streamer can keep
re-sending the latest one without asking the agent again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PositionNed:
    """Hold a position, metres north/east/down of home (down negative = above home)."""

    north_m: float
    east_m: float
    down_m: float
    yaw_deg: float = 0.0

    @property
    def rel_alt_m(self) -> float:
        return -self.down_m


@dataclass(frozen=True)
class VelocityNed:
    """Fly a velocity, metres per second north/east/down."""

    north_m_s: float
    east_m_s: float
    down_m_s: float
    yaw_deg: float = 0.0

    @property
    def horizontal_m_s(self) -> float:
        return math.hypot(self.north_m_s, self.east_m_s)


@dataclass(frozen=True)
class GlobalTarget:
    """Go to a geodetic point at an altitude above home (goto / reposition)."""

    lat: float
    lon: float
    rel_alt_m: float
    yaw_deg: float = float("nan")


Intent = PositionNed | VelocityNed


def yaw_error_deg(a: float, b: float) -> float:
    """The unsigned angle between two headings, degrees (0..180); NaN when either is unknown."""
    return abs((a - b + 180.0) % 360.0 - 180.0)

"""Compass bearings of east/north vectors in the world's local frame.

The lat/lon <-> metres conversion itself is `contract.geodesy` (PX4's local
projection, shared by every process); this is only how the world names the
directions of vectors it already has in metres.
"""

from __future__ import annotations

import math

COMPASS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def bearing_deg(dx: float, dy: float) -> float:
    """Compass bearing of the vector (east dx, north dy): 0 = north, 90 = east."""
    return math.degrees(math.atan2(dx, dy)) % 360.0


def compass8(bearing: float) -> str:
    """The 8-point compass abbreviation (N, NE, ...) nearest to a bearing in degrees."""
    return COMPASS8[int(((bearing % 360.0) + 22.5) // 45.0) % 8]


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two bearings, degrees in [0, 180]."""
    d = (a - b) % 360.0
    return min(d, 360.0 - d)

"""Compass bearings of east/north vectors in a local metric frame, and their 8-point words.

The one copy: the map's corridor moves, the agent's own frame, perception's
geo-instruction and the simulator all name directions with these, so an "NE"
means the same sector everywhere. The lat/lon <-> metres conversion itself is
`common.geodesy` (PX4's local projection, shared by every process); this is
only how directions of vectors already in metres are named.
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

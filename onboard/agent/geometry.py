"""Plane geometry in the agent's own frame: x east, y north, metres, origin = take-off point."""

from __future__ import annotations

import math

import numpy as np


def offset(bearing_deg: float, distance: float) -> np.ndarray:
    """East-north vector of a sighting or a move."""
    r = math.radians(bearing_deg)
    return np.array([distance * math.sin(r), distance * math.cos(r)])


def bearing_of(v: np.ndarray) -> float:
    """Compass bearing (deg clockwise from north) of an east-north vector."""
    return math.degrees(math.atan2(float(v[0]), float(v[1]))) % 360.0


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two bearings, 0..180."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def norm(v: np.ndarray) -> float:
    return float(math.hypot(float(v[0]), float(v[1])))

"""Plane geometry in the agent's own frame: x east, y north, metres, origin = take-off point."""

from __future__ import annotations

import math

import numpy as np

from onboard.map import compass


def offset(bearing_deg: float, distance: float) -> np.ndarray:
    """East-north vector of a sighting or a move."""
    r = math.radians(bearing_deg)
    return np.array([distance * math.sin(r), distance * math.cos(r)])


def bearing_of(v: np.ndarray) -> float:
    """Compass bearing (deg clockwise from north) of an east-north vector."""
    return compass.bearing_deg(float(v[0]), float(v[1]))


def norm(v: np.ndarray) -> float:
    return float(math.hypot(float(v[0]), float(v[1])))

"""Geodesy for a vehicle flying within a few kilometres of home.

A local tangent plane (north/east metres around home) is exact to well under
a metre over the distances a small drone covers, and keeps the envelope's
arithmetic simple enough to be obviously right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EARTH_RADIUS_M = 6_378_137.0  # WGS84 equatorial radius


@dataclass(frozen=True)
class GeoPoint:
    lat: float
    lon: float
    alt_amsl: float = 0.0


def ned_from_geo(origin: GeoPoint, lat: float, lon: float) -> tuple[float, float]:
    """North/east metres of (lat, lon) relative to ``origin``."""
    d_lat = math.radians(lat - origin.lat)
    d_lon = math.radians(lon - origin.lon)
    north = d_lat * EARTH_RADIUS_M
    east = d_lon * EARTH_RADIUS_M * math.cos(math.radians(origin.lat))
    return north, east


def geo_from_ned(origin: GeoPoint, north: float, east: float) -> tuple[float, float]:
    """(lat, lon) of a point ``north``/``east`` metres from ``origin``."""
    lat = origin.lat + math.degrees(north / EARTH_RADIUS_M)
    lon = origin.lon + math.degrees(east / (EARTH_RADIUS_M * math.cos(math.radians(origin.lat))))
    return lat, lon


def horizontal_distance_m(a_lat: float, a_lon: float, b_lat: float, b_lon: float) -> float:
    """Haversine distance; used where points may be far apart (e.g. a bad target)."""
    p1, p2 = math.radians(a_lat), math.radians(b_lat)
    dp = p2 - p1
    dl = math.radians(b_lon - a_lon)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def point_in_polygon(x: float, y: float, polygon: list[tuple[float, float]]) -> bool:
    """Even-odd rule; points exactly on an edge count as inside."""
    inside = False
    n = len(polygon)
    for i in range(n):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % n]
        if _on_segment(x, y, x1, y1, x2, y2):
            return True
        if (y1 > y) != (y2 > y):
            x_cross = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < x_cross:
                inside = not inside
    return inside


def closest_point_on_polygon(x: float, y: float, polygon: list[tuple[float, float]]) -> tuple[float, float]:
    """The nearest point of the polygon's boundary to (x, y)."""
    best, best_d = (polygon[0][0], polygon[0][1]), math.inf
    n = len(polygon)
    for i in range(n):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % n]
        dx, dy = x2 - x1, y2 - y1
        seg = dx * dx + dy * dy
        t = 0.0 if seg == 0 else max(0.0, min(1.0, ((x - x1) * dx + (y - y1) * dy) / seg))
        px, py = x1 + t * dx, y1 + t * dy
        d = (px - x) ** 2 + (py - y) ** 2
        if d < best_d:
            best, best_d = (px, py), d
    return best


def _on_segment(x: float, y: float, x1: float, y1: float, x2: float, y2: float, eps: float = 1e-9) -> bool:
    cross = (x - x1) * (y2 - y1) - (y - y1) * (x2 - x1)
    if abs(cross) > eps * max(1.0, abs(x2 - x1) + abs(y2 - y1)):
        return False
    return min(x1, x2) - eps <= x <= max(x1, x2) + eps and min(y1, y2) - eps <= y <= max(y1, y2) + eps

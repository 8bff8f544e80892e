"""Plane geometry of the geofence, in the local north/east metres of home.

The fence polygon is projected once into the home frame (common.geodesy),
so the envelope's inside/outside tests and its clamping are plain 2-D
arithmetic, simple enough to be obviously right.
"""

from __future__ import annotations

import math


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

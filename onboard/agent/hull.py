"""Convex outline of a point set: what a set of grid points looks like from the ground, in a few vertices.

The search region is hundreds of grid points; the link and the dashboard need
a shape. The convex hull (Andrew's monotone chain) is that shape, and
`fewest_vertices` keeps it within a vertex budget by dropping the vertices
whose loss shrinks the outline least (a dropped vertex cuts a corner off, so
the outline stays inside the hull and never claims ground it did not have).
"""

from __future__ import annotations

import numpy as np


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The hull's vertices counter-clockwise, shape (m, 2); fewer than 3 rows when the points are collinear."""
    pts = np.unique(np.asarray(points, dtype=float).reshape(-1, 2), axis=0)  # sorted by x, then y
    if len(pts) < 3:
        return pts
    # only the lowest and the highest point of each x can be a vertex: a grid region keeps its edge only
    new_x = np.r_[True, pts[1:, 0] != pts[:-1, 0]]
    last_x = np.r_[new_x[1:], True]
    pts = pts[new_x | last_x]

    def chain(seq: np.ndarray) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for p in seq:
            while len(out) >= 2 and _cross(out[-2], out[-1], p) <= 0.0:
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(pts), chain(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def fewest_vertices(ring: np.ndarray, most: int) -> np.ndarray:
    """`ring` (a convex outline, counter-clockwise) with at most `most` vertices (at least 3)."""
    ring = np.asarray(ring, dtype=float)
    most = max(3, most)
    while len(ring) > most:
        prev, nxt = np.roll(ring, 1, axis=0), np.roll(ring, -1, axis=0)
        # area of the corner each vertex adds: the triangle it makes with its neighbours
        corner = np.abs((ring[:, 0] - prev[:, 0]) * (nxt[:, 1] - prev[:, 1])
                        - (ring[:, 1] - prev[:, 1]) * (nxt[:, 0] - prev[:, 0]))
        ring = np.delete(ring, int(np.argmin(corner)), axis=0)
    return ring

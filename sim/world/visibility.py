"""Line-of-sight visibility of landmarks over 2D footprints extruded to heights.

A landmark is seen from a camera when it is within range and at least one
sight line from the camera to a point on its roof edge (its footprint
vertices and centroid, at `aim_fraction` of its height) passes above every
other building it crosses. Along a straight sight line the ray height changes
linearly, so a building blocks it exactly when the ray is below that
building's height somewhere inside its footprint; the lowest point of the ray
inside a convex or concave footprint is at an entry or exit of the footprint,
so checking the segment's crossings with the footprint edges is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onboard.map.city import Building

DEFAULT_RANGE_M = 500.0  # a building-sized landmark is a few pixels wide beyond this
AIM_FRACTION = 0.8  # aim at 80% of the landmark's height: seeing only a roof corner does not count


@dataclass
class Occluders:
    """All building footprint edges as flat arrays, for vectorised ray tests."""

    a: np.ndarray  # (E, 2) edge start
    b: np.ndarray  # (E, 2) edge end
    owner: np.ndarray  # (E,) building id of each edge
    height: np.ndarray  # (E,) that building's height

    @classmethod
    def from_buildings(cls, buildings: list[Building]) -> "Occluders":
        a = np.vstack([bd.footprint for bd in buildings])
        b = np.vstack([np.roll(bd.footprint, -1, axis=0) for bd in buildings])
        owner = np.concatenate([np.full(len(bd.footprint), bd.id) for bd in buildings])
        height = np.concatenate([np.full(len(bd.footprint), bd.height) for bd in buildings])
        return cls(a, b, owner, height)


def rays_blocked(cam: np.ndarray, cam_alt: float, targets: np.ndarray, target_alt: np.ndarray,
                 target_owner: np.ndarray, occ: Occluders) -> np.ndarray:
    """For each sight line cam -> target, does another building rise above it?

    The ray height is linear along the line, so it is lowest inside a footprint
    at one of the footprint's edges; testing the crossings with every edge is
    exact. Edges of the target's own building (`target_owner`) are skipped, and
    so is a building the camera stands inside (a passage under a building).
    """
    reach = float(np.max(np.hypot(*(targets - cam).T))) if len(targets) else 0.0
    near = (np.minimum(np.hypot(*(occ.a - cam).T), np.hypot(*(occ.b - cam).T)) <= reach + 1.0)
    a, e = occ.a[near], occ.b[near] - occ.a[near]
    owner, height = occ.owner[near], occ.height[near]
    blocked = np.zeros(len(targets), dtype=bool)
    w = a - cam  # (E, 2)
    for s in range(0, len(targets), 64):
        d = targets[s:s + 64] - cam  # (R, 2)
        denom = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
        safe = np.where(np.abs(denom) < 1e-12, np.inf, denom)
        t = (w[None, :, 0] * e[None, :, 1] - w[None, :, 1] * e[None, :, 0]) / safe
        u = (w[None, :, 0] * d[:, None, 1] - w[None, :, 1] * d[:, None, 0]) / safe
        z = cam_alt + t * (target_alt[s:s + 64, None] - cam_alt)
        hit = (t > 1e-9) & (t <= 1) & (u >= 0) & (u <= 1) & (z < height[None, :])
        hit &= owner[None, :] != target_owner[s:s + 64, None]
        blocked[s:s + 64] = hit.any(axis=1)
    return blocked


def point_in_polygon(p: np.ndarray, ring: np.ndarray) -> bool:
    x, y = p
    xs, ys = ring[:, 0], ring[:, 1]
    xj, yj = np.roll(xs, 1), np.roll(ys, 1)
    dy = np.where(yj - ys == 0, 1e-12, yj - ys)
    crosses = ((ys > y) != (yj > y)) & (x < (xj - xs) * (y - ys) / dy + xs)
    return bool(np.count_nonzero(crosses) % 2)


def aim_points(b: Building, aim_fraction: float = AIM_FRACTION, max_vertices: int = 8) -> tuple[np.ndarray, float]:
    """Points on the landmark a camera may see: its centroid and up to 8 vertices pulled 1 m in."""
    c = b.centroid
    fp = b.footprint
    if len(fp) > max_vertices:
        fp = fp[np.linspace(0, len(fp) - 1, max_vertices).astype(int)]
    to_c = c - fp
    step = np.minimum(1.0, 1.0 / np.maximum(np.hypot(*to_c.T), 1e-6))
    return np.vstack([c[None, :], fp + to_c * step[:, None]]), b.height * aim_fraction


def visible_landmarks(cam: np.ndarray, cam_alt: float, landmarks: list[Building], occ: Occluders,
                      max_range: float = DEFAULT_RANGE_M) -> list[int]:
    """Indices of `landmarks` within range of `cam` with at least one clear sight line."""
    cam = np.asarray(cam, dtype=float)
    pts, alts, owners, which = [], [], [], []
    out: set[int] = set()
    for j, lm in enumerate(landmarks):
        p, z = aim_points(lm)
        if np.min(np.hypot(*(p - cam).T)) > max_range:
            continue
        if point_in_polygon(cam, lm.footprint):
            out.add(j)
            continue
        pts.append(p)
        alts.append(np.full(len(p), z))
        owners.append(np.full(len(p), lm.id))
        which.append(np.full(len(p), j))
    if pts:
        blocked = rays_blocked(cam, cam_alt, np.vstack(pts), np.concatenate(alts), np.concatenate(owners), occ)
        which_a = np.concatenate(which)
        out.update(int(j) for j in np.unique(which_a[~blocked]))
    return sorted(out)


def landmark_visible(cam: np.ndarray, cam_alt: float, landmark: Building, occ: Occluders,
                     max_range: float = DEFAULT_RANGE_M) -> bool:
    """Is `landmark` within range and not hidden by other buildings from `cam`?"""
    return bool(visible_landmarks(cam, cam_alt, [landmark], occ, max_range))


def landmark_distance(cam: np.ndarray, landmark: Building) -> float:
    """Distance from the camera to the landmark's centroid, metres (what perception reports)."""
    return float(np.hypot(*(landmark.centroid - cam)))

"""How far a read sign is, from geometry the vehicle has: its altitude, or the map's buildings.

Bearing is exact enough from the pixel column (`camera_model.pixel_ray`); the
range is the hard part. Two estimates, best first:

* ``map-footprint``: lettering is on a facade, so along the sign's bearing
  the first building footprint of the onboard map is where it is. Needs a map
  and the vehicle's position in the map's frame (east, north = the pose's
  east, north).
* ``ground-plane``: the ray through the bottom of the lettering meets a
  horizontal plane at the lettering's height (``sign_height_m`` above the
  ground; a fascia is ~3 m up). Needs the ray to go down, i.e. the vehicle
  above the sign; the error grows as the ray flattens (1 m of height error
  at 30 m altitude and 100 m range is ~4 m of range).

Never the simulator's truth: a real vehicle has neither.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Iterable

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose, bearing_elevation, ground_hit, pixel_ray
from onboard.perception.types import Box


class FootprintRanger:
    """Distance along a horizontal bearing to the first building edge, over all footprints at once."""

    def __init__(self, footprints: Iterable[np.ndarray]) -> None:
        starts, ends = [], []
        for ring in footprints:
            ring = np.asarray(ring, float)
            if len(ring) >= 2:
                starts.append(ring)
                ends.append(np.roll(ring, -1, axis=0))
        self.a = np.concatenate(starts) if starts else np.zeros((0, 2))  # edge starts (east, north)
        self.b = np.concatenate(ends) if ends else np.zeros((0, 2))

    def range_along(self, east: float, north: float, bearing_deg: float, max_m: float) -> float | None:
        if not len(self.a):
            return None
        d = np.array([math.sin(math.radians(bearing_deg)), math.cos(math.radians(bearing_deg))])
        e = self.b - self.a
        w = self.a - np.array([east, north])
        denom = d[0] * e[:, 1] - d[1] * e[:, 0]
        ok = np.abs(denom) > 1e-9
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom  # along the ray
            s = (w[:, 0] * d[1] - w[:, 1] * d[0]) / denom  # along the edge
        hit = ok & (t > 0.5) & (t <= max_m) & (s >= 0) & (s <= 1)
        return float(t[hit].min()) if hit.any() else None


def locate_text(
    box: Box,
    intr: CameraIntrinsics,
    pose: CameraPose,
    *,
    sign_height_m: float,
    ranger: FootprintRanger | None = None,
    max_range_m: float = 400.0,
) -> tuple[float, float | None, str | None]:
    """(bearing deg, range m or None, range method) of the lettering in `box`."""
    x0, y0, x1, y1 = box
    u = (x0 + x1) / 2
    bearing, _ = bearing_elevation(pixel_ray(intr, pose, u, (y0 + y1) / 2))
    if ranger is not None:
        r = ranger.range_along(pose.east, pose.north, bearing, max_range_m)
        if r is not None:
            return bearing, r, "map-footprint"
    plane = replace(pose, ground_down=pose.ground_down - sign_height_m)
    hit = ground_hit(plane, pixel_ray(intr, plane, u, y1))
    if hit is not None and hit[2] <= max_range_m:
        return bearing, hit[2], "ground-plane"
    return bearing, None, None

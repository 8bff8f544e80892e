"""Where the description allows the goal to be: a set of candidate points, for the search.

A description such as "300 m south of Stockmann" does not put the goal at one
point. An 8-point compass word covers a 45 degree sector (the true bearing is
anywhere within 22.5 degrees of the word), while a written distance is a round
number, good to a few per cent. So the goal lies on an *arc*: a thin band at
the stated distance from the landmark, running across the sector. At 300 m
the arc is 230 m long and only a few tens of metres deep, at 700 m it is 540 m
long. A search that spirals round the point estimate (the arc's middle) spends
most of its flight on ground the words rule out (nearer or further than the
stated distance); a search that sweeps the arc does not.

`candidate_points` samples that region on a grid: every point that satisfies
each usable relation (offset: distance band and sector; ray: sector) within a
slack of the landmark positions' own uncertainty. "between" relations are not
modelled (a region is then not offered and the search falls back on the point
estimate).
"""

from __future__ import annotations

import math

import numpy as np

from onboard.agent.goal_description import GoalDescription

# An 8-point compass word names a 45 degree sector: the true bearing is within this of the word's.
COMPASS_HALF_SECTOR_DEG = 22.5
# A written distance ("300 m", "0.7 km") is a round number; the band kept either side of it, as a
# share of the distance (rounding to the last written digit is within about 5 % at 200-1000 m).
DISTANCE_BAND_SHARE = 0.1
# Grid spacing of the candidate points (metres): well under the ~60 m a name can be read from.
REGION_STEP_M = 20.0


def candidate_points(goal: GoalDescription, landmarks: dict[str, tuple[np.ndarray, float]], centre: np.ndarray,
                     ray_reach_m: float, step_m: float = REGION_STEP_M) -> np.ndarray:
    """Grid points (own frame) that every relation of `goal` allows; shape (n, 2), empty if none can be said.

    `landmarks` maps a landmark name to (fused position, robust spread); a relation whose landmark is
    missing is skipped. `centre` is the current point estimate (the grid is laid around it);
    `ray_reach_m` bounds how far along a ray (no distance given) candidates are kept.
    """
    usable = [r for r in goal.relations if all(n in landmarks for n in r.landmarks)]
    if not usable or any(r.kind == "between" for r in usable):
        return np.zeros((0, 2))
    half = math.radians(COMPASS_HALF_SECTOR_DEG)
    reach = 0.0
    for r in usable:
        if r.kind == "offset":
            d = r.distance or 0.0
            reach = max(reach, d * math.sin(half) + DISTANCE_BAND_SHARE * d)
        else:
            reach = max(reach, ray_reach_m)
    n = int(math.ceil(reach / step_m))
    ax = np.arange(-n, n + 1) * step_m
    gx, gy = np.meshgrid(centre[0] + ax, centre[1] + ax)
    pts = np.column_stack([gx.ravel(), gy.ravel()])
    keep = np.ones(len(pts), dtype=bool)
    for r in usable:
        lm, spread = landmarks[r.landmarks[0]]
        v = pts - lm
        dist = np.hypot(v[:, 0], v[:, 1])
        u = r.unit()
        along = v @ u
        across = np.abs(v @ np.array([u[1], -u[0]]))
        # metres outside the sector: how far a point lies beyond the sector's edge (behind: its distance)
        dev = np.arctan2(across, along)
        outside = np.where(dev <= half, 0.0, np.where(dev < math.pi / 2, dist * np.sin(dev - half), dist))
        slack = spread + step_m / 2.0
        if r.kind == "offset":
            d = r.distance or 0.0
            radial = np.maximum(0.0, np.abs(dist - d) - DISTANCE_BAND_SHARE * d)
            outside = np.hypot(outside, radial)
        keep &= outside <= slack
    return pts[keep]

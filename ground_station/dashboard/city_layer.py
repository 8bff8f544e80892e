"""The city beneath the dashboard's tracks: streets and buildings of the onboard map, as one compact JSON.

The dashboard draws the same map the vehicle flies with (an ``.aeriemap`` built by
``aerie map build`` from an OSM extract, read with :func:`onboard.map.map_file.load_map`),
so what the operator sees under a track is what the agent was given, not a second
parse of the extract. Streets are the map's corridors (its street graph, a waypoint
about every 50 m along the streets), drawn as segments; buildings are footprints;
named buildings also give a label. Coordinates are metres east/north of the map's
origin, rounded to 0.1 m: the page fetches this once, so it is kept small and its
size is bounded (``max_buildings``, ``max_streets``, optionally a radius).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

# The world as served: {"origin": [lat, lon] | None, "buildings": [[[e, n], ...], ...],
# "streets": [[[e, n], [e, n]], ...], "landmarks": [{"name", "pos": [e, n]}], "name": str}.
WorldData = dict[str, Any]

MAX_BUILDINGS = 20_000
MAX_STREETS = 20_000
MAX_LANDMARKS = 200


def empty_world() -> WorldData:
    return {"origin": None, "buildings": [], "streets": [], "landmarks": [], "name": ""}


def _xy(p: Any) -> list[float]:
    return [round(float(p[0]), 1), round(float(p[1]), 1)]


def city_from_map(path: str | Path, radius_m: float = 0.0, *, max_buildings: int = MAX_BUILDINGS,
                  max_streets: int = MAX_STREETS) -> WorldData:
    """The map file's streets, buildings and landmarks (within ``radius_m`` of its origin; 0: all).

    Nearest the origin first when a cap cuts, so a huge extract still shows the area flown from.
    A file that is no valid map raises :class:`onboard.map.map_file.MapFileError`.
    """
    from onboard.map.map_file import load_map

    m = load_map(path)

    def near(d: float) -> bool:
        return radius_m <= 0 or d <= radius_m

    rings = []
    for b in m.buildings:
        ring = b.footprint
        if len(ring) < 3:
            continue
        d = min(math.hypot(float(e), float(n)) for e, n in ring)
        if near(d):
            rings.append((d, [_xy(p) for p in ring]))
    rings.sort(key=lambda r: r[0])
    xy = m.graph.xy
    segs = []
    for a, b in m.graph.edges():
        d = min(math.hypot(*map(float, xy[a])), math.hypot(*map(float, xy[b])))
        if near(d):
            segs.append((d, [_xy(xy[a]), _xy(xy[b])]))
    segs.sort(key=lambda s: s[0])
    marks = []
    for b in m.landmarks:
        c = b.centroid
        d = math.hypot(float(c[0]), float(c[1]))
        if near(d):
            marks.append((d, {"name": str(b.name), "pos": _xy(c)}))
    marks.sort(key=lambda x: x[0])
    return {"origin": [float(m.origin.lat), float(m.origin.lon)], "name": m.name,
            "buildings": [r for _, r in rings[:max_buildings]], "streets": [s for _, s in segs[:max_streets]],
            "landmarks": [x for _, x in marks[:MAX_LANDMARKS]]}


def map_loader(path: str | Path, radius_m: float = 0.0) -> Callable[[], WorldData]:
    """A loader for :class:`~ground_station.dashboard.app.DashboardContext` (called once, then cached)."""
    return lambda: city_from_map(path, radius_m)

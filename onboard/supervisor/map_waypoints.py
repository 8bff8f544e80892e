"""The moves on offer from the vehicle's own map, at the position the autopilot reports.

With an onboard map the supervisor no longer asks the world feed where it may
fly: it snaps the autopilot's position to the nearest corridor waypoint of the
map and offers that waypoint's links, each with its latitude and longitude to
fly to. A position farther than `max_snap_m` from every waypoint is off the
map (another area, a map of the wrong city, a vehicle blown off course): the
mission ends with that said, rather than flying moves that start elsewhere.

The map also tells the agent, before take-off, where its landmarks and
corridors are in the flight's own frame (take-off = origin, metres east and
north), which is `knowledge_for`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.agent.map_knowledge import CorridorGraph, MapKnowledge
from onboard.map.onboard_map import OnboardMap
from onboard.supervisor.world_link import MoveOption


class OffTheMap(RuntimeError):
    """The vehicle is not on any corridor of its map."""


@dataclass(frozen=True)
class MapPosition:
    """The corridor waypoint the vehicle is at, how far off it is, and the moves from there."""

    node: int
    snap_m: float
    lat: float
    lon: float
    moves: tuple[MoveOption, ...]


def position_on(m: OnboardMap, lat: float, lon: float, max_snap_m: float, source: str = "the map") -> MapPosition:
    """Snap (lat, lon) to `m`'s nearest corridor waypoint and list its moves (raises `OffTheMap`)."""
    if not (math.isfinite(lat) and math.isfinite(lon)):
        raise OffTheMap(f"no position to place on {source} (lat {lat}, lon {lon})")
    g = m.graph
    xy = m.to_local(lat, lon)
    node = int(g.nearest_node(float(xy[0]), float(xy[1])))
    snap = float(np.hypot(*(g.xy[node] - xy)))
    if snap > max_snap_m:
        raise OffTheMap(f"the vehicle is {snap:.0f} m from the nearest corridor waypoint of {source} "
                        f"(map.max_snap_m {max_snap_m:g} m): outside the map's area?")
    moves = []
    for n in g.neighbours(node):
        mlat, mlon = m.to_geo(g.xy[n.node])
        moves.append(MoveOption(int(n.node), float(n.bearing), float(n.distance), float(mlat), float(mlon)))
    wlat, wlon = m.to_geo(g.xy[node])
    return MapPosition(node, round(snap, 2), float(wlat), float(wlon), tuple(moves))


def knowledge_for(m: OnboardMap, home_lat: float, home_lon: float, uncertainty_m: float) -> MapKnowledge:
    """The map's landmarks and corridors in the frame of a flight taking off at (home_lat, home_lon).

    Every named building goes in; the agent itself refuses an entry named like the goal (a mission is to
    find the goal by reading it, never by looking it up).
    """
    if not (math.isfinite(home_lat) and math.isfinite(home_lon)):
        raise OffTheMap("the autopilot reports no home position: the map cannot be placed in the flight's frame")
    home = m.to_local(home_lat, home_lon)
    landmarks = {name: np.asarray(xy, dtype=float) - home for name, xy in m.landmark_positions().items()}
    g = m.graph
    corridors = CorridorGraph(np.asarray(g.xy, dtype=float) - home, tuple(tuple(int(j) for j in a) for a in g.adj))
    return MapKnowledge(landmarks, uncertainty_m, corridors)

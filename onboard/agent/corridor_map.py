"""Routing on the onboard map's corridors: the shortest way on, instead of discovering streets.

Without a map the agent learns its corridors as it flies (`street_map`) and
plans to the frontier. With the map's `CorridorGraph` it knows every corridor
before take-off, so the cost of a move is its length plus the shortest
corridor route from where it ends to where the agent wants to be.

The moves on offer carry the vehicle's opaque waypoint ids, which need not be
the map's (a user's map may come from another extract or another
discretisation). So a move is matched to the map by position: its end point
(own position + bearing and length) snaps to the nearest map waypoint, and
only within `snap_m`; a move that does not snap is costed the old way (own
street map and frontier). The default snap distance (`agent.map_snap_m`,
15 m) is well under half the corridor spacing (waypoints are at least 40 m
apart), so a move never snaps to the neighbour of the waypoint it reaches.

Destinations are given as waypoints with a cost of their own (how far each
is from the target, weighted): one multi-source Dijkstra from them gives, for
every waypoint, the best route + destination cost, the same "route to a
waypoint + straight line on to the target" the frontier planner uses.
"""

from __future__ import annotations

import heapq
import math
from typing import Iterable

import numpy as np

from onboard.agent.map_knowledge import CorridorGraph


class CorridorMap:
    """One flight's view of the map's corridors: snapping, routes, and which waypoints were flown."""

    def __init__(self, graph: CorridorGraph, snap_m: float) -> None:
        self.graph = graph
        self.snap_m = float(snap_m)
        self.visited: set[int] = set()  # map waypoints the drone has been at
        self.snapped = 0  # moves matched to a map waypoint (for the summary)
        self.unsnapped = 0  # moves further than snap_m from every map waypoint
        xy = graph.xy
        self._links = [[(j, math.hypot(*(xy[j] - xy[i]))) for j in links] for i, links in enumerate(graph.adj)]
        self._cache: tuple[tuple, np.ndarray] | None = None

    def nearest(self, xy: np.ndarray) -> int:
        """The map waypoint nearest `xy`, however far."""
        return int(np.argmin(np.hypot(self.graph.xy[:, 0] - xy[0], self.graph.xy[:, 1] - xy[1])))

    def snap(self, xy: np.ndarray) -> int | None:
        """The map waypoint nearest `xy`, or None when none is within `snap_m`."""
        i = self.nearest(xy)
        return i if math.hypot(*(self.graph.xy[i] - xy)) <= self.snap_m else None

    def visit(self, xy: np.ndarray) -> int | None:
        """The drone is at `xy`: mark the waypoint it snaps to as flown."""
        i = self.snap(xy)
        if i is not None:
            self.visited.add(i)
        return i

    def cost_to_go(self, target: np.ndarray, closeness: float, destinations: Iterable[int] | None = None) -> np.ndarray:
        """For every waypoint: the least route length to a destination + `closeness` x its distance to `target`.

        `destinations` None: every waypoint may be the end of the route. Waypoints
        that reach no destination get infinity. Cached for repeated identical asks.
        """
        xy = self.graph.xy
        dest = range(len(xy)) if destinations is None else sorted(set(destinations))
        key = (round(float(target[0]), 1), round(float(target[1]), 1), float(closeness),
               None if destinations is None else tuple(dest))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        cost = np.full(len(xy), np.inf)
        heap = []
        for i in dest:
            c = closeness * math.hypot(*(xy[i] - target))
            if c < cost[i]:
                cost[i] = c
                heap.append((c, i))
        heapq.heapify(heap)
        while heap:
            c, i = heapq.heappop(heap)
            if c > cost[i]:
                continue
            for j, w in self._links[i]:
                if c + w < cost[j]:
                    cost[j] = c + w
                    heapq.heappush(heap, (c + w, j))
        self._cache = (key, cost)
        return cost

    def lookouts(self, unseen: np.ndarray, read_range_m: float) -> frozenset[int]:
        """Waypoints not flown yet within reading range of some unseen point of the goal's region."""
        if not len(unseen):
            return frozenset()
        xy = self.graph.xy
        d2 = (xy[:, None, 0] - unseen[None, :, 0]) ** 2 + (xy[:, None, 1] - unseen[None, :, 1]) ** 2
        near = np.flatnonzero(np.any(d2 <= read_range_m ** 2, axis=1))
        return frozenset(int(i) for i in near if int(i) not in self.visited)

    def rest_of_route(self, cost: np.ndarray, end: np.ndarray) -> float | None:
        """`cost` (from `cost_to_go`) at the waypoint a move ending at `end` reaches; None: no waypoint there."""
        i = self.snap(end)
        if i is None or not math.isfinite(cost[i]):
            self.unsnapped += i is None
            return None
        self.snapped += 1
        return float(cost[i])

    def near(self, target: np.ndarray, radius_m: float) -> list[int]:
        """Waypoints within `radius_m` of `target`."""
        d = np.hypot(self.graph.xy[:, 0] - target[0], self.graph.xy[:, 1] - target[1])
        return [int(i) for i in np.flatnonzero(d <= radius_m)]

    def unvisited(self) -> list[int]:
        return [i for i in range(len(self.graph.xy)) if i not in self.visited]

"""The agent's own map of the street corridors it has flown or seen: waypoints and links.

A real drone learns its corridor graph as it goes; so does the agent. Every
observation lists the moves on offer (waypoint id, bearing, length), which
places those waypoints in the own frame and links them to the current one.
Waypoints seen but not yet flown to are the frontier: planning over known
links to the frontier (route length + straight line from there to the
target) is how the agent leaves dead ends without oscillating.
"""

from __future__ import annotations

import heapq

import numpy as np

from onboard.agent.geometry import offset
from onboard.vocab.observation import NeighbourMove


class StreetMap:
    def __init__(self) -> None:
        self.xy: dict[int, np.ndarray] = {}
        self.links: dict[int, dict[int, float]] = {}
        self.flown: set[int] = set()  # waypoints the drone has been at (their links are known)

    def observe(self, here: int, moves: tuple[NeighbourMove, ...]) -> None:
        """Register the moves on offer at `here` (whose position must be known, or is the origin)."""
        if here not in self.xy:
            self.xy[here] = np.zeros(2)
        self.flown.add(here)
        base = self.xy[here]
        for m in moves:
            self.xy.setdefault(m.node, base + offset(m.bearing, m.length))
            self.links.setdefault(here, {})[m.node] = m.length
            self.links.setdefault(m.node, {})[here] = m.length

    def frontier(self) -> list[int]:
        return [n for n in self.xy if n not in self.flown]

    def routes_from(self, start: int) -> tuple[dict[int, float], dict[int, int]]:
        """Route length over known links to every known waypoint, and the first hop towards it."""
        dist = {start: 0.0}
        first: dict[int, int] = {}
        heap = [(0.0, start)]
        while heap:
            d, n = heapq.heappop(heap)
            if d > dist.get(n, float("inf")):
                continue
            if n != start and n not in self.flown:
                continue  # links beyond an unflown waypoint are unknown
            for m, w in self.links.get(n, {}).items():
                nd = d + w
                if nd < dist.get(m, float("inf")):
                    dist[m] = nd
                    first[m] = m if n == start else first[n]
                    heapq.heappush(heap, (nd, m))
        return dist, first

    def rename(self, old: int, new: int) -> None:
        """A placeholder id turned out to be waypoint `new` (the take-off waypoint, seen from a neighbour)."""
        self.xy[new] = self.xy.pop(old)
        links = self.links.pop(old, {})
        self.links.setdefault(new, {}).update(links)
        for m in links:
            self.links[m][new] = self.links[m].pop(old)
        if old in self.flown:
            self.flown.discard(old)
            self.flown.add(new)

"""A tiny grid city for agent tests: no simulator, exact perception, 50 m blocks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from onboard.vocab.observation import AgentObservation, LandmarkSighting, NeighbourMove, PoiSighting


def _bearing(dx: float, dy: float) -> float:
    return math.degrees(math.atan2(dx, dy)) % 360.0


@dataclass
class ToyCity:
    size: int = 9
    spacing: float = 50.0
    landmarks: dict[str, tuple[float, float]] = field(default_factory=lambda: {"Tower": (200.0, 200.0)})
    pois: dict[str, tuple[float, float]] = field(default_factory=lambda: {"Cafe Aalto": (300.0, 300.0)})
    view_range: float = 500.0
    poi_range: float = 60.0
    blocked: set[tuple[int, int]] = field(default_factory=set)  # grid cells with no waypoint
    more_pois: tuple[tuple[str, tuple[float, float]], ...] = ()  # signs whose name is already in `pois` (chains)

    def node(self, i: int, j: int) -> int:
        return i * self.size + j

    def xy(self, node: int) -> tuple[float, float]:
        return (node % self.size) * self.spacing, (node // self.size) * self.spacing

    def moves(self, node: int) -> tuple[NeighbourMove, ...]:
        i, j = divmod(node, self.size)
        out = []
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            a, b = i + di, j + dj
            if 0 <= a < self.size and 0 <= b < self.size and (a, b) not in self.blocked:
                n = self.node(a, b)
                x0, y0 = self.xy(node)
                x1, y1 = self.xy(n)
                out.append(NeighbourMove(n, _bearing(x1 - x0, y1 - y0), math.hypot(x1 - x0, y1 - y0)))
        return tuple(out)

    def observe(self, node: int, step: int, steps_left: int, see_landmarks: bool = True) -> AgentObservation:
        x, y = self.xy(node)
        lms = tuple(LandmarkSighting(n, _bearing(px - x, py - y), math.hypot(px - x, py - y))
                    for n, (px, py) in self.landmarks.items()
                    if see_landmarks and math.hypot(px - x, py - y) <= self.view_range)
        pois = tuple(PoiSighting(n, _bearing(px - x, py - y), math.hypot(px - x, py - y))
                     for n, (px, py) in (*self.pois.items(), *self.more_pois)
                     if math.hypot(px - x, py - y) <= self.poi_range)
        return AgentObservation(step, steps_left, self.moves(node), lms, pois)

    def fly(self, agent, start: int, limit: int = 60, see_landmarks=lambda step: True, first: int = 0):
        """Run one mission (or its rest from step `first`); returns (arrived, final node, trail)."""
        node, trail = start, [start]
        for step in range(first, limit + 1):
            action = agent.act(self.observe(node, step, limit - step, see_landmarks(step)))
            if action.kind == "arrive":
                return True, node, trail
            if step == limit:
                break
            assert action.node in {m.node for m in self.moves(node)}, "the agent chose a move not on offer"
            node = action.node
            trail.append(node)
        return False, node, trail

    def fly_on(self, agent, node: int, first: int, limit: int = 60) -> bool:
        """The rest of a mission already at `node` after `first` steps: did it arrive?"""
        return self.fly(agent, node, limit, first=first)[0]

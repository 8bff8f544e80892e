"""What an onboard map tells the agent before take-off, already placed in the agent's own frame.

A real drone carries a map of its operating area (named buildings and the
street corridors it may fly) and knows its GPS take-off position, so the
caller converts the map into the agent's frame (map position minus take-off
position; x east, y north, metres) and hands over plain data: the agent
never learns where the map came from, and nothing here knows the simulator
or the map file format.

`uncertainty_m` is how far a map position may be off (one standard
deviation, metres): the working memory gives map landmarks that spread, so a
relation on a map landmark is trusted as a landmark fixed that well.

The goal is never in here on purpose: a mission is to find something by
reading its name, and a place that is in the map may have closed or moved.
The agent refuses any map entry whose name names the goal (see
`WorkingMemory.set_map`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np


class MapKnowledgeError(ValueError):
    """Map knowledge that cannot be used (the message says which part is wrong)."""


@dataclass(frozen=True)
class CorridorGraph:
    """The flight corridors: waypoint positions (own frame) and their links (indices into `xy`).

    Waypoint ids are the map's own indices; they need not equal the ids of the
    moves the vehicle offers (`onboard.agent.corridor_map` matches moves to map
    waypoints by position).
    """

    xy: np.ndarray  # (n, 2) metres, own frame
    adj: tuple[tuple[int, ...], ...]  # adj[i]: the waypoints linked to i

    def __post_init__(self) -> None:
        xy = np.asarray(self.xy, dtype=float)
        if xy.ndim != 2 or xy.shape[1] != 2 or not len(xy):
            raise MapKnowledgeError(f"corridor waypoints must be an (n, 2) array with n > 0, not {xy.shape}")
        if not np.all(np.isfinite(xy)):
            raise MapKnowledgeError("corridor waypoints must be finite")
        if len(self.adj) != len(xy):
            raise MapKnowledgeError(f"corridor links list {len(self.adj)} waypoints, positions {len(xy)}")
        n = len(xy)
        for i, links in enumerate(self.adj):
            bad = [j for j in links if not 0 <= int(j) < n or int(j) == i]
            if bad:
                raise MapKnowledgeError(f"corridor waypoint {i} links to {bad}: not other waypoints of the map")
        object.__setattr__(self, "xy", xy)
        object.__setattr__(self, "adj", tuple(tuple(int(j) for j in links) for links in self.adj))


@dataclass(frozen=True)
class MapKnowledge:
    """Named landmark positions and (optionally) the corridor graph, own frame; the map's uncertainty (m)."""

    landmarks: Mapping[str, np.ndarray] = field(default_factory=dict)
    uncertainty_m: float = 10.0
    corridors: CorridorGraph | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.uncertainty_m) and self.uncertainty_m >= 0.0):
            raise MapKnowledgeError(f"uncertainty_m must be a finite number >= 0, not {self.uncertainty_m!r}")
        lms: dict[str, np.ndarray] = {}
        for name, xy in self.landmarks.items():
            p = np.asarray(xy, dtype=float)
            if not name or p.shape != (2,) or not np.all(np.isfinite(p)):
                raise MapKnowledgeError(f"landmark {name!r}: needs a name and a finite (x, y), not {xy!r}")
            lms[str(name)] = p
        object.__setattr__(self, "landmarks", lms)

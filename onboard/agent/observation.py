"""What the agent perceives and what it commands: its own small types.

`onboard/` never imports the simulator, so the agent owns these; a bridge
(the benchmark adapter in `sim/benchmark/aerie_agents.py`, later the flight
supervisor) converts its world's observation into an `AgentObservation` and
turns an `AgentAction` back into a flight. Node ids are opaque handles for
the moves on offer (street-corridor waypoints), never coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NeighbourMove:
    """One move on offer: the waypoint's id, its compass bearing (deg from north) and length (m)."""

    node: int
    bearing: float
    length: float


@dataclass(frozen=True)
class LandmarkSighting:
    """A recognised landmark: name, bearing (deg from north) and distance (m) from the drone."""

    name: str
    bearing: float
    distance: float


@dataclass(frozen=True)
class PoiSighting:
    """A point of interest close enough that its name can be read."""

    name: str
    bearing: float
    distance: float


@dataclass(frozen=True)
class AgentObservation:
    """One step's perception plus the step counters."""

    step: int
    steps_left: int
    moves: tuple[NeighbourMove, ...]
    landmarks: tuple[LandmarkSighting, ...] = ()
    pois: tuple[PoiSighting, ...] = ()


@dataclass(frozen=True)
class AgentAction:
    """Move to a neighbouring waypoint, or declare that the goal is reached."""

    kind: str  # "move" | "arrive"
    node: int | None = None
    reason: str = ""

    @staticmethod
    def move(node: int, reason: str = "") -> "AgentAction":
        return AgentAction("move", node, reason)

    @staticmethod
    def arrive(reason: str = "") -> "AgentAction":
        return AgentAction("arrive", None, reason)

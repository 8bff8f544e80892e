"""The contract between an agent and the benchmark: observation in, action out.

The same contract serves the in-process kinematic episodes and, later, real
flights: the runner turns `Action.move(node)` into a flight to that node's
position (see `sim.benchmark.episode.Mover`), so an agent never knows which.
Node ids are opaque handles for the moves on offer (a real drone would get
them from its own map of the street corridors), not coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from sim.world.graph import Neighbour
from sim.world.perception import LandmarkSighting, PoiSighting


@dataclass(frozen=True)
class Observation:
    """What the drone knows at one step.

    `landmarks` carry bearing (degrees from north) and distance (m) as perceived
    (noisy under the `prep` and `poor` presets); `pois` are names readable close
    by; `image()` renders the camera view on demand (costly, so lazy).
    """

    step: int
    steps_left: int
    neighbours: tuple[Neighbour, ...]
    landmarks: tuple[LandmarkSighting, ...]
    pois: tuple[PoiSighting, ...]
    heading: float  # bearing of the last move; 0 (north) before the first
    image: Callable[[], np.ndarray] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Action:
    """Move to a neighbouring node, or declare that the goal is reached."""

    kind: str  # "move" | "arrive"
    node: int | None = None
    reason: str = ""

    @staticmethod
    def move(node: int, reason: str = "") -> "Action":
        return Action("move", node, reason)

    @staticmethod
    def arrive(reason: str = "") -> "Action":
        return Action("arrive", None, reason)


@runtime_checkable
class Agent(Protocol):
    """Anything with a name, `reset` and `act` can be benchmarked."""

    name: str

    def reset(self, description: str, seed: int) -> None:
        """Start a new episode; `description` is the only knowledge of the goal."""

    def act(self, observation: Observation) -> Action:
        """Choose the next move (one of `observation.neighbours`) or declare arrival."""

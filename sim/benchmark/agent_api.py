"""The contract between an agent and the benchmark: observation in, action out.

The same contract serves the in-process kinematic episodes and, later, real
flights: the runner turns `Action.move(node)` into a flight to that node's
position (see `sim.benchmark.kinematic.Mover`), so an agent never knows which.
Node ids are opaque handles for the moves on offer (a real drone would get
them from its own map of the street corridors), not coordinates.

Besides moving, an agent may look over the roofs: `Action.look_up(altitude_m)`
climbs straight up at the current node and turns a full circle (one step); the
moves after it are flown up there until `Action.come_down()` (one step) brings
the drone back to cruise altitude where it is, or `Action.come_down(node=n)`
on the way to the neighbouring node `n`, one sloped leg. The vertical metres
count in the path length (see `sim.benchmark.episode`). The next observation is at the
same node and carries what was seen from up there (`altitude_m`), as does
every one until the come-down, without names (none is readable from up there);
`look_up_ceiling_m` says how high a look-up may go (above it the look-up is
refused, not flown).
`Action.look_low(altitude_m)` is the same turn below cruise, among the shop
fronts; offered (`look_low_floor_m`) only where the names come from a camera
(`--perception camera`): the oracle's names do not depend on altitude.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from onboard.map.corridors import Neighbour
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
    # Camera altitude (m above ground) the landmark sightings were taken at: the cruise altitude, or the
    # look-up's altitude right after a look-up (then `pois` is empty: names are not readable from above),
    # or the look-low's right after a look-low (names read down there).
    altitude_m: float | None = None
    # The highest altitude a look-up may climb to (the safety envelope's ceiling); None: no look-up on offer.
    look_up_ceiling_m: float | None = None
    # The lowest altitude a look-low may descend to; None: no look-low on offer.
    look_low_floor_m: float | None = None
    image: Callable[[], np.ndarray] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Action:
    """Move to a neighbouring node, look up or low from this one, or declare that the goal is reached."""

    kind: str  # "move" | "look_up" | "come_down" | "look_low" | "arrive"
    node: int | None = None
    reason: str = ""
    # look_up / look_low: climb / descend to this altitude; come_down: part way down to it (m above ground)
    altitude_m: float | None = None

    @staticmethod
    def move(node: int, reason: str = "") -> "Action":
        return Action("move", node, reason)

    @staticmethod
    def look_up(altitude_m: float, reason: str = "", node: int | None = None) -> "Action":
        """Climb to `altitude_m` at this node (`node` None) or on the way to the neighbouring `node` (one sloped
        leg), turn a full circle (one step); the moves after it are flown up there."""
        return Action("look_up", node, reason, float(altitude_m))

    @staticmethod
    def come_down(reason: str = "", node: int | None = None, altitude_m: float | None = None) -> "Action":
        """Back down to cruise altitude after a look-up (one step): at this node (`node` None, a vertical leg),
        or descending on the way to the neighbouring `node` (one sloped leg), there only part of the way down to
        `altitude_m` if given."""
        return Action("come_down", node, reason, None if altitude_m is None else float(altitude_m))

    @staticmethod
    def look_low(altitude_m: float, reason: str = "") -> "Action":
        """Descend at this node to `altitude_m`, turn a full circle, climb back to cruise (one step)."""
        return Action("look_low", None, reason, float(altitude_m))

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
        """Choose the next move (one of `observation.neighbours`), a look-up, or declare arrival."""

"""What the agent perceives and what it commands: its own small types.

`onboard/` never imports the simulator, so the agent owns these; a bridge
(the benchmark adapter in `sim/benchmark/aerie_agents.py`, later the flight
supervisor) converts its world's observation into an `AgentObservation` and
turns an `AgentAction` back into a flight. Node ids are opaque handles for
the moves on offer (street-corridor waypoints), never coordinates.

Besides a move the agent may ask for a look-up (`AgentAction.look_up`): climb
straight up at the current waypoint and turn a full circle; the moves after it
are flown up there, over the roofs, until a come-down (`AgentAction.come_down`)
brings the drone back to cruise altitude at the waypoint it is over. A look-up
is on offer only when the observation names a ceiling (`look_up_ceiling_m`);
the next observation is at the same waypoint, with the sightings taken from up
there, and so is every one until the come-down (`altitude_m`). From up there
no name is readable. Sightings from above are still horizontal: bearing and
ground distance from the waypoint to the landmark.

A look-low (`AgentAction.look_low`) is the same turn at an altitude below
cruise, down among the shop fronts, where a camera reads names it cannot
from cruise; on offer only when the observation names a floor
(`look_low_floor_m`). Its sightings include the names read down there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ActionKind(StrEnum):
    """What the agent asks of the vehicle; a str, so the words stay what the step reports and logs carry."""

    MOVE = "move"
    LOOK_UP = "look_up"
    COME_DOWN = "come_down"
    LOOK_LOW = "look_low"
    ARRIVE = "arrive"

    def __repr__(self) -> str:  # as the word: step reports print actions with it
        return repr(self.value)


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
class SharedLandmark:
    """A landmark a vehicle of the fleet placed: own frame (east, north of take-off), spread (m), sightings."""

    name: str
    xy: tuple[float, float]
    spread_m: float
    fixes: int = 1


@dataclass(frozen=True)
class SharedFindings:
    """What vehicles of a fleet found, in one vehicle's frame (see `onboard.fleet.findings`): the others' for
    the agent to use, or its own (`GraphAgent.findings`) for the others.

    Their landmarks save a search; a sign they read may be this mission's goal; the
    places they looked from hold no sign of the goal, or they would have read it.
    """

    landmarks: tuple[SharedLandmark, ...] = ()
    signs: tuple[tuple[str, tuple[float, float]], ...] = ()
    looked_from: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class AgentObservation:
    """One step's perception plus the step counters."""

    step: int
    steps_left: int
    moves: tuple[NeighbourMove, ...]
    landmarks: tuple[LandmarkSighting, ...] = ()
    pois: tuple[PoiSighting, ...] = ()
    # Altitude (m above take-off) the landmark sightings were taken at; None: not reported (cruise).
    altitude_m: float | None = None
    # The highest a look-up may climb (the safety envelope's ceiling, m); None: no look-up on offer.
    look_up_ceiling_m: float | None = None
    # The lowest a look-low may descend to (m above take-off); None: not on offer. A vehicle offers it when
    # it reads names with its own camera, for which a shop front is readable from much lower than cruise.
    look_low_floor_m: float | None = None
    # The fleet's findings so far (all of them, not only what is new); None: flying alone.
    shared: SharedFindings | None = None
    # Bearing of the last move (deg from north); 0 before the first.
    heading: float = 0.0


@dataclass(frozen=True)
class AgentAction:
    """Move to a neighbouring waypoint, look up, come down (here or on the way to a neighbour) or look low at
    this one, or declare that the goal is reached."""

    kind: ActionKind
    node: int | None = None
    reason: str = ""
    # look_up: climb to this altitude; look_low: descend to it; come_down: part way down to it, None: to cruise
    # (m above take-off)
    altitude_m: float | None = None

    @staticmethod
    def move(node: int, reason: str = "") -> "AgentAction":
        return AgentAction(ActionKind.MOVE, node, reason)

    @staticmethod
    def look_up(altitude_m: float, reason: str = "", node: int | None = None) -> "AgentAction":
        """Climb to `altitude_m`: here (`node` None), or on the way to the neighbouring `node`; turn up there."""
        return AgentAction(ActionKind.LOOK_UP, node, reason, float(altitude_m))

    @staticmethod
    def come_down(reason: str = "", node: int | None = None, altitude_m: float | None = None) -> "AgentAction":
        """Back to cruise altitude: here (`node` None), or descending on the way to the neighbouring `node`, there
        only part of the way down to `altitude_m` if given (still over the roofs)."""
        return AgentAction(ActionKind.COME_DOWN, node, reason, None if altitude_m is None else float(altitude_m))

    @staticmethod
    def look_low(altitude_m: float, reason: str = "") -> "AgentAction":
        return AgentAction(ActionKind.LOOK_LOW, None, reason, float(altitude_m))

    @staticmethod
    def arrive(reason: str = "") -> "AgentAction":
        return AgentAction(ActionKind.ARRIVE, None, reason)

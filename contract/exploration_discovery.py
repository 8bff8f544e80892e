"""``exploration_discovery``: what one exploring vehicle tells its team on the vehicle-to-vehicle link.

The team-exploration agents (``sim/exploration/discovery_share.py``) publish,
after each step, their news since the last message (or everything, when
``full``): the waypoints flown and the exits seen there, the POIs read, where
the vehicle is and the frontier waypoint it claims. Positions are ``Fix``es in
the team's common frame (waypoint id, east and north metres of the common
origin). The frame is a :mod:`contract.wire` frame; a peer's frame is
untrusted, so every number is range-checked and NaN refused (a NaN position
would poison every distance computed with it), and the team is named so a
frame from another team on the same link is told apart (``foreign``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.envelope import INT_LIMIT
from contract.payloads.base import Payload, Reader
from contract.wire import Channel, channel

MAX_FRAME_BYTES = 1 << 20
# A city's extent in metres from the common origin, with room to spare.
MAX_OFFSET_M = 1_000_000.0
MAX_WAYPOINT = (1 << 31) - 1
MAX_NAME_CHARS = 200
MAX_STEP = 1_000_000_000


@dataclass(frozen=True)
class WireFix:
    """A position both vehicles understand: waypoint id and east/north metres of the common origin."""

    waypoint: int
    east: float
    north: float

    def body(self) -> dict[str, Any]:
        return {"waypoint": self.waypoint, "east": self.east, "north": self.north}

    @classmethod
    def read(cls, r: Reader) -> "WireFix":
        return cls(r.integer("waypoint", lo=0, hi=MAX_WAYPOINT), r.number("east", lo=-MAX_OFFSET_M, hi=MAX_OFFSET_M),
                   r.number("north", lo=-MAX_OFFSET_M, hi=MAX_OFFSET_M))


@dataclass(frozen=True)
class WireVisit:
    """A waypoint a vehicle flew to and the exits it saw there."""

    fix: WireFix
    exits: tuple[WireFix, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"fix": self.fix.body(), "exits": [x.body() for x in self.exits]}

    @classmethod
    def read(cls, r: Reader) -> "WireVisit":
        fix = r.nested("fix", WireFix.read)
        if fix is None:
            raise r.fail("fix", "missing", "missing_field")
        return cls(fix, r.each("exits", WireFix.read))


@dataclass(frozen=True)
class WirePoi:
    """A POI read by some vehicle, placed in the common frame."""

    name: str
    east: float
    north: float

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "east": self.east, "north": self.north}

    @classmethod
    def read(cls, r: Reader) -> "WirePoi":
        name = r.text("name")
        if len(name) > MAX_NAME_CHARS:
            raise r.fail("name", f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
        return cls(name, r.number("east", lo=-MAX_OFFSET_M, hi=MAX_OFFSET_M),
                   r.number("north", lo=-MAX_OFFSET_M, hi=MAX_OFFSET_M))


@dataclass(frozen=True)
class ExplorationDiscovery(Payload):
    MSG_TYPE: ClassVar[str] = "exploration_discovery"
    SCHEMA_VERSION: ClassVar[int] = 1

    vehicle_id: str
    team: str
    seq: int
    t_ns: int
    step: int
    pose: WireFix
    visited: tuple[WireVisit, ...] = ()
    pois: tuple[WirePoi, ...] = ()
    claim: WireFix | None = None
    full: bool = False

    def body(self) -> dict[str, Any]:
        return {"vehicle_id": self.vehicle_id, "team": self.team, "seq": self.seq, "t_ns": self.t_ns,
                "step": self.step, "pose": self.pose.body(), "visited": [v.body() for v in self.visited],
                "pois": [p.body() for p in self.pois], "claim": None if self.claim is None else self.claim.body(),
                "full": self.full}

    @classmethod
    def _from(cls, r: Reader) -> "ExplorationDiscovery":
        vehicle, team = r.text("vehicle_id", non_empty=True), r.text("team", non_empty=True)
        for key, value in (("vehicle_id", vehicle), ("team", team)):
            if len(value) > MAX_NAME_CHARS:
                raise r.fail(key, f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
        pose = r.nested("pose", WireFix.read)
        if pose is None:
            raise r.fail("pose", "missing", "missing_field")
        return cls(vehicle, team, r.integer("seq", lo=1, hi=INT_LIMIT - 1), r.integer("t_ns", lo=0, hi=INT_LIMIT - 1),
                   r.integer("step", lo=0, hi=MAX_STEP), pose, r.each("visited", WireVisit.read),
                   r.each("pois", WirePoi.read), r.nested("claim", WireFix.read), r.flag("full"))


def frames(max_bytes: int = MAX_FRAME_BYTES) -> Channel[Any]:
    return channel("exploration", (ExplorationDiscovery,), max_bytes)

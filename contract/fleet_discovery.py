"""``fleet_discovery``: what one vehicle has found, as it tells the other members of its fleet.

A member's landmark fixes save another member the search for that landmark;
the signs it read can be the other's goal; the places it looked from say
where a goal is *not* (it would have read the name). Positions travel as
latitude/longitude because members take off from different places: each
receiver brings them into its own frame with its own home.

The frame is a snapshot of the sender's latest findings (each list bounded,
newest kept), not a delta: the receiver keeps the union, so a lost frame or
a member that joins late costs nothing but the next frame. It shares the
fleet channel (and its sequence numbers) with ``fleet_report``; see
``contract/fleet_frame.py`` for the wire. Every number is range-checked and
NaN refused: a finding from the network is untrusted, and a NaN landmark
would poison every estimate that used it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.fleet_report import MAX_MEMBER_ID, MAX_SEQ
from contract.payloads.base import Payload, Reader

# Items of each kind in one frame (the newest are kept): with names of up to MAX_NAME_CHARS a full
# frame stays under 12 KiB, inside the channel's default frame bound.
MAX_ITEMS = 32
MAX_NAME_CHARS = 80
# A landmark's spread: metres, a city block to a few kilometres.
MAX_SPREAD_M = 5_000.0
MAX_FIXES = 10_000


@dataclass(frozen=True)
class LandmarkFinding:
    """A landmark's fused position, its robust spread (m) and how many sightings it rests on."""

    name: str
    lat: float
    lon: float
    spread_m: float
    fixes: int

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "lat": self.lat, "lon": self.lon, "spread_m": self.spread_m, "fixes": self.fixes}

    @classmethod
    def read(cls, r: Reader) -> "LandmarkFinding":
        return cls(_name(r), *_lat_lon(r), spread_m=r.number("spread_m", lo=0.0, hi=MAX_SPREAD_M),
                   fixes=r.integer("fixes", lo=1, hi=MAX_FIXES))


@dataclass(frozen=True)
class SignRead:
    """A name read on a sign, placed where the sign stood."""

    name: str
    lat: float
    lon: float

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "lat": self.lat, "lon": self.lon}

    @classmethod
    def read(cls, r: Reader) -> "SignRead":
        return cls(_name(r), *_lat_lon(r))


@dataclass(frozen=True)
class LookedFrom:
    """A place the vehicle read signs from at cruise (the receiver judges the reach by its own reading)."""

    lat: float
    lon: float

    def body(self) -> dict[str, Any]:
        return {"lat": self.lat, "lon": self.lon}

    @classmethod
    def read(cls, r: Reader) -> "LookedFrom":
        return cls(*_lat_lon(r))


def _name(r: Reader) -> str:
    name = r.text("name", non_empty=True)
    if len(name) > MAX_NAME_CHARS:
        raise r.fail("name", f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
    return name


def _lat_lon(r: Reader) -> tuple[float, float]:
    return r.number("lat", lo=-90.0, hi=90.0), r.number("lon", lo=-180.0, hi=180.0)


def _bounded(r: Reader, key: str, make: Any) -> tuple[Any, ...]:
    if len(r.items(key)) > MAX_ITEMS:
        raise r.fail(key, f"more than {MAX_ITEMS} items", "out_of_range")
    return r.each(key, make)


@dataclass(frozen=True)
class FleetDiscovery(Payload):
    MSG_TYPE: ClassVar[str] = "fleet_discovery"
    SCHEMA_VERSION: ClassVar[int] = 1

    member_id: int
    seq: int
    flight_id: str  # the flight that found them (the findings stay true after it: the city does not move)
    landmarks: tuple[LandmarkFinding, ...] = ()
    signs: tuple[SignRead, ...] = ()
    looked_from: tuple[LookedFrom, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"member_id": self.member_id, "seq": self.seq, "flight_id": self.flight_id,
                "landmarks": [x.body() for x in self.landmarks], "signs": [x.body() for x in self.signs],
                "looked_from": [x.body() for x in self.looked_from]}

    @classmethod
    def _from(cls, r: Reader) -> "FleetDiscovery":
        flight = r.text("flight_id")
        if len(flight) > MAX_NAME_CHARS:
            raise r.fail("flight_id", f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
        return cls(member_id=r.integer("member_id", lo=1, hi=MAX_MEMBER_ID), seq=r.integer("seq", lo=1, hi=MAX_SEQ),
                   flight_id=flight, landmarks=_bounded(r, "landmarks", LandmarkFinding.read),
                   signs=_bounded(r, "signs", SignRead.read), looked_from=_bounded(r, "looked_from", LookedFrom.read))

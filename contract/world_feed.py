"""The simulated world's sensor feed: what the supervisor asks ``aerie world serve`` and what it answers.

The supervisor (``onboard/supervisor/world_link.py``, a REQ socket) asks with
the position the autopilot reports; the simulator (``sim/world/observation_server.py``,
a ROUTER) answers from its city. Requests are ``gazetteer`` (the landmark
names the vehicle can recognise, and their other names) and ``observe``
(sightings, waypoints on offer and, on request, the camera frame); replies are
``gazetteer_reply``, ``observation`` or ``feed_error`` (a malformed request,
counted and answered, never fatal). Every frame is a :mod:`contract.wire`
frame with its schema version, so a peer of another version is refused by
name rather than half read.

``altitude`` is where the camera is during a look-up over the roofs (None:
the cruise view); ``sightings=False`` asks for a camera frame only, rendered
from the reported position at ``camera_alt`` and the gimbal's ``camera_pitch``.
An observation echoes ``altitude_m`` and ``camera_pitch`` so a client can
tell that a feed honoured them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader
from contract.wire import channel

# Largest request read (observe and gazetteer requests are small maps).
MAX_REQUEST_BYTES = 65536
# Largest observation read (it may carry a rendered PNG); a bigger one is refused, not grown into.
MAX_REPLY_BYTES = 32 << 20
# Camera altitudes a request may ask for (m above ground): above the world's view range (500 m)
# nothing more comes into sight, and no vehicle of Aerie's flies near it.
ALTITUDE_RANGE_M = (1.0, 500.0)
# Headings (degrees) a request may carry: any turn a client may have summed without wrapping it.
HEADING_LIMIT_DEG = 36_000.0
# A gimbal's pitch, degrees (down is negative).
PITCH_RANGE_DEG = (-90.0, 90.0)
# A sighting's or a move's distance (m): far beyond any view range, short of nonsense.
MAX_DISTANCE_M = 100_000.0
MAX_NAME_CHARS = 200
MAX_ITEMS = 10_000


def _lat_lon(r: Reader) -> tuple[float, float]:
    return r.number("lat", lo=-90.0, hi=90.0), r.number("lon", lo=-180.0, hi=180.0)


def _name(r: Reader, key: str = "name") -> str:
    name = r.text(key)
    if len(name) > MAX_NAME_CHARS:
        raise r.fail(key, f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
    return name


def _bounded(r: Reader, key: str, make: Any) -> tuple[Any, ...]:
    if len(r.items(key, ())) > MAX_ITEMS:
        raise r.fail(key, f"more than {MAX_ITEMS} items", "out_of_range")
    return r.each(key, make, ())


@dataclass(frozen=True)
class GazetteerRequest(Payload):
    MSG_TYPE: ClassVar[str] = "gazetteer"
    SCHEMA_VERSION: ClassVar[int] = 1

    def body(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _from(cls, r: Reader) -> "GazetteerRequest":
        return cls()


@dataclass(frozen=True)
class ObserveRequest(Payload):
    """What is perceived at (lat, lon): ``node`` is the waypoint the vehicle was sent to (a hint)."""

    MSG_TYPE: ClassVar[str] = "observe"
    SCHEMA_VERSION: ClassVar[int] = 1

    lat: float
    lon: float
    heading: float = 0.0
    node: int | None = None
    image: bool = False
    sightings: bool = True
    altitude: float | None = None
    camera_alt: float | None = None
    camera_pitch: float | None = None

    def body(self) -> dict[str, Any]:
        return {"lat": self.lat, "lon": self.lon, "heading": self.heading, "node": self.node, "image": self.image,
                "sightings": self.sightings, "altitude": self.altitude, "camera_alt": self.camera_alt,
                "camera_pitch": self.camera_pitch}

    @classmethod
    def _from(cls, r: Reader) -> "ObserveRequest":
        lo, hi = ALTITUDE_RANGE_M
        return cls(*_lat_lon(r), heading=r.number("heading", 0.0, lo=-HEADING_LIMIT_DEG, hi=HEADING_LIMIT_DEG),
                   node=r.opt_integer("node", lo=0, hi=(1 << 31) - 1), image=r.flag("image", False),
                   sightings=r.flag("sightings", True), altitude=r.opt_number("altitude", lo=lo, hi=hi),
                   camera_alt=r.opt_number("camera_alt", lo=lo, hi=hi),
                   camera_pitch=r.opt_number("camera_pitch", lo=PITCH_RANGE_DEG[0], hi=PITCH_RANGE_DEG[1]))


@dataclass(frozen=True)
class GazetteerReply(Payload):
    """The landmark names, and their other names (alias -> name)."""

    MSG_TYPE: ClassVar[str] = "gazetteer_reply"
    SCHEMA_VERSION: ClassVar[int] = 1

    names: tuple[str, ...]
    aliases: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"names": list(self.names), "aliases": dict(self.aliases)}

    @classmethod
    def _from(cls, r: Reader) -> "GazetteerReply":
        names = r.texts("names")
        if len(names) > MAX_ITEMS:
            raise r.fail("names", f"more than {MAX_ITEMS} names", "out_of_range")
        raw = r.mapping("aliases") or {}
        bad = next((a for a, n in raw.items() if not isinstance(n, str)), None)
        if bad is not None:
            raise r.fail(f"aliases.{bad}", "must name a landmark by a string")
        return cls(names, dict(raw))


@dataclass(frozen=True)
class Move:
    """A waypoint on offer from the one observed, and where it is."""

    node: int
    bearing: float
    length: float
    lat: float
    lon: float

    def body(self) -> dict[str, Any]:
        return {"node": self.node, "bearing": self.bearing, "length": self.length, "lat": self.lat, "lon": self.lon}

    @classmethod
    def read(cls, r: Reader) -> "Move":
        return cls(r.integer("node", lo=0), r.number("bearing", lo=-360.0, hi=360.0),
                   r.number("length", lo=0.0, hi=MAX_DISTANCE_M), *_lat_lon(r))


@dataclass(frozen=True)
class Sighting:
    """A named landmark or POI seen at a bearing (degrees) and distance (m)."""

    name: str
    bearing: float
    distance: float

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "bearing": self.bearing, "distance": self.distance}

    @classmethod
    def read(cls, r: Reader) -> "Sighting":
        return cls(_name(r), r.number("bearing", lo=-360.0, hi=360.0), r.number("distance", lo=0.0, hi=MAX_DISTANCE_M))


@dataclass(frozen=True)
class Observation(Payload):
    """What is perceived at waypoint ``node`` (the one within reach of the reported position, else the nearest)."""

    MSG_TYPE: ClassVar[str] = "observation"
    SCHEMA_VERSION: ClassVar[int] = 1

    node: int
    lat: float
    lon: float
    snap_m: float = 0.0
    moves: tuple[Move, ...] = ()
    landmarks: tuple[Sighting, ...] = ()
    pois: tuple[Sighting, ...] = ()
    image_png: bytes | None = None
    altitude_m: float | None = None     # echoes the request's altitude (None: the cruise view)
    camera_pitch: float | None = None   # echoes a frame-only request's pitch

    def body(self) -> dict[str, Any]:
        return {"node": self.node, "lat": self.lat, "lon": self.lon, "snap_m": self.snap_m,
                "moves": [m.body() for m in self.moves], "landmarks": [s.body() for s in self.landmarks],
                "pois": [p.body() for p in self.pois], "image_png": self.image_png, "altitude_m": self.altitude_m,
                "camera_pitch": self.camera_pitch}

    @classmethod
    def _from(cls, r: Reader) -> "Observation":
        lo, hi = ALTITUDE_RANGE_M
        image = None if r.data.get("image_png") is None else r.blob("image_png")
        return cls(r.integer("node", lo=0), *_lat_lon(r), snap_m=r.number("snap_m", 0.0, lo=0.0, hi=MAX_DISTANCE_M),
                   moves=_bounded(r, "moves", Move.read), landmarks=_bounded(r, "landmarks", Sighting.read),
                   pois=_bounded(r, "pois", Sighting.read), image_png=image,
                   altitude_m=r.opt_number("altitude_m", lo=lo, hi=hi),
                   camera_pitch=r.opt_number("camera_pitch", lo=PITCH_RANGE_DEG[0], hi=PITCH_RANGE_DEG[1]))


@dataclass(frozen=True)
class FeedError(Payload):
    """A request the feed could not serve, and why (the feed counts it and keeps serving)."""

    MSG_TYPE: ClassVar[str] = "feed_error"
    SCHEMA_VERSION: ClassVar[int] = 1

    error: str

    def body(self) -> dict[str, Any]:
        return {"error": self.error}

    @classmethod
    def _from(cls, r: Reader) -> "FeedError":
        return cls(r.text("error")[:1000])


REQUESTS = channel("world_feed", (GazetteerRequest, ObserveRequest), MAX_REQUEST_BYTES)
REPLIES = channel("world_feed", (GazetteerReply, Observation, FeedError), MAX_REPLY_BYTES)

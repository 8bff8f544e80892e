"""Discovery messages on the wire: msgpack in the telemetry envelope's shape.

The frame is ``{v, type, vehicle_id, seq, t_ns, payload}`` like every
telemetry message (`contract.envelope`), with type ``discovery``
and the team name in the payload. It travels on the vehicle-to-vehicle link,
not the telemetry link, so it does not add a type to the telemetry envelope.
A frame from the peer is untrusted: every field is type-checked and every
failure raises `EnvelopeError` with a short reason that the share counts.
"""

from __future__ import annotations

import math
import time
from typing import Any

import msgpack

from onboard.agent.exploration_view import Discovery, Fix, SeenPoi, VisitedWaypoint
from contract.envelope import EnvelopeError

DISCOVERY_VERSION = 1
DISCOVERY_TYPE = "discovery"
MAX_FRAME_BYTES = 1 << 20
_KEYS = {"v", "type", "vehicle_id", "seq", "t_ns", "payload"}
_PAYLOAD_KEYS = {"team", "step", "pose", "visited", "pois", "claim", "full"}


def _fix(f: Fix) -> list[Any]:
    return [f.waypoint, f.east, f.north]


def encode(d: Discovery, *, team: str, seq: int, t_ns: int | None = None) -> bytes:
    payload = {"team": team, "step": d.step, "pose": _fix(d.pose),
               "visited": [[_fix(v.fix), [_fix(x) for x in v.exits]] for v in d.visited],
               "pois": [[p.name, p.east, p.north] for p in d.pois],
               "claim": None if d.claim is None else _fix(d.claim), "full": d.full}
    doc = {"v": DISCOVERY_VERSION, "type": DISCOVERY_TYPE, "vehicle_id": d.vehicle_id, "seq": int(seq),
           "t_ns": time.time_ns() if t_ns is None else int(t_ns), "payload": payload}
    return msgpack.packb(doc, use_bin_type=True)


def decode(frame: bytes, *, team: str, max_bytes: int = MAX_FRAME_BYTES) -> tuple[int, Discovery]:
    """(seq, discovery) from one untrusted frame; raises `EnvelopeError` with a counter name."""
    if len(frame) > max_bytes:
        raise EnvelopeError("oversized", f"frame of {len(frame)} bytes exceeds {max_bytes}")
    try:
        doc = msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=max_bytes,
                              max_str_len=max_bytes, max_array_len=max_bytes, max_map_len=max_bytes,
                              max_ext_len=max_bytes)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many types for hostile input
        raise EnvelopeError("malformed", f"not msgpack: {type(exc).__name__}") from exc
    if not isinstance(doc, dict) or set(doc) != _KEYS:
        raise EnvelopeError("bad_envelope", "not a discovery envelope")
    if type(doc["v"]) is not int or doc["v"] != DISCOVERY_VERSION:
        raise EnvelopeError("wrong_version", f"version {doc['v']!r}, expected {DISCOVERY_VERSION}")
    if doc["type"] != DISCOVERY_TYPE:
        raise EnvelopeError("unknown_type", f"message type {doc['type']!r}")
    vid, seq, p = doc["vehicle_id"], doc["seq"], doc["payload"]
    if not isinstance(vid, str) or not vid or type(seq) is not int or seq < 1:
        raise EnvelopeError("bad_envelope", "vehicle_id or seq invalid")
    if not isinstance(p, dict) or set(p) != _PAYLOAD_KEYS:
        raise EnvelopeError("bad_payload", "payload keys")
    if p["team"] != team:
        raise EnvelopeError("foreign", f"team {p['team']!r}")
    try:
        d = Discovery(
            vehicle_id=vid, step=_int(p["step"]), pose=_to_fix(p["pose"]),
            visited=tuple(VisitedWaypoint(_to_fix(f), tuple(_to_fix(x) for x in _list(xs)))
                          for f, xs in (_pair(v) for v in _list(p["visited"]))),
            pois=tuple(_to_poi(q) for q in _list(p["pois"])),
            claim=None if p["claim"] is None else _to_fix(p["claim"]), full=p["full"] is True)
    except (TypeError, ValueError) as exc:
        raise EnvelopeError("bad_payload", str(exc)[:200]) from exc
    return seq, d


def _list(x: Any) -> list[Any]:
    if not isinstance(x, list):
        raise TypeError(f"expected a list, got {type(x).__name__}")
    return x


def _pair(x: Any) -> tuple[Any, Any]:
    x = _list(x)
    if len(x) != 2:
        raise ValueError("expected [fix, exits]")
    return x[0], x[1]


def _int(x: Any) -> int:
    if type(x) is not int or x < 0:
        raise ValueError(f"expected a non-negative int, got {x!r}")
    return x


def _num(x: Any) -> float:
    if type(x) not in (int, float) or not math.isfinite(x):
        raise ValueError(f"expected a finite number, got {x!r}")
    return float(x)


def _to_fix(x: Any) -> Fix:
    x = _list(x)
    if len(x) != 3:
        raise ValueError("a fix is [waypoint, east, north]")
    return Fix(_int(x[0]), _num(x[1]), _num(x[2]))


def _to_poi(x: Any) -> SeenPoi:
    x = _list(x)
    if len(x) != 3 or not isinstance(x[0], str):
        raise ValueError("a POI is [name, east, north]")
    return SeenPoi(x[0], _num(x[1]), _num(x[2]))

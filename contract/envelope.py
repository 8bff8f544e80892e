"""The telemetry envelope: ``{v, type, vehicle_id, stream, seq, t_ns, payload}`` in msgpack.

One module encodes and decodes so that the vehicle and the ground station can
never disagree on the wire format. Decoding is defensive: a frame from the
network is untrusted, so every field is type- and range-checked and every
failure raises :class:`EnvelopeError` with a short ``reason`` the ground
station counts.

Version 3 added the ``mission_analysis`` type (the vehicle's own analysis of a
flight, which the ground computes with, used to ride in an event's detail).

Version 2 added ``stream``: the random id of the vehicle journal that numbered
the message. A vehicle whose data folder was reset starts a new journal, a new
stream and seq 1 again; keyed by (vehicle_id, stream, seq) its new flight is
new data, not a collision with the old one. Version 1 frames (no stream) are
refused as ``wrong_version``: vehicle and ground station ship together, and a
v1 frame cannot say which journal its seq belongs to. Version 2 frames are
refused too: a version names the set of types, and v2's lacks one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import msgpack

# Wire format version; a receiver rejects any other (counted as "wrong_version").
ENVELOPE_VERSION = 3

# Message types a vehicle sends. A new type is a new envelope version.
MESSAGE_TYPES: frozenset[str] = frozenset({
    "state",         # VehicleState snapshot (throttled to state_rate_hz)
    "event",         # {kind, detail}: mission start/end, failsafe, refused command, ...
    "agent_step",    # FrameLog: current_state, decision with reason, pose, distance estimate
    "detections",    # perception detections of one frame
    "plan",          # the agent's current plan
    "map",           # semantic map snapshot, PNG bytes (throttled)
    "flight_start",  # opens a flight in the ground station's log
    "flight_end",    # closes it
    "mission_analysis",  # the vehicle's own end-of-mission analysis (read into the ground's lesson)
})

_KEYS = ("v", "type", "vehicle_id", "stream", "seq", "t_ns", "payload")

# SQLite integers are signed 64 bit: a seq or time at or above this cannot be stored.
INT_LIMIT = 1 << 63

# A stream id: 16 lowercase hex digits (64 random bits), made by the vehicle's journal.
STREAM_ID = re.compile(r"[0-9a-f]{16}")


class EnvelopeError(ValueError):
    """A frame is not a valid envelope; ``reason`` is a short counter name."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Envelope:
    v: int
    type: str
    vehicle_id: str
    stream: str
    seq: int
    t_ns: int
    payload: Any

    def to_dict(self) -> dict[str, Any]:
        return {"v": self.v, "type": self.type, "vehicle_id": self.vehicle_id, "stream": self.stream,
                "seq": self.seq, "t_ns": self.t_ns, "payload": self.payload}


def is_wire_int(value: Any, lo: int = 0) -> bool:
    """An integer (not a bool) that fits a signed 64-bit SQLite column and is at least ``lo``."""
    return type(value) is int and lo <= value < INT_LIMIT


def is_stream_id(value: Any) -> bool:
    return isinstance(value, str) and STREAM_ID.fullmatch(value) is not None


def encode(vehicle_id: str, seq: int, msg_type: str, payload: Any, t_ns: int | None = None, *,
           stream: str) -> bytes:
    """One envelope as msgpack bytes (bytes payload fields stay binary, e.g. PNGs)."""
    if msg_type not in MESSAGE_TYPES:
        raise EnvelopeError("unknown_type", f"unknown message type {msg_type!r}")
    if not is_stream_id(stream):
        raise EnvelopeError("bad_envelope", f"stream must be 16 lowercase hex digits, got {stream!r}")
    doc = {"v": ENVELOPE_VERSION, "type": msg_type, "vehicle_id": vehicle_id, "stream": stream, "seq": int(seq),
           "t_ns": time.time_ns() if t_ns is None else int(t_ns), "payload": payload}
    try:
        return msgpack.packb(doc, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise EnvelopeError("unencodable", f"payload of {msg_type!r} cannot be encoded: {exc}") from exc


def decode(frame: bytes, *, max_bytes: int) -> Envelope:
    """Parse and validate one untrusted frame; raises :class:`EnvelopeError`."""
    if len(frame) > max_bytes:
        raise EnvelopeError("oversized", f"frame of {len(frame)} bytes exceeds {max_bytes}")
    try:
        doc = msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=max_bytes, max_str_len=max_bytes,
                              max_array_len=max_bytes, max_map_len=max_bytes, max_ext_len=max_bytes)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many types for hostile input
        raise EnvelopeError("malformed", f"not msgpack: {type(exc).__name__}") from exc
    if not isinstance(doc, dict):
        raise EnvelopeError("malformed", f"envelope is a {type(doc).__name__}, not a map")
    v = doc.get("v")
    if type(v) is not int or v != ENVELOPE_VERSION:
        raise EnvelopeError("wrong_version", f"envelope version {v!r}, expected {ENVELOPE_VERSION}")
    if set(doc) != set(_KEYS):
        raise EnvelopeError("bad_envelope", f"envelope keys {sorted(map(str, doc))}")
    msg_type, vehicle_id, stream, seq, t_ns = doc["type"], doc["vehicle_id"], doc["stream"], doc["seq"], doc["t_ns"]
    if not isinstance(msg_type, str) or msg_type not in MESSAGE_TYPES:
        raise EnvelopeError("unknown_type", f"unknown message type {msg_type!r}")
    if not isinstance(vehicle_id, str) or not vehicle_id:
        raise EnvelopeError("bad_envelope", "vehicle_id must be a non-empty string")
    if not is_stream_id(stream):
        raise EnvelopeError("bad_envelope", f"stream must be 16 lowercase hex digits, got {stream!r}")
    if type(seq) is not int or type(t_ns) is not int:
        raise EnvelopeError("bad_envelope", f"seq and t_ns must be integers, got {seq!r}, {t_ns!r}")
    if not is_wire_int(seq, 1):
        raise EnvelopeError("out_of_range", f"seq must be within [1, 2^63), got {seq}")
    if not is_wire_int(t_ns, 0):
        raise EnvelopeError("out_of_range", f"t_ns must be within [0, 2^63), got {t_ns}")
    return Envelope(v, msg_type, vehicle_id, stream, seq, t_ns, doc["payload"])

"""Replay and ack: what the ground station asks a vehicle's journal, and what the vehicle answers.

The ground (``ground_station/ingest.py``, a DEALER) asks the vehicle's ROUTER
(``onboard/telemetry/replay_server.py``):

- ``status`` -> ``status_reply`` (vehicle, stream, first / last / acked seq): the
  ground notices loss at the tail of a stream, which no later seq would reveal;
- ``replay`` (``first``..``last``) -> ``replay_reply`` with stored envelopes in order,
  bounded per answer (the ground asks again for the rest);
- ``ack`` (``upto`` of ``stream``) -> ``ack_reply``, or ``ack_refused`` when the ack
  names another stream: a ground that has not yet seen this vehicle's data reset
  would otherwise prune the new journal's messages unsent;
- anything else -> ``replay_error`` (counted, never fatal).

Seqs lie in [0, 2^63) (SQLite's integers) and a reply's ``first_seq`` is at most
``last_seq + 1``: every number a vehicle claims is range-checked before it
steers any work on the ground.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.envelope import INT_LIMIT, STREAM_ID
from contract.payloads.base import Payload, Reader
from contract.wire import Channel, channel

MAX_SEQ = INT_LIMIT - 1
MAX_REASON_CHARS = 500


def _seq(r: Reader, key: str) -> int:
    return r.integer(key, lo=0, hi=MAX_SEQ)


def _stream(r: Reader, key: str = "stream") -> str:
    value = r.text(key)
    if STREAM_ID.fullmatch(value) is None:
        raise r.fail(key, f"must be 16 lowercase hex digits, got {value[:40]!r}", "out_of_range")
    return value


def _cursors(r: Reader) -> tuple[str, str, int, int]:
    """vehicle_id, stream, first_seq, last_seq of a status or replay reply, first at most last + 1."""
    vehicle, stream, first, last = r.text("vehicle_id", non_empty=True), _stream(r), _seq(r, "first_seq"), \
        _seq(r, "last_seq")
    if first > last + 1:
        raise r.fail("first_seq", f"{first} is beyond last_seq + 1 ({last + 1})", "out_of_range")
    return vehicle, stream, first, last


@dataclass(frozen=True)
class StatusRequest(Payload):
    MSG_TYPE: ClassVar[str] = "status"
    SCHEMA_VERSION: ClassVar[int] = 1

    def body(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _from(cls, r: Reader) -> "StatusRequest":
        return cls()


@dataclass(frozen=True)
class ReplayRequest(Payload):
    """The stored envelopes of seqs ``first``..``last`` (inclusive)."""

    MSG_TYPE: ClassVar[str] = "replay"
    SCHEMA_VERSION: ClassVar[int] = 1

    first: int
    last: int

    def body(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last}

    @classmethod
    def _from(cls, r: Reader) -> "ReplayRequest":
        return cls(_seq(r, "first"), _seq(r, "last"))


@dataclass(frozen=True)
class AckRequest(Payload):
    """The ground holds everything up to ``upto`` of ``stream``: the journal may prune it."""

    MSG_TYPE: ClassVar[str] = "ack"
    SCHEMA_VERSION: ClassVar[int] = 1

    upto: int
    stream: str

    def body(self) -> dict[str, Any]:
        return {"upto": self.upto, "stream": self.stream}

    @classmethod
    def _from(cls, r: Reader) -> "AckRequest":
        return cls(_seq(r, "upto"), _stream(r))


@dataclass(frozen=True)
class StatusReply(Payload):
    MSG_TYPE: ClassVar[str] = "status_reply"
    SCHEMA_VERSION: ClassVar[int] = 1

    vehicle_id: str
    stream: str
    first_seq: int
    last_seq: int
    acked_seq: int

    def body(self) -> dict[str, Any]:
        return {"vehicle_id": self.vehicle_id, "stream": self.stream, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "acked_seq": self.acked_seq}

    @classmethod
    def _from(cls, r: Reader) -> "StatusReply":
        return cls(*_cursors(r), acked_seq=_seq(r, "acked_seq"))


@dataclass(frozen=True)
class ReplayReply(Payload):
    """Stored envelopes (each one untrusted frame for the envelope's own decoder), in seq order."""

    MSG_TYPE: ClassVar[str] = "replay_reply"
    SCHEMA_VERSION: ClassVar[int] = 1

    vehicle_id: str
    stream: str
    first_seq: int
    last_seq: int
    frames: tuple[bytes, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"vehicle_id": self.vehicle_id, "stream": self.stream, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "frames": list(self.frames)}

    @classmethod
    def _from(cls, r: Reader) -> "ReplayReply":
        cursors = _cursors(r)
        frames = r.items("frames")
        bad = next((i for i, f in enumerate(frames) if not isinstance(f, bytes)), None)
        if bad is not None:
            raise r.fail(f"frames[{bad}]", f"must be bytes, got {type(frames[bad]).__name__}")
        return cls(*cursors, frames=tuple(frames))


@dataclass(frozen=True)
class AckReply(Payload):
    MSG_TYPE: ClassVar[str] = "ack_reply"
    SCHEMA_VERSION: ClassVar[int] = 1

    upto: int

    def body(self) -> dict[str, Any]:
        return {"upto": self.upto}

    @classmethod
    def _from(cls, r: Reader) -> "AckReply":
        return cls(_seq(r, "upto"))


@dataclass(frozen=True)
class AckRefused(Payload):
    """The ack named another stream than this journal's (``stream``)."""

    MSG_TYPE: ClassVar[str] = "ack_refused"
    SCHEMA_VERSION: ClassVar[int] = 1

    stream: str
    reason: str

    def body(self) -> dict[str, Any]:
        return {"stream": self.stream, "reason": self.reason}

    @classmethod
    def _from(cls, r: Reader) -> "AckRefused":
        return cls(_stream(r), r.text("reason")[:MAX_REASON_CHARS])


@dataclass(frozen=True)
class ReplayError(Payload):
    MSG_TYPE: ClassVar[str] = "replay_error"
    SCHEMA_VERSION: ClassVar[int] = 1

    reason: str

    def body(self) -> dict[str, Any]:
        return {"reason": self.reason}

    @classmethod
    def _from(cls, r: Reader) -> "ReplayError":
        return cls(r.text("reason")[:MAX_REASON_CHARS])


Request = StatusRequest | ReplayRequest | AckRequest
Reply = StatusReply | ReplayReply | AckReply | AckRefused | ReplayError


def requests(max_bytes: int) -> Channel[Any]:
    """The vehicle's reader of requests, bounded as its ROUTER socket is."""
    return channel("replay", (StatusRequest, ReplayRequest, AckRequest), max_bytes)


def replies(max_bytes: int) -> Channel[Any]:
    """The ground's reader of replies, bounded as its DEALER socket is."""
    return channel("replay", (StatusReply, ReplayReply, AckReply, AckRefused, ReplayError), max_bytes)

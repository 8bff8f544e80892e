"""Discovery messages on the wire: the agent's `Discovery` as `contract.exploration_discovery` frames.

The wire format (typed, versioned, range-checked) is the contract's; this
module only converts between it and the exploration view's own types, and
turns a refused frame into an `EnvelopeError` whose short reason the share
counts (``malformed``, ``oversized``, ``unknown_type``, ``wrong_version``,
``bad_payload``, and ``foreign`` for a frame of another team). The frame
travels on the vehicle-to-vehicle link, not the telemetry link, so it adds no
type to the telemetry envelope.
"""

from __future__ import annotations

import time

from contract.envelope import EnvelopeError
from contract.exploration_discovery import MAX_FRAME_BYTES, ExplorationDiscovery, WireFix, WirePoi, WireVisit, frames
from contract.payloads.base import PayloadError
from sim.exploration.exploration_view import Discovery, Fix, SeenPoi, VisitedWaypoint

__all__ = ["MAX_FRAME_BYTES", "decode", "encode"]

# PayloadError reasons kept as they are; any other (a field's) is counted as bad_payload.
_FRAME_REASONS = {"malformed", "oversized", "unknown_type", "wrong_version"}


def _wire(f: Fix) -> WireFix:
    return WireFix(int(f.waypoint), float(f.east), float(f.north))


def _fix(f: WireFix) -> Fix:
    return Fix(f.waypoint, f.east, f.north)


def encode(d: Discovery, *, team: str, seq: int, t_ns: int | None = None) -> bytes:
    msg = ExplorationDiscovery(
        vehicle_id=d.vehicle_id, team=team, seq=int(seq), t_ns=time.time_ns() if t_ns is None else int(t_ns),
        step=int(d.step), pose=_wire(d.pose),
        visited=tuple(WireVisit(_wire(v.fix), tuple(_wire(x) for x in v.exits)) for v in d.visited),
        pois=tuple(WirePoi(p.name, float(p.east), float(p.north)) for p in d.pois),
        claim=None if d.claim is None else _wire(d.claim), full=bool(d.full))
    return frames().pack(msg)


def decode(frame: bytes, *, team: str, max_bytes: int = MAX_FRAME_BYTES) -> tuple[int, Discovery]:
    """(seq, discovery) from one untrusted frame; raises `EnvelopeError` with a counter name."""
    try:
        msg = frames(max_bytes).unpack(frame)
    except PayloadError as exc:
        raise EnvelopeError(exc.reason if exc.reason in _FRAME_REASONS else "bad_payload", str(exc)[:200]) from exc
    if msg.team != team:
        raise EnvelopeError("foreign", f"team {msg.team!r}")
    return msg.seq, Discovery(
        vehicle_id=msg.vehicle_id, step=msg.step, pose=_fix(msg.pose),
        visited=tuple(VisitedWaypoint(_fix(v.fix), tuple(_fix(x) for x in v.exits)) for v in msg.visited),
        pois=tuple(SeenPoi(p.name, p.east, p.north) for p in msg.pois),
        claim=None if msg.claim is None else _fix(msg.claim), full=msg.full)

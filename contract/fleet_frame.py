"""The fleet channel's frames: a ``fleet_report`` or a ``fleet_discovery``, told apart by name.

One frame is the msgpack map of the payload's ``encode()`` with ``"type"``
added (:mod:`contract.wire`), so that a telemetry envelope sent to the wrong
port, or a payload of a kind this reader does not know, is refused by name,
not misread. The size is bounded before anything is parsed (and msgpack's own
limits are set to the same bound), then every field is checked by the
payload's reader.
"""

from __future__ import annotations

from contract.fleet_discovery import FleetDiscovery
from contract.fleet_report import FleetReport
from contract.wire import TYPE_KEY, channel

__all__ = ["FleetFrame", "TYPE_KEY", "pack", "unpack"]

FleetFrame = FleetReport | FleetDiscovery
_KINDS = (FleetReport, FleetDiscovery)


def pack(payload: FleetFrame) -> bytes:
    """The frame of one payload; raises :class:`PayloadError` for one the receiver would refuse."""
    return channel("fleet", _KINDS, 1 << 30).pack(payload)


def unpack(frame: bytes, *, max_bytes: int) -> FleetFrame:
    """Parse and check one untrusted frame; raises :class:`PayloadError` with a short ``reason``."""
    return channel("fleet", _KINDS, max_bytes).unpack(frame)

"""The fleet channel's frames: a ``fleet_report`` or a ``fleet_discovery``, told apart by name.

One frame is the msgpack map of the payload's ``encode()`` with ``"type"``
added, so that a telemetry envelope sent to the wrong port, or a payload of
a kind this reader does not know, is refused by name, not misread. The size
is bounded before anything is parsed (and msgpack's own limits are set to
the same bound), then every field is checked by the payload's reader.
"""

from __future__ import annotations

import msgpack

from contract.fleet_discovery import FleetDiscovery
from contract.fleet_report import FleetReport
from contract.payloads.base import PayloadError

TYPE_KEY = "type"
FleetFrame = FleetReport | FleetDiscovery
_KINDS: dict[str, type[FleetReport] | type[FleetDiscovery]] = {
    FleetReport.MSG_TYPE: FleetReport, FleetDiscovery.MSG_TYPE: FleetDiscovery}


def pack(payload: FleetFrame) -> bytes:
    """The frame of one payload; raises :class:`PayloadError` for one the receiver would refuse."""
    frame = msgpack.packb({TYPE_KEY: payload.MSG_TYPE, **payload.encode()}, use_bin_type=True)
    unpack(frame, max_bytes=len(frame))  # never send what no member would accept
    return frame


def unpack(frame: bytes, *, max_bytes: int) -> FleetFrame:
    """Parse and check one untrusted frame; raises :class:`PayloadError` with a short ``reason``."""
    if len(frame) > max_bytes:
        raise PayloadError("fleet", "(frame)", f"{len(frame)} bytes exceed {max_bytes}", reason="oversized")
    try:
        doc = msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=max_bytes, max_str_len=max_bytes,
                              max_array_len=max_bytes, max_map_len=max_bytes, max_ext_len=max_bytes)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many types for hostile input
        raise PayloadError("fleet", "(frame)", f"not msgpack: {type(exc).__name__}", reason="malformed") from exc
    kind = _KINDS.get(doc.get(TYPE_KEY)) if isinstance(doc, dict) and isinstance(doc.get(TYPE_KEY), str) else None
    if kind is None:
        got = doc.get(TYPE_KEY) if isinstance(doc, dict) else type(doc).__name__
        raise PayloadError("fleet", TYPE_KEY, f"not a fleet frame ({got!r})", reason="unknown_type")
    return kind.decode(doc)

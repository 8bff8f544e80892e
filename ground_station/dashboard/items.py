"""Envelopes from the flight log as JSON-safe dashboard items.

Each payload is decoded with its :mod:`contract.messages` class and sent
re-encoded, so the browser sees exactly the fields of the schema; a payload
that does not decode is counted (``ItemMaker.refused``, by message type) and
left out, never passed on half-read. Three adjustments JSON needs or the map
wants: bytes become ``{"bytes": n}`` (map PNGs are served separately),
non-finite floats become ``null`` (the vehicle reports NaN for unknown values)
and state messages gain ``pos``: ``[east, north]`` in local metres, from the
autopilot's local position or, without one, from lat/lon around home.

Many vehicles share one map only in one frame: given the map's origin
(``frame_origin``, the onboard map the dashboard draws), a state item also carries
``shift``: ``[east, north]`` of the vehicle's home in the map's frame, which the page
adds to the vehicle's local positions and to the agent's (whose frame is the
take-off point). Without a map origin, or before a home is known, there is no
``shift`` and the page draws the vehicle in its own frame.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from collections import Counter

from common.geodesy import GeoPoint, ned_from_geo
from contract.messages import PayloadError, State, decode_payload

log = logging.getLogger("aerie.ground.dashboard")


def json_safe(value: Any) -> Any:
    """A copy that ``json.dumps(..., allow_nan=False)`` accepts."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": len(value)}
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _finite(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def local_position(state: State, origin: tuple[float, float] | None) -> list[float] | None:
    """``[east, north]`` metres: the local NED position if valid, else lat/lon relative to ``origin``.

    ``origin`` is (lat, lon) of home or of the flight's first fix, projected
    like the autopilot's own local frame (:mod:`common.geodesy`).
    """
    north, east = state.north_m, state.east_m
    if _finite(north, east):
        return [round(float(east), 3), round(float(north), 3)]
    lat, lon = state.lat, state.lon
    if origin is None or not _finite(lat, lon):
        return None
    try:
        home, here = GeoPoint(*origin), GeoPoint(float(lat), float(lon))
    except ValueError:  # out-of-range lat/lon from a corrupt log: no position
        return None
    n, e = ned_from_geo(home, here.lat, here.lon)
    return [round(e, 3), round(n, 3)]


class ItemMaker:
    """Turns one vehicle's envelopes into items; remembers the lat/lon origin of the flight."""

    def __init__(self, frame_origin: tuple[float, float] | None = None) -> None:
        self.origin: tuple[float, float] | None = None
        self.frame_origin = frame_origin
        self.shift: list[float] | None = None
        self.refused: Counter[str] = Counter()

    def _shift(self) -> list[float] | None:
        """Where this flight's origin lies in the map's frame (``[east, north]``), if both are known."""
        if self.origin is None or self.frame_origin is None:
            return None
        try:
            n, e = ned_from_geo(GeoPoint(*self.frame_origin), *self.origin)
        except ValueError:
            return None
        return [round(float(e), 3), round(float(n), 3)]

    def item(self, env: dict[str, Any]) -> dict[str, Any] | None:
        """The item of one envelope, or None (counted) when its payload does not decode."""
        msg_type = str(env.get("type"))
        try:
            payload = decode_payload(msg_type, env.get("payload"))
        except PayloadError as exc:
            self.refused[msg_type] += 1
            if self.refused[msg_type] == 1:   # once per type: a bad flight must not flood the log per viewer
                log.warning("payload refused (further %s payloads that fail are only counted): %s", msg_type, exc,
                            extra={"fields": {"seq": env.get("seq"), "reason": exc.reason}})
            return None
        if msg_type == "flight_start":
            self.origin, self.shift = None, None
        out: dict[str, Any] = {"seq": env.get("seq"), "t_ns": env.get("t_ns"), "type": msg_type,
                               "vehicle_id": env.get("vehicle_id"), "payload": json_safe(payload.body())}
        if isinstance(payload, State):
            if self.origin is None:
                home, fix = (payload.home_lat, payload.home_lon), (payload.lat, payload.lon)
                self.origin = home if _finite(*home) else fix if _finite(*fix) else None
                self.shift = self._shift()
            out["pos"] = local_position(payload, self.origin)
            if self.shift is not None:
                out["shift"] = self.shift
        return out

    def items(self, envelopes: Any) -> list[dict[str, Any]]:
        """The items of those envelopes that decode."""
        return [it for env in envelopes if (it := self.item(env)) is not None]

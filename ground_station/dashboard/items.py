"""Envelopes from the flight log as JSON-safe dashboard items.

The browser gets the stored envelopes almost unchanged (so a new payload field
shows up without a server change), with three adjustments JSON needs or the
map wants: bytes become ``{"bytes": n}`` (map PNGs are served separately),
non-finite floats become ``null`` (the vehicle reports NaN for unknown values)
and state messages gain ``pos``: ``[east, north]`` in local metres, from the
autopilot's local position or, without one, from lat/lon around home.
"""

from __future__ import annotations

import math
from typing import Any

from contract.geodesy import GeoPoint, ned_from_geo


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


def local_position(state: dict[str, Any], origin: tuple[float, float] | None) -> list[float] | None:
    """``[east, north]`` metres: the local NED position if valid, else lat/lon relative to ``origin``.

    ``origin`` is (lat, lon) of home or of the flight's first fix, projected
    like the autopilot's own local frame (:mod:`contract.geodesy`).
    """
    north, east = state.get("north_m"), state.get("east_m")
    if _finite(north, east):
        return [round(float(east), 3), round(float(north), 3)]
    lat, lon = state.get("lat"), state.get("lon")
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

    def __init__(self) -> None:
        self.origin: tuple[float, float] | None = None

    def item(self, env: dict[str, Any]) -> dict[str, Any]:
        msg_type = env.get("type")
        payload = env.get("payload")
        if msg_type == "flight_start":
            self.origin = None
        out: dict[str, Any] = {"seq": env.get("seq"), "t_ns": env.get("t_ns"), "type": msg_type,
                               "vehicle_id": env.get("vehicle_id"), "payload": json_safe(payload)}
        if msg_type == "state" and isinstance(payload, dict):
            if self.origin is None:
                home = (payload.get("home_lat"), payload.get("home_lon"))
                fix = (payload.get("lat"), payload.get("lon"))
                self.origin = home if _finite(*home) else fix if _finite(*fix) else None
            out["pos"] = local_position(payload, self.origin)
        return out

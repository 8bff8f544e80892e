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

# Metres per degree of latitude (spherical Earth; plenty for a dashboard map).
_M_PER_DEG = 6371008.8 * math.pi / 180.0


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

    ``origin`` is (lat, lon) of home or of the flight's first fix; an equirectangular
    projection is exact enough over the few kilometres a flight covers.
    """
    north, east = state.get("north_m"), state.get("east_m")
    if _finite(north, east):
        return [round(float(east), 3), round(float(north), 3)]
    lat, lon = state.get("lat"), state.get("lon")
    if origin is None or not _finite(lat, lon):
        return None
    lat0, lon0 = origin
    n = (float(lat) - lat0) * _M_PER_DEG
    e = (float(lon) - lon0) * _M_PER_DEG * math.cos(math.radians(lat0))
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

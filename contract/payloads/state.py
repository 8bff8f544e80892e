"""``state``: a snapshot of the vehicle as the flight bridge sees it (``firmware_bridge.VehicleState``).

Every field may be unknown, as in ``VehicleState`` itself: a float is NaN until
the autopilot reports it, a mode "UNKNOWN". So a missing key decodes to that
unknown value, NaN is accepted, and infinities and out-of-range positions are
refused (a latitude of 300 is a corrupt frame, not a place).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader, plain

_NAN = math.nan

# Fields with a range beyond "finite or NaN".
_RANGES: dict[str, tuple[float, float]] = {
    "lat": (-90.0, 90.0), "lon": (-180.0, 180.0), "home_lat": (-90.0, 90.0), "home_lon": (-180.0, 180.0),
    "roll_deg": (-360.0, 360.0), "pitch_deg": (-360.0, 360.0), "yaw_deg": (-360.0, 360.0),
    "battery_percent": (0.0, 100.0), "battery_voltage_v": (0.0, 1000.0),
}


def _nan() -> float:
    return _NAN


@dataclass(frozen=True)
class State(Payload):
    MSG_TYPE: ClassVar[str] = "state"
    SCHEMA_VERSION: ClassVar[int] = 1

    lat: float = field(default_factory=_nan)
    lon: float = field(default_factory=_nan)
    alt_amsl_m: float = field(default_factory=_nan)
    rel_alt_m: float = field(default_factory=_nan)
    north_m: float = field(default_factory=_nan)
    east_m: float = field(default_factory=_nan)
    down_m: float = field(default_factory=_nan)
    vn_m_s: float = field(default_factory=_nan)
    ve_m_s: float = field(default_factory=_nan)
    vd_m_s: float = field(default_factory=_nan)
    roll_deg: float = field(default_factory=_nan)
    pitch_deg: float = field(default_factory=_nan)
    yaw_deg: float = field(default_factory=_nan)
    battery_percent: float = field(default_factory=_nan)
    battery_voltage_v: float = field(default_factory=_nan)
    flight_mode: str = "UNKNOWN"
    armed: bool = False
    in_air: bool = False
    landed_state: str = "UNKNOWN"
    gps_fix: str = "NO_GPS"
    gps_satellites: int = 0
    global_position_ok: bool = False
    home_position_ok: bool = False
    local_position_ok: bool = False
    armable: bool = False
    home_lat: float = field(default_factory=_nan)
    home_lon: float = field(default_factory=_nan)
    home_alt_amsl_m: float = field(default_factory=_nan)
    home_north_m: float = 0.0
    home_east_m: float = 0.0
    home_down_m: float = 0.0
    last_heartbeat_t: float = field(default_factory=_nan)
    last_update_t: float = field(default_factory=_nan)

    def __eq__(self, other: object) -> bool:
        """Field-wise, with NaN equal to NaN: an unknown value round-trips as unknown."""
        if type(other) is not State:
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a != b and not (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
                return False
        return True

    @classmethod
    def from_state(cls, state: Any) -> "State":
        """From a ``VehicleState``-like object (or mapping), taken by shape: enums become their names.

        A value the wire would refuse (an infinity, a latitude out of range) becomes
        unknown (NaN) here, so one bad sensor reading never costs the whole snapshot.
        """
        src = plain(state)
        if not isinstance(src, dict):
            raise TypeError(f"state must be a dataclass or mapping, got {type(state).__name__}")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in src:
                continue
            v = src[f.name]
            if f.type == "bool":
                values[f.name] = bool(v)
            elif f.type == "str":
                values[f.name] = str(v)
            elif f.type == "int":
                values[f.name] = max(0, int(v)) if isinstance(v, (int, float)) and math.isfinite(v) else 0
            else:
                x = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else _NAN
                lo, hi = _RANGES.get(f.name, (-math.inf, math.inf))
                values[f.name] = x if math.isfinite(x) and lo <= x <= hi else _NAN
        return cls(**values)

    def body(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def _from(cls, r: Reader) -> "State":
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.type == "bool":
                values[f.name] = r.flag(f.name, f.default)
            elif f.type == "str":
                values[f.name] = r.text(f.name, f.default)
            elif f.type == "int":
                values[f.name] = r.integer(f.name, f.default, lo=0, hi=1000)
            else:
                lo, hi = _RANGES.get(f.name, (None, None))
                dflt = f.default if isinstance(f.default, float) else _NAN
                values[f.name] = r.number(f.name, dflt, lo=lo, hi=hi, nan_ok=True)
        return cls(**values)

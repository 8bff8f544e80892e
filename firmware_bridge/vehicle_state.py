"""The latest known state of the vehicle, one immutable snapshot at a time.

Consumers read a snapshot instead of subscribing to MAVSDK themselves: a
snapshot is consistent, costs nothing to copy, and cannot leak a second
subscription to the same stream.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field


def _nan() -> float:
    return float("nan")


@dataclass(frozen=True)
class VehicleState:
    # Geodetic position (degrees, metres above mean sea level / above home).
    lat: float = field(default_factory=_nan)
    lon: float = field(default_factory=_nan)
    alt_amsl_m: float = field(default_factory=_nan)
    rel_alt_m: float = field(default_factory=_nan)
    # Local position and velocity, metres and m/s north/east/down of the EKF origin.
    north_m: float = field(default_factory=_nan)
    east_m: float = field(default_factory=_nan)
    down_m: float = field(default_factory=_nan)
    vn_m_s: float = field(default_factory=_nan)
    ve_m_s: float = field(default_factory=_nan)
    vd_m_s: float = field(default_factory=_nan)
    # Attitude, degrees.
    roll_deg: float = field(default_factory=_nan)
    pitch_deg: float = field(default_factory=_nan)
    yaw_deg: float = field(default_factory=_nan)
    # Battery.
    battery_percent: float = field(default_factory=_nan)
    battery_voltage_v: float = field(default_factory=_nan)
    # Modes and flags.
    flight_mode: str = "UNKNOWN"
    armed: bool = False
    in_air: bool = False
    landed_state: str = "UNKNOWN"
    # GPS.
    gps_fix: str = "NO_GPS"
    gps_satellites: int = 0
    # Health (MAVSDK's derived flags).
    global_position_ok: bool = False
    home_position_ok: bool = False
    local_position_ok: bool = False
    armable: bool = False
    # Home, degrees / metres AMSL.
    home_lat: float = field(default_factory=_nan)
    home_lon: float = field(default_factory=_nan)
    home_alt_amsl_m: float = field(default_factory=_nan)
    # Home in the autopilot's local NED frame (its EKF origin may differ from home).
    home_north_m: float = 0.0
    home_east_m: float = 0.0
    home_down_m: float = 0.0
    # Camera gimbal (MAVSDK's gimbal plugin; firmware_bridge/gimbal.py): its MAVSDK id (0: none announced),
    # pitch from the horizon, yaw from north and from the vehicle's nose (degrees), the time.monotonic() of
    # its last attitude report, and the end stops its manager announced (degrees; yaw from the nose).
    gimbal_id: int = 0
    gimbal_pitch_deg: float = field(default_factory=_nan)
    gimbal_yaw_deg: float = field(default_factory=_nan)
    gimbal_yaw_body_deg: float = field(default_factory=_nan)
    gimbal_attitude_t: float = field(default_factory=_nan)
    gimbal_attitude_us: int = 0  # the gimbal's own time of that report (its boot clock, microseconds)
    gimbal_rate_deg_s: float = field(default_factory=_nan)  # its faster axis's turn rate then (NaN: not reported)
    gimbal_pitch_min_deg: float = field(default_factory=_nan)
    gimbal_pitch_max_deg: float = field(default_factory=_nan)
    gimbal_yaw_min_deg: float = field(default_factory=_nan)
    gimbal_yaw_max_deg: float = field(default_factory=_nan)
    # Who controls the gimbal: "PRIMARY"/"SECONDARY" (this companion), "NONE", or "OTHER" (someone else).
    gimbal_control: str = "NONE"
    # time.monotonic() of the last autopilot HEARTBEAT, and of any telemetry at all.
    last_heartbeat_t: float = field(default_factory=_nan)
    last_update_t: float = field(default_factory=_nan)

    def heartbeat_age_s(self, now: float | None = None) -> float:
        """Seconds since the autopilot's last HEARTBEAT (inf before the first)."""
        if math.isnan(self.last_heartbeat_t):
            return math.inf
        return (time.monotonic() if now is None else now) - self.last_heartbeat_t

    @property
    def healthy(self) -> bool:
        return self.global_position_ok and self.home_position_ok and self.local_position_ok

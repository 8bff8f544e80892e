"""Typed settings of the flight link, the setpoint streamer and the safety envelope.

Defaults follow PX4's own conservative choices where one exists (link loss
after 2 s of silence, offboard needing >= 2 Hz setpoints) and common
regulation otherwise (120 m ceiling).

Every number has a range (``ranged``), checked when a file is loaded with the
key's name; the ``__post_init__`` checks repeat what matters for values built
in code, written so that NaN fails them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from common.typed_config import ranged


@dataclass(frozen=True)
class LinkConfig:
    # MAVSDK connection URL. PX4 SITL sends to UDP 14540 on loopback.
    url: str = "udpin://127.0.0.1:14540"
    # Seconds to wait for the autopilot's first HEARTBEAT before a clear error.
    connect_timeout_s: float = ranged(10.0, 0.1, 3600.0)
    # Seconds to wait for global/home/local position health after connecting.
    health_timeout_s: float = ranged(30.0, 0.1, 3600.0)
    # A command without an answer within this many seconds raises CommandTimeout.
    command_timeout_s: float = ranged(5.0, 0.1, 600.0)
    # Autopilot heartbeat older than this means the link is lost: pause the agent.
    heartbeat_timeout_s: float = ranged(2.0, 0.5, 30.0)
    # For a udpin URL, listen through a gate that passes MAVSDK only whole, CRC-valid MAVLink
    # datagrams: MAVSDK's parser carries a truncated frame into the next datagram and so lost
    # real heartbeats to junk on the port (19.7). MAVSDK itself then listens on loopback only.
    datagram_gate: bool = True

    def __post_init__(self) -> None:
        if not all(t > 0 for t in (self.connect_timeout_s, self.health_timeout_s, self.command_timeout_s)):
            raise ValueError("timeouts must be positive")
        if not 0.5 <= self.heartbeat_timeout_s <= 30:
            raise ValueError("heartbeat_timeout_s must be within 0.5..30 s")


@dataclass(frozen=True)
class StreamerConfig:
    # Offboard setpoint rate. PX4 needs >= 2 Hz; 20 Hz is MAVSDK's and PX4's norm.
    rate_hz: float = ranged(20.0, 2.0, 100.0)
    # No fresh intent within this many seconds -> stop streaming, so that PX4's own
    # offboard-loss failsafe (COM_OF_LOSS_T, then COM_OBL_RC_ACT) takes over.
    intent_timeout_s: float = ranged(1.0, 0.05, 60.0)
    # Run the streaming thread at real-time priority (SCHED_RR) where allowed, else nice -10.
    realtime_priority: bool = True

    def __post_init__(self) -> None:
        if not 2.0 <= self.rate_hz <= 100.0:
            raise ValueError("rate_hz must be within 2..100 (PX4 needs >= 2 Hz)")
        if not self.intent_timeout_s > 0:
            raise ValueError("intent_timeout_s must be positive")


@dataclass(frozen=True)
class GeofenceConfig:
    # Polygon vertices as [lat, lon] degrees; empty means only the radius applies.
    polygon: list[tuple[float, float]] = field(default_factory=list)
    # Maximum horizontal distance from home, metres (always applied).
    max_distance_from_home_m: float = ranged(500.0, 1.0, 100_000.0)
    # What to do with a target outside: "refuse" it, or "clamp" it to the fence.
    action: str = "refuse"

    def __post_init__(self) -> None:
        if self.polygon and len(self.polygon) < 3:
            raise ValueError("geofence.polygon needs at least 3 vertices")
        for i, (lat, lon) in enumerate(self.polygon):
            if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
                raise ValueError(f"geofence.polygon[{i}] = [{lat}, {lon}] is not a latitude (-90..90) "
                                 "and longitude (-180..180)")
        if not (math.isfinite(self.max_distance_from_home_m) and self.max_distance_from_home_m > 0):
            raise ValueError("max_distance_from_home_m must be a positive finite number")
        if self.action not in ("refuse", "clamp"):
            raise ValueError("geofence.action must be 'refuse' or 'clamp'")


@dataclass(frozen=True)
class SafetyConfig:
    geofence: GeofenceConfig = field(default_factory=GeofenceConfig)
    # Relative altitude bounds (metres above home) for any commanded target.
    altitude_floor_m: float = ranged(2.0, 0.0, 10_000.0)
    altitude_ceiling_m: float = ranged(120.0, 0.5, 10_000.0)
    # Speed clamps applied to every velocity intent and goto speed.
    max_horizontal_speed_m_s: float = ranged(8.0, 0.1, 50.0)
    max_vertical_speed_m_s: float = ranged(2.0, 0.1, 20.0)
    # Battery remaining, percent: warn, then return to launch, then land where it is.
    battery_warn_percent: float = ranged(30.0, 0.0, 100.0)
    battery_rtl_percent: float = ranged(20.0, 0.0, 100.0)
    battery_land_percent: float = ranged(10.0, 0.0, 100.0)

    def __post_init__(self) -> None:
        if not (0 <= self.altitude_floor_m < self.altitude_ceiling_m and math.isfinite(self.altitude_ceiling_m)):
            raise ValueError("need 0 <= altitude_floor_m < altitude_ceiling_m, both finite")
        if not all(0 < v < math.inf for v in (self.max_horizontal_speed_m_s, self.max_vertical_speed_m_s)):
            raise ValueError("speed limits must be positive finite numbers")
        if not (100 >= self.battery_warn_percent >= self.battery_rtl_percent >= self.battery_land_percent >= 0):
            raise ValueError("need battery warn >= rtl >= land, all within 0..100")


@dataclass(frozen=True)
class FleetConfig:
    # Keep separation from the other vehicles of a fleet (their positions come through the
    # bridge's update_traffic). Off for a vehicle flying alone.
    enabled: bool = False
    # This vehicle's number in the fleet (give it its MAVLink system id): it picks the altitude
    # layer, and the lower number keeps its path where two paths conflict.
    member_id: int = ranged(1, 1, 255)
    # Two vehicles in one altitude band must stay at least this far apart horizontally, metres.
    min_separation_m: float = ranged(10.0, 1.0, 1000.0)
    # Vehicles closer than this vertically share an altitude band, metres; a vehicle within half a
    # band of its layer is flying on it.
    altitude_band_m: float = ranged(5.0, 0.5, 500.0)
    # Whatever their bands, two vehicles nearer than min_separation_m horizontally must be at
    # least this far apart vertically, metres: a multirotor's downwash reaches well below it (one
    # 5 m above another was in it, issue 36.17). At least a band. Equal to min_separation_m, it
    # keeps every two vehicles outside the rule's cylinder at least min_separation_m apart in 3D.
    downwash_vertical_m: float = ranged(10.0, 0.5, 500.0)
    # Paths (own intent, others' velocities) are projected this far ahead, seconds. It must
    # cover a climb of downwash_vertical_m (5 s at the default 2 m/s) and the closing distance meanwhile.
    lookahead_s: float = ranged(6.0, 0.5, 60.0)
    # How late a vehicle may follow the predicted path, seconds: the autopilot's response, a
    # report up to one period old, the distance a climb takes to stop. The rule judges the
    # separation cylinder grown by the pair's closing speed (across, and up/down) times this.
    separation_margin_s: float = ranged(1.0, 0.0, 10.0)
    # Altitude layers above home: layer_base_m + member_id * layer_spacing_m. The yielding
    # vehicle of a conflict flies its layer; all do when the fleet channel is silent. The spacing
    # is at least downwash_vertical_m, plus a margin for how closely the autopilot holds an altitude.
    layer_base_m: float = ranged(12.0, 0.0, 10_000.0)
    layer_spacing_m: float = ranged(12.0, 0.5, 1000.0)
    # No traffic heard for this many seconds: the fleet picture is stale, the vehicle takes its
    # own altitude layer; one vehicle's report older than this is dropped from the picture.
    channel_timeout_s: float = ranged(3.0, 0.1, 600.0)

    def __post_init__(self) -> None:
        if not self.downwash_vertical_m >= self.altitude_band_m:
            raise ValueError("fleet.downwash_vertical_m must be at least fleet.altitude_band_m "
                             "(two vehicles in one band are nearer than the downwash minimum)")
        if not self.layer_spacing_m >= self.downwash_vertical_m:
            raise ValueError("fleet.layer_spacing_m must be at least fleet.downwash_vertical_m "
                             "(else two vehicles on neighbouring layers are stacked within the downwash minimum)")
        if not all(0 < v < math.inf for v in (self.min_separation_m, self.altitude_band_m, self.downwash_vertical_m,
                                              self.lookahead_s, self.channel_timeout_s)):
            raise ValueError("fleet distances and times must be positive finite numbers")

    @property
    def layer_alt_m(self) -> float:
        """This vehicle's own altitude layer, metres above home."""
        return self.layer_base_m + self.member_id * self.layer_spacing_m


@dataclass(frozen=True)
class GimbalConfig:
    # Point the camera with the vehicle's gimbal when the autopilot announces one (MAVLink gimbal
    # protocol v2, through MAVSDK's gimbal plugin); false: the vehicle turns to point it. The gimbal
    # moves no vehicle, so the safety envelope has nothing to say about it.
    use: bool = True
    # A gimbal announced within this many seconds of connecting is used. MAVSDK asks each component
    # for it on the component's HEARTBEATs (1 Hz), so a gimbal is found within a second or two.
    discovery_s: float = ranged(5.0, 0.0, 120.0)
    # No attitude report from the gimbal for this long: it is silent (a gimbal_silent event), and
    # the camera is pointed by turning the vehicle until it reports again.
    attitude_timeout_s: float = ranged(1.0, 0.1, 60.0)
    # A pointing whose reported attitude is not within the tolerance after this many seconds is
    # given up (a gimbal turns about 90 deg/s: half a circle takes 2 s).
    point_timeout_s: float = ranged(8.0, 0.5, 120.0)


@dataclass(frozen=True)
class BridgeConfig:
    link: LinkConfig = field(default_factory=LinkConfig)
    streamer: StreamerConfig = field(default_factory=StreamerConfig)
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    fleet: FleetConfig = field(default_factory=FleetConfig)
    gimbal: GimbalConfig = field(default_factory=GimbalConfig)

    def __post_init__(self) -> None:
        layer = self.fleet.layer_alt_m
        if self.fleet.enabled and not self.safety.altitude_floor_m <= layer <= self.safety.altitude_ceiling_m:
            raise ValueError(f"fleet layer of member {self.fleet.member_id} at {layer:.1f} m lies outside "
                             f"safety's altitude floor..ceiling ({self.safety.altitude_floor_m:.1f}.."
                             f"{self.safety.altitude_ceiling_m:.1f} m)")

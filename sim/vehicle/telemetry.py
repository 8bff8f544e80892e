"""Telemetry: the periodic messages PX4 streams, and their default rates.

Field values copy what PX4 SITL sent in the trace where MAVSDK reads them
(SYS_STATUS sensor bits, GPS fix quality, AUTOPILOT_VERSION identity), since
MAVSDK's health and info APIs are computed from exactly these fields.
Rates follow PX4's "onboard" link profile; SET_MESSAGE_INTERVAL overrides them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from common.geodesy import geo_from_ned

from .commander import Commander
from .mavlink_ext import mission_current

MAV_TYPE_QUADROTOR = 2
MAV_AUTOPILOT_PX4 = 12

# SYS_STATUS bits exactly as PX4 SIH reported them once ready (trace t >= 7.2 s)
SENSORS_PRESENT = 16429
SENSORS_ENABLED = 81965
SENSORS_HEALTH_ARMABLE = 0x3320C83F  # includes PREARM_CHECK (0x10000000)
PREARM_CHECK = 0x10000000
SENSOR_GPS = 0x20

# AUTOPILOT_VERSION as PX4 main@b765769f5 reported it
FLIGHT_SW_VERSION = 0x010E0080  # 1.14.0 BETA
OS_SW_VERSION = 0x06122CFF
CAPABILITIES = 59647
CUSTOM_VERSION = [0, 0, 0, 80, 159, 118, 101, 183]  # git hash b765769f5, byte-reversed
UID = 5283920058631409231

# msgid -> default rate in Hz (0 = not streamed unless requested)
DEFAULT_RATES_HZ: dict[int, float] = {
    0: 1.0,  # HEARTBEAT
    1: 5.0,  # SYS_STATUS
    24: 8.0,  # GPS_RAW_INT
    30: 100.0,  # ATTITUDE
    31: 50.0,  # ATTITUDE_QUATERNION
    32: 30.0,  # LOCAL_POSITION_NED
    33: 50.0,  # GLOBAL_POSITION_INT
    42: 1.0,  # MISSION_CURRENT
    74: 10.0,  # VFR_HUD
    85: 10.0,  # POSITION_TARGET_LOCAL_NED
    87: 10.0,  # POSITION_TARGET_GLOBAL_INT (not in offboard, as PX4)
    141: 10.0,  # ALTITUDE
    147: 0.5,  # BATTERY_STATUS
    242: 0.5,  # HOME_POSITION
    245: 1.0,  # EXTENDED_SYS_STATE
    331: 0.0,  # ODOMETRY (on request)
    436: 0.5,  # CURRENT_MODE
    4: 1.0,  # PING (our own, like PX4)
}


def euler_to_quat(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy)


@dataclass
class StreamScheduler:
    """Per-message intervals and due times; overridable per SET_MESSAGE_INTERVAL."""

    rates_hz: dict[int, float] = field(default_factory=lambda: dict(DEFAULT_RATES_HZ))
    next_due: dict[int, float] = field(default_factory=dict)

    def set_interval(self, msgid: int, interval_us: float) -> None:
        if interval_us < 0:
            self.rates_hz[msgid] = 0.0
        elif interval_us == 0:
            self.rates_hz[msgid] = DEFAULT_RATES_HZ.get(msgid, 0.0)
        else:
            self.rates_hz[msgid] = 1e6 / interval_us
        self.next_due.pop(msgid, None)

    def due(self, now: float) -> list[int]:
        out = []
        for msgid, hz in self.rates_hz.items():
            if hz <= 0:
                continue
            t = self.next_due.get(msgid)
            if t is None:
                # spread first sends so 1 Hz messages do not all land together
                self.next_due[msgid] = now + (msgid % 7) * 0.013
                continue
            if now >= t:
                out.append(msgid)
                period = 1.0 / hz
                t += period
                self.next_due[msgid] = t if t > now - period else now + period
        return out


class TelemetryBuilder:
    """Builds the streamed messages from the commander's and physics' state."""

    def __init__(self, mav, cmdr: Commander, boot_t: float):
        self.mav = mav
        self.c = cmdr
        self.boot_t = boot_t
        self.ping_seq = 0
        self._by_id = self._builders()

    def boot_ms(self, now: float) -> int:
        return int((now - self.boot_t) * 1000) & 0xFFFFFFFF

    def boot_us(self, now: float) -> int:
        return int((now - self.boot_t) * 1e6)

    def build(self, msgid: int, now: float):
        fn = self._by_id.get(msgid)
        return None if fn is None else fn(now)

    def _builders(self):
        return {
            0: self.heartbeat, 1: self.sys_status, 24: self.gps_raw_int, 30: self.attitude,
            31: self.attitude_quaternion, 32: self.local_position_ned, 33: self.global_position_int,
            42: self.mission_current, 74: self.vfr_hud, 85: self.position_target_local, 87: self.position_target_global,
            141: self.altitude, 147: self.battery_status, 148: self.autopilot_version, 242: self.home_position,
            245: self.extended_sys_state, 331: self.odometry, 436: self.current_mode, 4: self.ping,
        }

    def can_build(self, msgid: int) -> bool:
        return msgid in self._by_id

    # -- messages -----------------------------------------------------------
    def heartbeat(self, now: float):
        c = self.c
        return self.mav.heartbeat_encode(MAV_TYPE_QUADROTOR, MAV_AUTOPILOT_PX4, c.base_mode(),
                                         c.displayed_mode.custom_mode, c.system_status(now), 3)

    def sys_status(self, now: float):
        c, s = self.c, self.c.physics.state
        health = SENSORS_HEALTH_ARMABLE if c.armable(now) else SENSORS_HEALTH_ARMABLE & ~PREARM_CHECK
        if not c.gps_ok:
            health &= ~SENSOR_GPS
        return self.mav.sys_status_encode(SENSORS_PRESENT, SENSORS_ENABLED, health, 0,
                                          int(c.physics.voltage() * 1000), int(s.current_a * 100),
                                          int(round(s.battery_pct)), 0, 0, 0, 0, 0, 0, 0, 0, 1)

    def _est_pos(self) -> tuple[float, float, float]:
        s = self.c.physics.state
        if s.on_ground:
            return s.pos[0] + s.est_noise[0], s.pos[1] + s.est_noise[1], s.pos[2]
        return s.pos[0] + s.est_noise[0], s.pos[1] + s.est_noise[1], s.pos[2] + s.est_noise[2]

    def global_position_int(self, now: float):
        c, s = self.c, self.c.physics.state
        if not c.gps_ok:
            return None  # PX4 stops publishing an invalid global position
        n, e, d = self._est_pos()
        lat, lon = geo_from_ned(c.origin, n, e)
        alt = c.origin.alt_amsl - d
        rel = c.home.local[2] - d
        hdg = int(round(math.degrees(s.yaw) * 100)) % 36000
        return self.mav.global_position_int_encode(self.boot_ms(now), int(round(lat * 1e7)), int(round(lon * 1e7)),
                                                   int(round(alt * 1000)), int(round(rel * 1000)),
                                                   int(round(s.vel[0] * 100)), int(round(s.vel[1] * 100)),
                                                   int(round(s.vel[2] * 100)), hdg)

    def local_position_ned(self, now: float):
        s = self.c.physics.state
        if not self.c.gps_ok:
            return None
        n, e, d = self._est_pos()
        return self.mav.local_position_ned_encode(self.boot_ms(now), n, e, d, s.vel[0], s.vel[1], s.vel[2])

    def attitude(self, now: float):
        s = self.c.physics.state
        return self.mav.attitude_encode(self.boot_ms(now), s.roll, s.pitch, s.yaw, 0.0, 0.0, s.yaw_rate)

    def attitude_quaternion(self, now: float):
        s = self.c.physics.state
        q = euler_to_quat(s.roll, s.pitch, s.yaw)
        return self.mav.attitude_quaternion_encode(self.boot_ms(now), q[0], q[1], q[2], q[3], 0.0, 0.0, s.yaw_rate,
                                                   [0.0, 0.0, 0.0, 0.0])

    def odometry(self, now: float):
        s = self.c.physics.state
        n, e, d = self._est_pos()
        q = euler_to_quat(s.roll, s.pitch, s.yaw)
        cy, sy = math.cos(s.yaw), math.sin(s.yaw)
        vx = cy * s.vel[0] + sy * s.vel[1]
        vy = -sy * s.vel[0] + cy * s.vel[1]
        nan21 = [float("nan")] * 21
        return self.mav.odometry_encode(self.boot_us(now), 1, 8, n, e, d, list(q), vx, vy, s.vel[2], 0.0, 0.0,
                                        s.yaw_rate, nan21, nan21, 0, 0, 0)

    def gps_raw_int(self, now: float):
        c, s = self.c, self.c.physics.state
        n = s.pos[0] + s.gps_err[0] + s.gps_noise[0]
        e = s.pos[1] + s.gps_err[1] + s.gps_noise[1]
        d = s.pos[2] + s.gps_err[2] + s.gps_noise[2]
        lat, lon = geo_from_ned(c.origin, n, e)
        alt = c.origin.alt_amsl - d
        gs = math.hypot(s.vel[0], s.vel[1])
        cog = int(round(math.degrees(math.atan2(s.vel[1], s.vel[0])) * 100)) % 36000 if gs > 0.2 else 0
        a = int(round(alt * 1000))
        if not c.gps_ok:
            return self.mav.gps_raw_int_encode(self.boot_us(now), 1, 0, 0, 0, 65535, 65535, 65535, 65535, 0, 0, 0, 0,
                                               0, 0, 0)
        return self.mav.gps_raw_int_encode(self.boot_us(now), 3, int(round(lat * 1e7)), int(round(lon * 1e7)), a,
                                           70, 110, int(gs * 100), cog, 10, a, 900, 1780, 400, 0, 0)

    def vfr_hud(self, now: float):
        c, s = self.c, self.c.physics.state
        alt = c.origin.alt_amsl - s.pos[2]
        hdg = int(round(math.degrees(s.yaw))) % 360
        thr = 0 if not c.armed else int(min(100, 50 + 5 * -s.acc[2]))
        return self.mav.vfr_hud_encode(0.0, math.hypot(s.vel[0], s.vel[1]), hdg, thr, alt, -s.vel[2])

    def altitude(self, now: float):
        c, s = self.c, self.c.physics.state
        alt = c.origin.alt_amsl - s.pos[2]
        nan = float("nan")
        return self.mav.altitude_encode(self.boot_us(now), alt, alt, -s.pos[2], c.height(), nan,
                                        max(0.0, -s.pos[2]) if c.armed else nan)

    def battery_status(self, now: float):
        c, s = self.c, self.c.physics.state
        v = int(c.physics.voltage() * 1000)
        pct = s.battery_pct / 100.0
        pr = c.params
        charge = 1
        if pct <= pr.f("BAT_EMERGEN_THR"):
            charge = 4
        elif pct <= pr.f("BAT_CRIT_THR"):
            charge = 3
        elif pct <= pr.f("BAT_LOW_THR"):
            charge = 2
        return self.mav.battery_status_encode(0, 1, 1, 32767, [v] + [65535] * 9, int(s.current_a * 100),
                                              int(s.battery_mah), -1, int(round(s.battery_pct)), 0, charge,
                                              [0, 0, 0, 0], 0, 0)

    def home_position(self, now: float):
        h = self.c.home
        return self.mav.home_position_encode(int(round(h.lat * 1e7)), int(round(h.lon * 1e7)), int(round(h.alt * 1000)),
                                             h.local[0], h.local[1], h.local[2], [1.0, 0.0, 0.0, 0.0], 0.0, 0.0, 0.0,
                                             h.time_usec)

    def extended_sys_state(self, now: float):
        return self.mav.extended_sys_state_encode(0, self.c.landed_state)

    def mission_current(self, now: float):
        c = self.c
        total = len(c.store.mission())
        return mission_current(self.mav, c.missions.current_seq(), total, 0, 0, c.store.ids.get(0, 0),
                               c.store.ids.get(1, 0), c.store.ids.get(2, 0))

    def current_mode(self, now: float):
        from .px4_modes import standard_mode

        c = self.c
        return self.mav.current_mode_encode(standard_mode(c.displayed_mode), c.displayed_mode.custom_mode,
                                            c.mode.custom_mode)

    def position_target_local(self, now: float):
        c = self.c
        sp = c.setpoint
        if sp is None or c.displayed_mode.main != 6:
            return None
        p = [float("nan") if v is None else v for v in sp.pos]
        v = [float("nan") if x is None else x for x in sp.vel]
        return self.mav.position_target_local_ned_encode(self.boot_ms(now), 1, 0, p[0], p[1], p[2], v[0], v[1], v[2],
                                                         0.0, 0.0, 0.0, sp.yaw if sp.yaw is not None else float("nan"),
                                                         sp.yaw_rate if sp.yaw_rate is not None else float("nan"))

    def position_target_global(self, now: float):
        c = self.c
        if not c.armed or not c.in_air or c.displayed_mode.main != 4:
            return None
        n, e, d = c.hold_target
        lat, lon = geo_from_ned(c.origin, n, e)
        alt = c.origin.alt_amsl - d
        return self.mav.position_target_global_int_encode(self.boot_ms(now), 5, 0, int(round(lat * 1e7)),
                                                          int(round(lon * 1e7)), alt, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                                          c.hold_yaw or 0.0, 0.0)

    def ping(self, now: float):
        m = self.mav.ping_encode(self.boot_us(now), self.ping_seq, 0, 0)
        self.ping_seq = (self.ping_seq + 1) & 0xFFFFFFFF
        return m

    def autopilot_version(self, now: float):
        return self.mav.autopilot_version_encode(CAPABILITIES, FLIGHT_SW_VERSION, FLIGHT_SW_VERSION, OS_SW_VERSION, 1,
                                                 CUSTOM_VERSION, CUSTOM_VERSION, [0] * 8, 0, 0, UID, [0] * 18)

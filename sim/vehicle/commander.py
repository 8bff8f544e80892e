"""Arming, modes and command handling, the way PX4's commander answers them.

This is the vehicle's "brain": it decides what a command does and what the
ACK says (codes and STATUSTEXTs as in the PX4 trace) and keeps the vehicle's
state. The rest is split as PX4 splits it: the failsafes (`failsafe.py`, PX4's
commander/failsafe), what each mode flies (`flight_tasks.py`, PX4's
flight_mode_manager and the navigator's RTL), and take-off/landing detection
with auto-disarm (`land_detector.py`). It never touches sockets: outgoing texts
and one-off messages are queued for the loop.
"""

from __future__ import annotations

import math

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo

from . import failsafe, flight_tasks, land_detector
from . import navigation as nav
from . import px4_modes as pm
from .commander_state import CommanderState, Home, _nan
from .mission import MissionStore
from .mission_runner import MissionRunner
from .params import ParamTable
from .physics import Demand, Physics
from .setpoints import Setpoint

from .mav_constants import (  # noqa: F401 - re-exported: the vehicle loop and tests read them here
    ACCEPTED, DENIED, FAILED, FORCE_MAGIC, IN_AIR, LAND_DETECT_STAGES, LANDING, ON_GROUND, SEV_CRITICAL, SEV_INFO,
    SEV_WARNING, TAKEOFF_DETECT_M, TAKEOFF_STATE, TEMPORARILY_REJECTED, UNSUPPORTED,
)

_MODE_NAMES = {
    pm.MainMode.MANUAL: "Manual", pm.MainMode.ALTCTL: "Altitude", pm.MainMode.POSCTL: "Position",
    pm.MainMode.ACRO: "Acro", pm.MainMode.OFFBOARD: "Offboard", pm.MainMode.STABILIZED: "Stabilized",
    pm.MainMode.RATTITUDE: "Rattitude",
}


class Commander(CommanderState):
    """The commands, mode entry, arming and each step's checks, over the state it keeps (`CommanderState`)."""

    def __init__(self, params: ParamTable, physics: Physics, origin: GeoPoint, store: MissionStore, now: float,
                 prearm_delay_s: float = 4.0):
        super().__init__(params, physics, origin, store, now, prearm_delay_s)
        self.missions = MissionRunner(self)

    # ------------------------------------------------------------------ state
    def armable(self, now: float) -> bool:
        """PX4's pre-arm verdict; also drives SYS_STATUS PREARM_CHECK and MAV_STATE."""
        if now - self.boot_t < self.prearm_delay_s:
            return False
        if not self.gps_ok:
            return False
        if self.failsafe_mode is not None:
            return False
        if self.mode == pm.OFFBOARD and not self.setpoint_fresh(now):
            return False
        return True

    def system_status(self, now: float) -> int:
        if now - self.boot_t < self.prearm_delay_s:
            return pm.MAV_STATE_UNINIT
        if self.armed:
            return pm.MAV_STATE_CRITICAL if self.failsafe_mode is not None else pm.MAV_STATE_ACTIVE
        return pm.MAV_STATE_STANDBY if self.armable(now) else pm.MAV_STATE_UNINIT

    def base_mode(self) -> int:
        return pm.base_mode(self.displayed_mode, self.armed, self.offboard_control_known)

    # --------------------------------------------------------------- commands
    def handle_command(self, command: int, p: list[float], now: float, frame: int | None = None,
                       xyz: tuple[float, float, float] | None = None) -> int:
        """Apply COMMAND_LONG/INT; ``xyz`` are COMMAND_INT x, y (1e7 deg) and z."""
        self.commands.append((now, int(command)))  # what the companion asked, for tests to read back
        if command == 400:
            return self._cmd_arm(p, now)
        if command == 176:
            return self._cmd_set_mode(p, now)
        if command == 22:
            return self._cmd_takeoff(p, now)
        if command == 21:
            return self._cmd_land(p, now)
        if command == 20:
            return self._set_mode(pm.RTL, now)
        if command == 192:
            return self._cmd_reposition(p, now, frame, xyz)
        if command == 178:
            return self._cmd_change_speed(p)
        if command == 179:
            return self._cmd_set_home(p, frame, xyz)
        if command == 185:  # DO_FLIGHTTERMINATION: motors off, wherever we are
            if (p[0] or 0.0) >= 0.5:
                self.text(SEV_CRITICAL, "Flight termination active")
                self.armed = False
            return ACCEPTED
        if command == 300:  # MISSION_START
            if not self.store.mission():
                return DENIED
            if not _nan(p[0]) and int(p[0]) >= 0:
                self.missions.run.current = min(int(p[0]), len(self.store.mission()) - 1)
                self.missions.run.finished = False
            return self._set_mode(pm.MISSION, now)
        if command == 193:  # DO_PAUSE_CONTINUE
            return self._set_mode(pm.HOLD if int(p[0] or 0) == 0 else pm.MISSION, now)
        if command == 224:  # DO_SET_MISSION_CURRENT
            return self.missions.set_current(int(p[0]))
        return UNSUPPORTED

    def _cmd_arm(self, p: list[float], now: float) -> int:
        arm = (p[0] or 0.0) >= 0.5
        force = not _nan(p[1]) and int(p[1]) == FORCE_MAGIC
        if arm:
            if self.armed:
                return ACCEPTED
            if not force and not self.armable(now):
                self.text(SEV_CRITICAL, "Arming denied: Resolve system health failures first")
                return TEMPORARILY_REJECTED
            self._arm(now)
            self.text(SEV_INFO, "Armed by external command")
            return ACCEPTED
        if not self.armed:
            return ACCEPTED
        if self.in_air and not force:
            self.text(SEV_CRITICAL, "Disarming denied: not landed")
            return TEMPORARILY_REJECTED
        self._disarm(now, "Disarmed by external command")
        return ACCEPTED

    def _cmd_set_mode(self, p: list[float], now: float) -> int:
        main = int(p[1]) if not _nan(p[1]) else 0
        sub = int(p[2]) if not _nan(p[2]) else 0
        if not (int(p[0] or 0) & pm.CUSTOM_MODE_ENABLED):
            return UNSUPPORTED
        if main == pm.MainMode.AUTO:
            if sub not in (pm.AutoSubMode.LOITER, pm.AutoSubMode.TAKEOFF, pm.AutoSubMode.MISSION,
                           pm.AutoSubMode.RTL, pm.AutoSubMode.LAND):
                return TEMPORARILY_REJECTED
            return self._set_mode(pm.Px4Mode(main, sub), now)
        if main == pm.MainMode.OFFBOARD:
            return self._set_mode(pm.OFFBOARD, now)
        if main in _MODE_NAMES:
            # the manual modes need a stick input this vehicle never has
            self.text(SEV_CRITICAL, f"Switching to {_MODE_NAMES[pm.MainMode(main)]} is currently not available")
            return TEMPORARILY_REJECTED
        return UNSUPPORTED

    def _set_mode(self, mode: pm.Px4Mode, now: float) -> int:
        """A user mode request: PX4's availability checks, then the switch."""
        if mode == pm.OFFBOARD and not self.setpoint_fresh(now) and self.armed:
            self.text(SEV_CRITICAL, "Switching to Offboard is currently not available")
            return TEMPORARILY_REJECTED
        if mode == pm.MISSION and not self.store.mission():
            self.text(SEV_CRITICAL, "Switching to Mission is currently not available")
            return TEMPORARILY_REJECTED
        self.failsafe_mode = None
        self.failsafe_reason = None
        self._enter_mode(mode, now)
        return ACCEPTED

    def _enter_mode(self, mode: pm.Px4Mode, now: float) -> None:
        prev = self.mode
        self.mode = mode
        if mode == pm.HOLD:
            if prev != pm.HOLD or not self.in_air:
                self._hold_here()
        elif mode == pm.TAKEOFF:
            self._start_takeoff(now, announce=self.armed)
        elif mode == pm.LAND:
            self.land_xy = self.stop_xy()
        elif mode == pm.RTL:
            flight_tasks.start_rtl(self)
        elif mode == pm.MISSION:
            self.missions.start(now)

    def _cmd_takeoff(self, p: list[float], now: float) -> int:
        alt = p[6] if len(p) > 6 else float("nan")
        self._takeoff_alt_amsl = None if _nan(alt) else float(alt)
        self.failsafe_mode = None
        self.mode = pm.TAKEOFF
        self._start_takeoff(now, announce=self.armed)
        return ACCEPTED

    def _start_takeoff(self, now: float, announce: bool) -> None:
        alt_amsl = self._takeoff_alt_amsl
        self._takeoff_alt_amsl = None
        p = self.pos()
        ground_d = p[2] if not self.in_air else self.home.local[2]
        if alt_amsl is None:
            rel = self.params.f("MIS_TAKEOFF_ALT")
            target_d = min(ground_d, self.home.local[2]) - rel if not self.in_air else self.home.local[2] - rel
            if announce:
                self.text(SEV_INFO, f"Using default takeoff altitude: {rel:.1f} m")
        else:
            target_d = self.origin.alt_amsl - alt_amsl
        if self.in_air:
            target_d = min(target_d, p[2])
        self.takeoff_target_d = target_d
        self.takeoff_start_t = now
        self.takeoff_xy = (p[0], p[1])
        self.hold_yaw = self.physics.state.yaw

    def _cmd_land(self, p: list[float], now: float) -> int:
        self.failsafe_mode = None
        self.mode = pm.LAND
        self.land_xy = self.stop_xy()
        lat, lon = (p[4], p[5]) if len(p) > 5 else (float("nan"), float("nan"))
        if not _nan(lat) and not _nan(lon) and (lat != 0 or lon != 0):
            n, e = ned_from_geo(self.origin, lat, lon)
            self.land_xy = (n, e)
        else:
            self.text(SEV_INFO, "Landing at current position")
        return ACCEPTED

    def _cmd_reposition(self, p: list[float], now: float, frame: int | None,
                        xyz: tuple[float, float, float] | None) -> int:
        if xyz is None:  # COMMAND_LONG form: params 5-7
            lat, lon, alt = p[4], p[5], p[6]
            frame = 0 if frame is None else frame
        else:
            lat = float("nan") if xyz[0] in (0, 0x7FFFFFFF) else xyz[0] * 1e-7
            lon = float("nan") if xyz[1] in (0, 0x7FFFFFFF) else xyz[1] * 1e-7
            alt = xyz[2]
        cur = self.pos()
        n, e = cur[0], cur[1]
        if not _nan(lat) and not _nan(lon):
            n, e = ned_from_geo(self.origin, lat, lon)
        d = cur[2]
        if not _nan(alt):
            d = self._alt_to_d(float(alt), frame or 0)
        if not _nan(p[0]) and p[0] > 0:
            self.cruise_speed = float(p[0])
        self.failsafe_mode = None
        self.mode = pm.HOLD
        if self.in_air:
            self.hold_target = (n, e, d)
            if not _nan(p[3]):  # radians, as PX4's navigator takes it (and MAVSDK's goto_location sends it)
                self.hold_yaw = float(p[3])
            else:
                self.hold_yaw = nav.bearing(cur, (n, e, d))
        else:
            self._hold_here()
        return ACCEPTED

    def _cmd_set_home(self, p: list[float], frame, xyz) -> int:
        if int(p[0] or 0) == 1:
            self._set_home_here()
            return ACCEPTED
        if xyz is not None:
            lat, lon, alt = xyz[0] * 1e-7, xyz[1] * 1e-7, xyz[2]
        else:
            lat, lon, alt = p[4], p[5], p[6]
        if _nan(lat) or _nan(lon) or _nan(alt):
            return DENIED
        n, e = ned_from_geo(self.origin, lat, lon)
        self.home = Home(lat, lon, alt, (n, e, self.origin.alt_amsl - alt), self.home.time_usec)
        self.out.home_changed = True
        return ACCEPTED

    def _set_home_here(self) -> None:
        p = self.pos()
        lat, lon = geo_from_ned(self.origin, p[0], p[1])
        alt = self.origin.alt_amsl - p[2]
        self.home = Home(lat, lon, alt, p, int(self.physics.state.t * 1e6))
        self.out.home_changed = True

    def _arm(self, now: float) -> None:
        self.armed = True
        self.armed_t = now
        self.flown_since_arm = False
        self.landed_t = None
        self._set_home_here()
        if self.mode == pm.TAKEOFF:
            self._start_takeoff(now, announce=True)
        elif self.mode == pm.HOLD:
            self._hold_here()
        elif self.mode == pm.MISSION:
            self.missions.start(now)

    # ------------------------------------------------------------- offboard
    def on_setpoint(self, sp: Setpoint) -> None:
        self.setpoint = sp
        self.offboard_control_known = True

    @property
    def mission(self):
        """The mission's progress (current, reached, finished)."""
        return self.missions.run

    # ------------------------------------------------- each step (flight_tasks.py, failsafe.py)
    def demand(self, now: float) -> Demand:
        """Run the checks that change modes, then say what to fly this step."""
        self.landed_state_hint = IN_AIR
        if not self.armed:
            return Demand(thrust=False)
        failsafe.check_offboard_loss(self, now)
        failsafe.check_datalink(self, now)
        failsafe.check_position(self, now)
        failsafe.check_battery(self, now)
        if not self.armed:
            return Demand(thrust=False)
        mode = self.displayed_mode
        if self.failsafe_mode is not None and (self.failsafe_mode.main in (
                pm.MainMode.POSCTL, pm.MainMode.ALTCTL, pm.MainMode.MANUAL) or self.failsafe_reason == "position_loss"):
            # no sticks: PX4 descends without holding position
            v = self.physics.state.vel
            return Demand(vel=(v[0] * 0.98, v[1] * 0.98, self.params.f("MPC_LAND_SPEED")), yaw=None, yaw_rate=0.0,
                          acc_hor=0.5)
        if mode == pm.TAKEOFF:
            return flight_tasks.takeoff_demand(self, now)
        if mode == pm.HOLD:
            return flight_tasks.hold_demand(self)
        if mode == pm.LAND:
            self.landed_state_hint = LANDING
            return flight_tasks.land_demand(self, self.land_xy)
        if mode == pm.RTL:
            if not self.in_air:
                return Demand(vel=(0.0, 0.0, 0.0))
            return flight_tasks.rtl_demand(self, now)
        if mode == pm.MISSION:
            return self.missions.demand(now)
        if mode == pm.OFFBOARD:
            return flight_tasks.offboard_demand(self)
        return flight_tasks.hold_demand(self)

    # ------------------------------------------------------- inputs to the failsafes
    def on_gcs_heartbeat(self, now: float) -> None:
        self.last_gcs_heartbeat = now
        if self.gcs_lost:
            self.gcs_lost = False
            self.text(SEV_INFO, "Data link regained")

    def set_gps(self, ok: bool, now: float) -> None:
        if ok == self.gps_ok:
            return
        self.gps_ok = ok
        self.gps_lost_t = None if ok else now

    # ---------------------------------------------------------- after a step
    def update(self, now: float) -> None:
        """Detectors after the physics moved (sim/vehicle/land_detector.py)."""
        land_detector.update(self, now)

    # -------------------------------------------------------------- truth
    def truth(self, now: float) -> dict:
        s = self.physics.state
        lat, lon = geo_from_ned(self.origin, s.pos[0], s.pos[1])
        alt = self.origin.alt_amsl - s.pos[2]
        return {
            "t": s.t, "lat": lat, "lon": lon, "alt_amsl": alt, "rel_alt": self.height(),
            "ned": list(s.pos), "vel_ned": list(s.vel), "yaw_deg": math.degrees(s.yaw),
            "roll_deg": math.degrees(s.roll), "pitch_deg": math.degrees(s.pitch),
            "armed": self.armed, "mode": str(self.displayed_mode), "intended_mode": str(self.mode),
            "flight_mode": pm.mavsdk_flight_mode(self.displayed_mode),
            "failsafe": self.failsafe_reason if self.failsafe_mode is not None else None,
            "landed_state": self.landed_state, "on_ground": s.on_ground,
            "battery_pct": s.battery_pct, "wind_ned": list(s.wind),
            "home": {"lat": self.home.lat, "lon": self.home.lon, "alt": self.home.alt, "ned": list(self.home.local)},
            "mission": {"current": self.missions.current_seq(), "reached": self.missions.run.reached,
                        "finished": self.missions.run.finished, "count": len(self.store.mission())},
            "setpoint_age_s": None if self.setpoint is None else now - self.setpoint.t,
            "gps_ok": self.gps_ok,
        }

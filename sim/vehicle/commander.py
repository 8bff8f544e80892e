"""Arming, modes, failsafes and command handling, the way PX4 answers them.

This is the vehicle's "brain": it decides what a command does and what the
ACK says (codes and STATUSTEXTs as in the PX4 trace), keeps the landed state,
and turns the current mode into a velocity demand for the physics. It never
touches sockets: outgoing texts and one-off messages are queued for the loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from contract.geodesy import GeoPoint, geo_from_ned, ned_from_geo

from . import navigation as nav
from . import px4_modes as pm
from .mission import MissionStore
from .mission_runner import MissionRunner
from .params import ParamTable
from .physics import Demand, Physics
from .setpoints import Setpoint

# MAV_RESULT
ACCEPTED = 0
TEMPORARILY_REJECTED = 1
DENIED = 2
UNSUPPORTED = 3
FAILED = 4

# MAV_LANDED_STATE
ON_GROUND = 1
IN_AIR = 2
TAKEOFF_STATE = 3
LANDING = 4

# MAV_SEVERITY
SEV_CRITICAL = 2
SEV_WARNING = 4
SEV_INFO = 6

FORCE_MAGIC = 21196
TAKEOFF_DETECT_M = 0.3
LAND_DETECT_STAGES = 2.5  # ground contact -> maybe landed -> landed, each ~LNDMC_TRIG_TIME (trace: ~5 s)


_MODE_NAMES = {
    pm.MainMode.MANUAL: "Manual", pm.MainMode.ALTCTL: "Altitude", pm.MainMode.POSCTL: "Position",
    pm.MainMode.ACRO: "Acro", pm.MainMode.OFFBOARD: "Offboard", pm.MainMode.STABILIZED: "Stabilized",
    pm.MainMode.RATTITUDE: "Rattitude",
}


def _nan(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


@dataclass
class Home:
    lat: float
    lon: float
    alt: float
    local: tuple[float, float, float]
    time_usec: int = 0


@dataclass
class Outbox:
    """What the flight logic wants sent, drained by the vehicle loop."""

    texts: list[tuple[int, str]] = field(default_factory=list)
    home_changed: bool = False
    item_reached: list[int] = field(default_factory=list)
    mission_current_changed: bool = False


class Commander:
    def __init__(self, params: ParamTable, physics: Physics, origin: GeoPoint, store: MissionStore, now: float,
                 prearm_delay_s: float = 4.0):
        self.params = params
        self.physics = physics
        self.origin = origin
        self.store = store
        self.boot_t = now
        self.prearm_delay_s = prearm_delay_s
        self.out = Outbox()

        self.armed = False
        self.mode: pm.Px4Mode = pm.HOLD  # the user's (intended) mode
        self.failsafe_mode: pm.Px4Mode | None = None  # shown instead while a failsafe acts
        self.failsafe_reason: str | None = None
        self.landed_state = ON_GROUND
        self.home = Home(origin.lat, origin.lon, origin.alt_amsl, (0.0, 0.0, 0.0))

        self.armed_t = 0.0
        self.flown_since_arm = False
        self.ground_contact_t: float | None = None
        self.landed_t: float | None = None

        self.setpoint: Setpoint | None = None
        self.offboard_control_known = False

        self.cruise_speed: float | None = None  # DO_CHANGE_SPEED; None -> MPC_XY_CRUISE
        self.hold_target: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.hold_yaw: float | None = None
        self.takeoff_target_d = 0.0
        self.takeoff_start_t = 0.0
        self.takeoff_xy = (0.0, 0.0)
        self.land_xy = (0.0, 0.0)
        self.rtl_phase = "climb"
        self.rtl_alt_d = 0.0
        self.missions = MissionRunner(self)
        self.battery_warned = 0  # 0 none, 1 low, 2 critical, 3 emergency
        self.landed_state_hint = IN_AIR  # what the current guidance says the air phase is
        self.last_gcs_heartbeat: float | None = None
        self.gcs_lost = False
        self.gps_ok = True  # fault injection: False = no fix
        self.gps_lost_t: float | None = None
        self._takeoff_alt_amsl: float | None = None

    # ------------------------------------------------------------------ state
    @property
    def displayed_mode(self) -> pm.Px4Mode:
        return self.failsafe_mode or self.mode

    @property
    def in_air(self) -> bool:
        return self.landed_state != ON_GROUND

    def pos(self) -> tuple[float, float, float]:
        p = self.physics.state.pos
        return p[0], p[1], p[2]

    def height(self) -> float:
        """Height above home (m, up positive)."""
        return self.home.local[2] - self.physics.state.pos[2]

    def setpoint_fresh(self, now: float) -> bool:
        return self.setpoint is not None and now - self.setpoint.t < self.params.f("COM_OF_LOSS_T")

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

    def cruise(self) -> float:
        v = self.cruise_speed if self.cruise_speed is not None else self.params.f("MPC_XY_CRUISE")
        return max(0.1, min(v, self.params.f("MPC_XY_VEL_MAX")))

    def text(self, severity: int, msg: str) -> None:
        self.out.texts.append((severity, msg))

    # --------------------------------------------------------------- commands
    def handle_command(self, command: int, p: list[float], now: float, frame: int | None = None,
                       xyz: tuple[float, float, float] | None = None) -> int:
        """Apply COMMAND_LONG/INT; ``xyz`` are COMMAND_INT x, y (1e7 deg) and z."""
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
            self.land_xy = self.pos()[:2]
        elif mode == pm.RTL:
            self._start_rtl()
        elif mode == pm.MISSION:
            self.missions.start(now)

    def _hold_here(self) -> None:
        p = self.pos()
        if self.in_air:
            v = self.physics.state.vel
            # stop where braking at MPC_ACC_HOR gets us, not where we were
            a = self.params.f("MPC_ACC_HOR")
            sp = math.hypot(v[0], v[1])
            k = sp / (2.0 * a) if sp > 0.01 else 0.0
            self.hold_target = (p[0] + v[0] * k, p[1] + v[1] * k, p[2])
        else:
            self.hold_target = p
        self.hold_yaw = self.physics.state.yaw

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
        self.land_xy = self.pos()[:2]
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
            if not _nan(p[3]):
                self.hold_yaw = math.radians(p[3])
            else:
                self.hold_yaw = nav.bearing(cur, (n, e, d))
        else:
            self._hold_here()
        return ACCEPTED

    def _alt_to_d(self, alt: float, frame: int) -> float:
        if frame in (3, 6, 10, 11):  # relative to home (terrain treated as home)
            return self.home.local[2] - alt
        return self.origin.alt_amsl - alt

    def _cmd_change_speed(self, p: list[float]) -> int:
        speed_type = int(p[0]) if not _nan(p[0]) else 1
        speed = p[1]
        if speed_type in (0, 1):
            self.cruise_speed = None if _nan(speed) or speed <= 0 else float(speed)
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

    def _disarm(self, now: float, why: str) -> None:
        self.armed = False
        self.text(SEV_INFO, why)
        if self.failsafe_mode is not None:
            # the failsafe ends with the flight; the user's mode shows again
            self.failsafe_mode = None
            self.failsafe_reason = None
        elif self.mode in (pm.LAND, pm.RTL, pm.TAKEOFF, pm.MISSION):
            self.mode = pm.HOLD
            self._hold_here()

    # ------------------------------------------------------------- offboard
    def on_setpoint(self, sp: Setpoint) -> None:
        self.setpoint = sp
        self.offboard_control_known = True

    @property
    def mission(self):
        """The mission's progress (current, reached, finished)."""
        return self.missions.run

    def _reached_alt(self, target_d: float) -> bool:
        return abs(self.physics.state.pos[2] - target_d) <= self.params.f("NAV_MC_ALT_RAD")

    # ----------------------------------------------------------------- RTL
    def _start_rtl(self) -> None:
        ret_d = self.home.local[2] - self.params.f("RTL_RETURN_ALT")
        cur_d = self.pos()[2]
        self.rtl_alt_d = min(ret_d, cur_d)
        self.rtl_phase = "climb" if cur_d > self.rtl_alt_d + 0.5 else "return"
        if self.armed and self.in_air:
            alt_amsl = self.origin.alt_amsl - self.rtl_alt_d
            above = alt_amsl - self.home.alt
            self.text(SEV_INFO, f"RTL: start return at {int(round(alt_amsl))} m ({int(round(above))} m above destination)")

    def _rtl_demand(self, now: float) -> Demand:
        p = self.pos()
        home = self.home.local
        if self.rtl_phase == "climb":
            if p[2] <= self.rtl_alt_d + self.params.f("NAV_MC_ALT_RAD"):
                self.rtl_phase = "return"
            else:
                return self._demand_to((p[0], p[1], self.rtl_alt_d), 0.0)
        if self.rtl_phase == "return":
            tgt = (home[0], home[1], self.rtl_alt_d)
            if nav.horizontal_distance(p, tgt) <= max(1.0, 0.5 * self.params.f("NAV_ACC_RAD")):
                self.rtl_phase = "land"
                self.text(SEV_INFO, "RTL: land at destination")
            else:
                yaw = nav.bearing(p, tgt)
                if yaw is not None:
                    self.hold_yaw = yaw
                return self._demand_to(tgt, self.cruise(), yaw=self.hold_yaw)
        self.landed_state_hint = LANDING
        return self._land_demand((home[0], home[1]))

    # -------------------------------------------------------------- guidance
    def _demand_to(self, target, v_hor: float, yaw: float | None = None, v_up: float | None = None) -> Demand:
        pr = self.params
        vel = nav.velocity_toward(
            self.pos(), target, v_hor,
            # auto modes climb/descend at MPC_Z_V_AUTO_UP/DN (MPC_Z_VEL_MAX_* are for manual and offboard)
            v_up if v_up is not None else pr.f("MPC_Z_V_AUTO_UP"), pr.f("MPC_Z_V_AUTO_DN"),
            acc_hor=pr.f("MPC_ACC_HOR"), acc_vert=min(pr.f("MPC_ACC_UP_MAX"), pr.f("MPC_ACC_DOWN_MAX")),
        )
        return Demand(vel=vel, yaw=yaw if yaw is not None else self.hold_yaw, acc_hor=pr.f("MPC_ACC_HOR"),
                      acc_up=pr.f("MPC_ACC_UP_MAX"), acc_down=pr.f("MPC_ACC_DOWN_MAX"))

    def _hold_demand(self) -> Demand:
        if not self.in_air:
            return Demand(vel=(0.0, 0.0, 0.0), yaw=None)
        return self._demand_to(self.hold_target, self.cruise(), yaw=self.hold_yaw)

    def _land_demand(self, xy: tuple[float, float]) -> Demand:
        pr = self.params
        p = self.pos()
        h = max(0.0, p[2] * -1.0 + self.home.local[2])  # height above home ground
        vd = nav.land_descent_speed(h, pr.f("MPC_Z_V_AUTO_DN"), pr.f("MPC_LAND_ALT1"), pr.f("MPC_LAND_ALT2"),
                                    pr.f("MPC_LAND_SPEED"), pr.f("MPC_LAND_ALT3"), pr.f("MPC_LAND_CRWL"))
        hv = nav.velocity_toward(p, (xy[0], xy[1], p[2]), min(self.cruise(), 3.0), 0.0, 0.0, acc_hor=pr.f("MPC_ACC_HOR"))
        return Demand(vel=(hv[0], hv[1], vd), yaw=self.hold_yaw, acc_hor=pr.f("MPC_ACC_HOR"),
                      acc_up=pr.f("MPC_ACC_UP_MAX"), acc_down=pr.f("MPC_ACC_DOWN_MAX"))

    def _offboard_demand(self) -> Demand:
        pr = self.params
        sp = self.setpoint
        if sp is None:
            return self._hold_demand()
        p = self.pos()
        v_max = pr.f("MPC_XY_VEL_MAX")
        up, dn = pr.f("MPC_Z_VEL_MAX_UP"), pr.f("MPC_Z_VEL_MAX_DN")
        ff = [0.0 if v is None else v for v in sp.vel]
        vel = [0.0, 0.0, 0.0]
        if sp.pos[0] is not None and sp.pos[1] is not None:
            t = (sp.pos[0], sp.pos[1], p[2])
            pv = nav.velocity_toward(p, t, v_max, up, dn, acc_hor=pr.f("MPC_ACC_HOR_MAX"))
            vel[0], vel[1] = pv[0] + ff[0], pv[1] + ff[1]
        else:
            vel[0], vel[1] = ff[0], ff[1]
        h = math.hypot(vel[0], vel[1])
        if h > v_max:
            vel[0] *= v_max / h
            vel[1] *= v_max / h
        if sp.pos[2] is not None:
            vel[2] = nav.velocity_toward(p, (p[0], p[1], sp.pos[2]), 0.0, up, dn)[2] + ff[2]
        else:
            vel[2] = ff[2]
        vel[2] = max(-up, min(dn, vel[2]))
        if sp.yaw is not None:
            return Demand(vel=tuple(vel), yaw=sp.yaw, acc_hor=pr.f("MPC_ACC_HOR_MAX"), acc_up=pr.f("MPC_ACC_UP_MAX"),
                          acc_down=pr.f("MPC_ACC_DOWN_MAX"))
        return Demand(vel=tuple(vel), yaw=None, yaw_rate=sp.yaw_rate or 0.0, acc_hor=pr.f("MPC_ACC_HOR_MAX"),
                      acc_up=pr.f("MPC_ACC_UP_MAX"), acc_down=pr.f("MPC_ACC_DOWN_MAX"))

    def _takeoff_demand(self, now: float) -> Demand:
        pr = self.params
        # PX4 (trace): ~1 s spool-up, the climb starts ~3 s after the command, full speed ~2 s later
        ramp = pr.f("MPC_TKO_RAMP_T")
        t_rel = now - self.takeoff_start_t
        frac = 1.0 if ramp <= 0 else min(1.0, max(0.0, (t_rel - 0.7 * ramp) / (0.7 * ramp)))
        v_up = pr.f("MPC_TKO_SPEED") * frac
        self.landed_state_hint = TAKEOFF_STATE
        return self._demand_to((self.takeoff_xy[0], self.takeoff_xy[1], self.takeoff_target_d), self.cruise(),
                               yaw=self.hold_yaw, v_up=v_up)

    def demand(self, now: float) -> Demand:
        """Run the checks that change modes, then say what to fly this step."""
        self.landed_state_hint = IN_AIR
        if not self.armed:
            return Demand(thrust=False)
        self._check_offboard_loss(now)
        self._check_datalink(now)
        self._check_position(now)
        self._check_battery(now)
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
            return self._takeoff_demand(now)
        if mode == pm.HOLD:
            return self._hold_demand()
        if mode == pm.LAND:
            self.landed_state_hint = LANDING
            return self._land_demand(self.land_xy)
        if mode == pm.RTL:
            if not self.in_air:
                return Demand(vel=(0.0, 0.0, 0.0))
            return self._rtl_demand(now)
        if mode == pm.MISSION:
            return self.missions.demand(now)
        if mode == pm.OFFBOARD:
            return self._offboard_demand()
        return self._hold_demand()

    # -------------------------------------------------------------- failsafes
    def _check_offboard_loss(self, now: float) -> None:
        if self.mode != pm.OFFBOARD or self.failsafe_mode is not None:
            return
        if self.setpoint_fresh(now):
            return
        action = int(self.params.get("COM_OBL_RC_ACT"))
        self.text(SEV_CRITICAL, "Failsafe activated")
        self.failsafe_reason = "offboard_loss"
        fs = {0: pm.POSCTL, 1: pm.Px4Mode(pm.MainMode.ALTCTL), 2: pm.Px4Mode(pm.MainMode.MANUAL), 3: pm.RTL,
              4: pm.LAND, 5: pm.HOLD}.get(action)
        if fs is None:  # 6 terminate / 7 disarm
            self._disarm(now, "Disarmed by failsafe")
            return
        self._enter_failsafe(fs)

    def on_gcs_heartbeat(self, now: float) -> None:
        self.last_gcs_heartbeat = now
        if self.gcs_lost:
            self.gcs_lost = False
            self.text(SEV_INFO, "Data link regained")

    def _check_datalink(self, now: float) -> None:
        """NAV_DLL_ACT after COM_DL_LOSS_T without a GCS HEARTBEAT (PX4 default 0: only a warning)."""
        if self.last_gcs_heartbeat is None or self.gcs_lost:
            return
        if now - self.last_gcs_heartbeat <= self.params.f("COM_DL_LOSS_T"):
            return
        self.gcs_lost = True
        self.text(SEV_CRITICAL, "Connection to ground station lost")
        action = int(self.params.get("NAV_DLL_ACT"))
        fs = {1: pm.HOLD, 2: pm.RTL, 3: pm.LAND}.get(action)
        if action in (5, 6):
            self.text(SEV_CRITICAL, "Failsafe activated")
            self._disarm(now, "Disarmed by failsafe")
        elif fs is not None and self.in_air and self.failsafe_mode is None:
            self.text(SEV_CRITICAL, "Failsafe activated")
            self.failsafe_reason = "datalink_loss"
            self._enter_failsafe(fs)

    def _enter_failsafe(self, fs: pm.Px4Mode) -> None:
        self.failsafe_mode = fs
        if fs == pm.HOLD:
            self._hold_here()
        elif fs == pm.LAND:
            self.land_xy = self.pos()[:2]
        elif fs == pm.RTL:
            self._start_rtl()

    def set_gps(self, ok: bool, now: float) -> None:
        if ok == self.gps_ok:
            return
        self.gps_ok = ok
        self.gps_lost_t = None if ok else now

    def _check_position(self, now: float) -> None:
        """GPS loss: after 1 s PX4 has no position and 'descends' (shown as AUTO_LAND) in position modes."""
        if self.gps_ok or self.gps_lost_t is None or now - self.gps_lost_t < 1.0:
            return
        if self.failsafe_reason == "position_loss" or not self.in_air:
            return
        if self.displayed_mode.main in (pm.MainMode.AUTO, pm.MainMode.OFFBOARD):
            self.text(SEV_CRITICAL, "Failsafe activated")
            self.failsafe_reason = "position_loss"
            self.failsafe_mode = pm.LAND

    def _check_battery(self, now: float) -> None:
        pct = self.physics.state.battery_pct / 100.0
        pr = self.params
        level = 3 if pct <= pr.f("BAT_EMERGEN_THR") else 2 if pct <= pr.f("BAT_CRIT_THR") else 1 if pct <= pr.f("BAT_LOW_THR") else 0
        if level <= self.battery_warned:
            if level < self.battery_warned and level == 0:
                self.battery_warned = 0
            return
        self.battery_warned = level
        action = int(pr.get("COM_LOW_BAT_ACT"))
        if level == 1:
            self.text(SEV_WARNING, "Low battery level! Return advised")
        elif level == 2:
            self.text(SEV_CRITICAL, "Critical battery level! Return advised" if action not in (1, 3) else "Failsafe activated")
            if action in (1, 3) and self.in_air:
                self.failsafe_reason = "battery"
                self._enter_failsafe(pm.RTL)
        else:
            self.text(SEV_CRITICAL, "Emergency battery level! Land now" if action not in (2, 3) else "Failsafe activated")
            if action in (2, 3) and self.in_air:
                self.failsafe_reason = "battery"
                self._enter_failsafe(pm.LAND)

    # ---------------------------------------------------------- after a step
    def update(self, now: float) -> None:
        """Detectors after the physics moved: takeoff, landing, completions, auto-disarm."""
        s = self.physics.state
        if not self.armed:
            self.landed_state = ON_GROUND if s.on_ground else self.landed_state
            return
        pr = self.params
        if not self.in_air:
            lifted = not s.on_ground and s.pos[2] < self.physics.ground_z - TAKEOFF_DETECT_M
            # PX4 reports the takeoff once the motors spooled up for a takeoff, before the climb
            spooled = (self.landed_state_hint == TAKEOFF_STATE
                       and now - self.takeoff_start_t >= pr.f("COM_SPOOLUP_TIME"))
            if lifted or spooled:
                self.text(SEV_INFO, "Takeoff detected")
                self.flown_since_arm = True
                self.landed_t = None
                self.ground_contact_t = None
                self.landed_state = self.landed_state_hint if self.landed_state_hint != LANDING else IN_AIR
            else:
                prflt = pr.f("COM_DISARM_PRFLT")
                if not self.flown_since_arm and prflt > 0 and now - self.armed_t >= prflt and self.displayed_mode != pm.TAKEOFF:
                    self._disarm(now, "Disarmed by auto preflight disarming")
                    return
                if self.flown_since_arm and self.landed_t is not None:
                    t_dis = pr.f("COM_DISARM_LAND")
                    if t_dis >= 0 and now - self.landed_t >= max(t_dis, 0.0):
                        self._disarm(now, "Disarmed by landing")
                return
        # in the air
        if s.on_ground and self.landed_state != TAKEOFF_STATE:
            if self.ground_contact_t is None:
                self.ground_contact_t = now
            elif now - self.ground_contact_t >= LAND_DETECT_STAGES * pr.f("LNDMC_TRIG_TIME"):
                self.text(SEV_INFO, "Landing detected")
                self.landed_state = ON_GROUND
                self.landed_t = now
                self.ground_contact_t = None
                return
        else:
            self.ground_contact_t = None
        mode = self.displayed_mode
        if mode == pm.TAKEOFF and self.failsafe_mode is None:
            if s.pos[2] <= self.takeoff_target_d + pr.f("NAV_MC_ALT_RAD"):
                self.mode = pm.HOLD
                self.hold_target = (self.takeoff_xy[0], self.takeoff_xy[1], self.takeoff_target_d)
                self.landed_state = IN_AIR
                return
        if self.landed_state_hint == TAKEOFF_STATE:
            self.landed_state = TAKEOFF_STATE
        elif self.landed_state_hint == LANDING:
            self.landed_state = LANDING
        else:
            self.landed_state = IN_AIR

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

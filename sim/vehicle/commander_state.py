"""The simulated commander's state, and what reading or changing it alone takes.

The commander (`commander.py`) answers commands and decides each step; the parts
split off as PX4 splits them (`failsafe.py`, `flight_tasks.py`, `land_detector.py`,
`mission_runner.py`) take this state, read it and change it, and never the
commander itself, so none of them imports the commander back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from common.geodesy import GeoPoint
from common.stopping import stop_offset

from . import px4_modes as pm
from .mav_constants import ACCEPTED, IN_AIR, ON_GROUND, SEV_INFO
from .mission import MissionStore
from .params import ParamTable
from .physics import Physics
from .setpoints import Setpoint


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


# The intended modes PX4 lets a vehicle arm in (Mission left out: the trace shows Hold after a mission and RTL).
ARMABLE_MODES = (pm.HOLD, pm.OFFBOARD)


class CommanderState:
    """Arming, modes, home, targets and the flags the failsafes keep: the vehicle's state as PX4's commander holds it."""

    def __init__(self, params: ParamTable, physics: Physics, origin: GeoPoint, store: MissionStore, now: float,
                 prearm_delay_s: float = 4.0):
        self.params = params
        self.physics = physics
        self.commands: list[tuple[float, int]] = []  # (time, MAV_CMD) of every command received
        self.origin = origin
        self.store = store
        self.boot_t = now
        self.prearm_delay_s = prearm_delay_s
        self.out = Outbox()

        self.armed = False
        self.mode_after_disarm: pm.Px4Mode = pm.HOLD  # PX4's _nav_state_after_disarming (see `mode`)
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
        self.battery_warned = 0  # 0 none, 1 low, 2 critical, 3 emergency
        self.landed_state_hint = IN_AIR  # what the current guidance says the air phase is
        self.last_gcs_heartbeat: float | None = None
        self.gcs_lost = False
        self.gps_ok = True  # fault injection: False = no fix
        self.gps_lost_t: float | None = None
        self._takeoff_alt_amsl: float | None = None

    @property
    def mode(self) -> pm.Px4Mode:
        """The user's (intended) mode."""
        return self._mode

    @mode.setter
    def mode(self, mode: pm.Px4Mode) -> None:
        # PX4 (UserModeIntention) remembers the last intended mode one can arm in, take-off excepted,
        # and goes back to it when the vehicle disarms. Land, RTL and Mission are not such modes,
        # Hold and Offboard are: a vehicle that flew in offboard and then landed on a Land or RTL
        # command (or a failsafe) is in OFFBOARD again once disarmed, as PX4 SITL was.
        if mode in ARMABLE_MODES:
            self.mode_after_disarm = mode
        self._mode = mode

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

    def cruise(self) -> float:
        v = self.cruise_speed if self.cruise_speed is not None else self.params.f("MPC_XY_CRUISE")
        return max(0.1, min(v, self.params.f("MPC_XY_VEL_MAX")))

    def text(self, severity: int, msg: str) -> None:
        self.out.texts.append((severity, msg))

    def stop_xy(self) -> tuple[float, float]:
        """Where PX4's Hold and Land put a moving vehicle: braking distance ahead, not where it was
        (its ``preproject_stop_point``, common/stopping.py)."""
        p = self.pos()
        if not self.in_air:
            return p[0], p[1]
        v = self.physics.state.vel
        dn, de = stop_offset(v[0], v[1], self.params.f("MPC_ACC_HOR"))
        return p[0] + dn, p[1] + de

    def _hold_here(self) -> None:
        p = self.pos()
        self.hold_target = (*self.stop_xy(), p[2])
        self.hold_yaw = self.physics.state.yaw

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

    def _disarm(self, now: float, why: str) -> None:
        self.armed = False
        self.text(SEV_INFO, why)
        if self.failsafe_mode is not None:
            # the failsafe ends with the flight; the user's mode shows again
            self.failsafe_mode = None
            self.failsafe_reason = None
        if self.mode not in ARMABLE_MODES:  # PX4's UserModeIntention::onDisarm
            self.mode = self.mode_after_disarm
            if self.mode == pm.HOLD:
                self._hold_here()

    def _reached_alt(self, target_d: float) -> bool:
        return abs(self.physics.state.pos[2] - target_d) <= self.params.f("NAV_MC_ALT_RAD")

"""What the simulated PX4 flies in each mode: a velocity demand for the physics (PX4: the flight
tasks of src/modules/flight_mode_manager, and the navigator's RTL for the return).

Auto modes climb and descend at MPC_Z_V_AUTO_UP/DN, offboard at MPC_Z_VEL_MAX_UP/DN, as in PX4.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import navigation as nav
from .mav_constants import LANDING, SEV_INFO, TAKEOFF_STATE
from .physics import Demand

if TYPE_CHECKING:
    from .commander_state import CommanderState


def start_rtl(c: "CommanderState") -> None:
    ret_d = c.home.local[2] - c.params.f("RTL_RETURN_ALT")
    cur_d = c.pos()[2]
    c.rtl_alt_d = min(ret_d, cur_d)
    c.rtl_phase = "climb" if cur_d > c.rtl_alt_d + 0.5 else "return"
    if c.armed and c.in_air:
        alt_amsl = c.origin.alt_amsl - c.rtl_alt_d
        above = alt_amsl - c.home.alt
        c.text(SEV_INFO, f"RTL: start return at {int(round(alt_amsl))} m ({int(round(above))} m above destination)")


def rtl_demand(c: "CommanderState", now: float) -> Demand:
    p = c.pos()
    home = c.home.local
    if c.rtl_phase == "climb":
        if p[2] <= c.rtl_alt_d + c.params.f("NAV_MC_ALT_RAD"):
            c.rtl_phase = "return"
        else:
            return demand_to(c, (p[0], p[1], c.rtl_alt_d), 0.0)
    if c.rtl_phase == "return":
        tgt = (home[0], home[1], c.rtl_alt_d)
        if nav.horizontal_distance(p, tgt) <= max(1.0, 0.5 * c.params.f("NAV_ACC_RAD")):
            c.rtl_phase = "land"
            c.text(SEV_INFO, "RTL: land at destination")
        else:
            yaw = nav.bearing(p, tgt)
            if yaw is not None:
                c.hold_yaw = yaw
            return demand_to(c, tgt, c.cruise(), yaw=c.hold_yaw)
    c.landed_state_hint = LANDING
    return land_demand(c, (home[0], home[1]))


def demand_to(c: "CommanderState", target, v_hor: float, yaw: float | None = None, v_up: float | None = None) -> Demand:
    pr = c.params
    vel = nav.velocity_toward(
        c.pos(), target, v_hor,
        # auto modes climb/descend at MPC_Z_V_AUTO_UP/DN (MPC_Z_VEL_MAX_* are for manual and offboard)
        v_up if v_up is not None else pr.f("MPC_Z_V_AUTO_UP"), pr.f("MPC_Z_V_AUTO_DN"),
        acc_hor=pr.f("MPC_ACC_HOR"), acc_vert=min(pr.f("MPC_ACC_UP_MAX"), pr.f("MPC_ACC_DOWN_MAX")),
    )
    return Demand(vel=vel, yaw=yaw if yaw is not None else c.hold_yaw, acc_hor=pr.f("MPC_ACC_HOR"),
                  acc_up=pr.f("MPC_ACC_UP_MAX"), acc_down=pr.f("MPC_ACC_DOWN_MAX"))


def hold_demand(c: "CommanderState") -> Demand:
    if not c.in_air:
        return Demand(vel=(0.0, 0.0, 0.0), yaw=None)
    return demand_to(c, c.hold_target, c.cruise(), yaw=c.hold_yaw)


def land_demand(c: "CommanderState", xy: tuple[float, float]) -> Demand:
    pr = c.params
    p = c.pos()
    h = max(0.0, p[2] * -1.0 + c.home.local[2])  # height above home ground
    vd = nav.land_descent_speed(h, pr.f("MPC_Z_V_AUTO_DN"), pr.f("MPC_LAND_ALT1"), pr.f("MPC_LAND_ALT2"),
                                pr.f("MPC_LAND_SPEED"), pr.f("MPC_LAND_ALT3"), pr.f("MPC_LAND_CRWL"))
    hv = nav.velocity_toward(p, (xy[0], xy[1], p[2]), min(c.cruise(), 3.0), 0.0, 0.0, acc_hor=pr.f("MPC_ACC_HOR"))
    return Demand(vel=(hv[0], hv[1], vd), yaw=c.hold_yaw, acc_hor=pr.f("MPC_ACC_HOR"),
                  acc_up=pr.f("MPC_ACC_UP_MAX"), acc_down=pr.f("MPC_ACC_DOWN_MAX"))


def offboard_demand(c: "CommanderState") -> Demand:
    pr = c.params
    sp = c.setpoint
    if sp is None:
        return hold_demand(c)
    p = c.pos()
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


def takeoff_demand(c: "CommanderState", now: float) -> Demand:
    pr = c.params
    # PX4 (trace): ~1 s spool-up, the climb starts ~3 s after the command, full speed ~2 s later
    ramp = pr.f("MPC_TKO_RAMP_T")
    t_rel = now - c.takeoff_start_t
    frac = 1.0 if ramp <= 0 else min(1.0, max(0.0, (t_rel - 0.7 * ramp) / (0.7 * ramp)))
    v_up = pr.f("MPC_TKO_SPEED") * frac
    c.landed_state_hint = TAKEOFF_STATE
    return demand_to(c, (c.takeoff_xy[0], c.takeoff_xy[1], c.takeoff_target_d), c.cruise(),
                           yaw=c.hold_yaw, v_up=v_up)

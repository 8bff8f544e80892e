"""The simulated PX4's failsafes (PX4: src/modules/commander/failsafe): offboard loss
(COM_OF_LOSS_T, COM_OBL_RC_ACT), data-link loss (COM_DL_LOSS_T, NAV_DLL_ACT), GPS loss and the
battery ladder (BAT_LOW/CRIT/EMERGEN_THR, COM_LOW_BAT_ACT).

Apart from the commander as PX4 keeps them apart: each check reads the commander's state and,
when it fires, says so in a STATUSTEXT and sets the failsafe mode the commander then flies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import flight_tasks
from . import px4_modes as pm
from .mav_constants import SEV_CRITICAL, SEV_WARNING

if TYPE_CHECKING:
    from .commander_state import CommanderState


def check_offboard_loss(c: "CommanderState", now: float) -> None:
    if c.mode != pm.OFFBOARD or c.failsafe_mode is not None:
        return
    if c.setpoint_fresh(now):
        return
    action = int(c.params.get("COM_OBL_RC_ACT"))
    c.text(SEV_CRITICAL, "Failsafe activated")
    c.failsafe_reason = "offboard_loss"
    fs = {0: pm.POSCTL, 1: pm.Px4Mode(pm.MainMode.ALTCTL), 2: pm.Px4Mode(pm.MainMode.MANUAL), 3: pm.RTL,
          4: pm.LAND, 5: pm.HOLD}.get(action)
    if fs is None:  # 6 terminate / 7 disarm
        c._disarm(now, "Disarmed by failsafe")
        return
    enter_failsafe(c, fs)


def check_datalink(c: "CommanderState", now: float) -> None:
    """NAV_DLL_ACT after COM_DL_LOSS_T without a GCS HEARTBEAT (PX4 default 0: only a warning)."""
    if c.last_gcs_heartbeat is None or c.gcs_lost:
        return
    if now - c.last_gcs_heartbeat <= c.params.f("COM_DL_LOSS_T"):
        return
    c.gcs_lost = True
    c.text(SEV_CRITICAL, "Connection to ground station lost")
    action = int(c.params.get("NAV_DLL_ACT"))
    fs = {1: pm.HOLD, 2: pm.RTL, 3: pm.LAND}.get(action)
    if action in (5, 6):
        c.text(SEV_CRITICAL, "Failsafe activated")
        c._disarm(now, "Disarmed by failsafe")
    elif fs is not None and c.in_air and c.failsafe_mode is None:
        c.text(SEV_CRITICAL, "Failsafe activated")
        c.failsafe_reason = "datalink_loss"
        enter_failsafe(c, fs)


def enter_failsafe(c: "CommanderState", fs: pm.Px4Mode) -> None:
    c.failsafe_mode = fs
    if fs == pm.HOLD:
        c._hold_here()
    elif fs == pm.LAND:
        c.land_xy = c.stop_xy()
    elif fs == pm.RTL:
        flight_tasks.start_rtl(c)


def check_position(c: "CommanderState", now: float) -> None:
    """GPS loss: after 1 s PX4 has no position and 'descends' (shown as AUTO_LAND) in position modes."""
    if c.gps_ok or c.gps_lost_t is None or now - c.gps_lost_t < 1.0:
        return
    if c.failsafe_reason == "position_loss" or not c.in_air:
        return
    if c.displayed_mode.main in (pm.MainMode.AUTO, pm.MainMode.OFFBOARD):
        c.text(SEV_CRITICAL, "Failsafe activated")
        c.failsafe_reason = "position_loss"
        c.failsafe_mode = pm.LAND


def check_battery(c: "CommanderState", now: float) -> None:
    pct = c.physics.state.battery_pct / 100.0
    pr = c.params
    level = 3 if pct <= pr.f("BAT_EMERGEN_THR") else 2 if pct <= pr.f("BAT_CRIT_THR") else 1 if pct <= pr.f("BAT_LOW_THR") else 0
    if level <= c.battery_warned:
        if level < c.battery_warned and level == 0:
            c.battery_warned = 0
        return
    c.battery_warned = level
    action = int(pr.get("COM_LOW_BAT_ACT"))
    if level == 1:
        c.text(SEV_WARNING, "Low battery level! Return advised")
    elif level == 2:
        c.text(SEV_CRITICAL, "Critical battery level! Return advised" if action not in (1, 3) else "Failsafe activated")
        if action in (1, 3) and c.in_air:
            c.failsafe_reason = "battery"
            enter_failsafe(c, pm.RTL)
    else:
        c.text(SEV_CRITICAL, "Emergency battery level! Land now" if action not in (2, 3) else "Failsafe activated")
        if action in (2, 3) and c.in_air:
            c.failsafe_reason = "battery"
            enter_failsafe(c, pm.LAND)

"""The simulated PX4's land detector (PX4: src/modules/land_detector) and what follows from it:
take-off and landing detection, the end of the take-off climb, auto-disarm after landing
(COM_DISARM_LAND) and before take-off (COM_DISARM_PRFLT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import px4_modes as pm
from .mav_constants import IN_AIR, LAND_DETECT_STAGES, LANDING, ON_GROUND, SEV_INFO, TAKEOFF_DETECT_M, TAKEOFF_STATE

if TYPE_CHECKING:
    from .commander_state import CommanderState


def update(c: "CommanderState", now: float) -> None:
    """Detectors after the physics moved: takeoff, landing, completions, auto-disarm."""
    s = c.physics.state
    if not c.armed:
        c.landed_state = ON_GROUND if s.on_ground else c.landed_state
        return
    pr = c.params
    if not c.in_air:
        lifted = not s.on_ground and s.pos[2] < c.physics.ground_z - TAKEOFF_DETECT_M
        # PX4 reports the takeoff once the motors spooled up for a takeoff, before the climb
        spooled = (c.landed_state_hint == TAKEOFF_STATE
                   and now - c.takeoff_start_t >= pr.f("COM_SPOOLUP_TIME"))
        if lifted or spooled:
            c.text(SEV_INFO, "Takeoff detected")
            c.flown_since_arm = True
            c.landed_t = None
            c.ground_contact_t = None
            c.landed_state = c.landed_state_hint if c.landed_state_hint != LANDING else IN_AIR
        else:
            prflt = pr.f("COM_DISARM_PRFLT")
            if not c.flown_since_arm and prflt > 0 and now - c.armed_t >= prflt and c.displayed_mode != pm.TAKEOFF:
                c._disarm(now, "Disarmed by auto preflight disarming")
                return
            if c.flown_since_arm and c.landed_t is not None:
                t_dis = pr.f("COM_DISARM_LAND")
                if t_dis >= 0 and now - c.landed_t >= max(t_dis, 0.0):
                    c._disarm(now, "Disarmed by landing")
            return
    # in the air
    if s.on_ground and c.landed_state != TAKEOFF_STATE:
        if c.ground_contact_t is None:
            c.ground_contact_t = now
        elif now - c.ground_contact_t >= LAND_DETECT_STAGES * pr.f("LNDMC_TRIG_TIME"):
            c.text(SEV_INFO, "Landing detected")
            c.landed_state = ON_GROUND
            c.landed_t = now
            c.ground_contact_t = None
            return
    else:
        c.ground_contact_t = None
    mode = c.displayed_mode
    if mode == pm.TAKEOFF and c.failsafe_mode is None:
        if s.pos[2] <= c.takeoff_target_d + pr.f("NAV_MC_ALT_RAD"):
            c.mode = pm.HOLD
            c.hold_target = (c.takeoff_xy[0], c.takeoff_xy[1], c.takeoff_target_d)
            c.landed_state = IN_AIR
            return
    if c.landed_state_hint == TAKEOFF_STATE:
        c.landed_state = TAKEOFF_STATE
    elif c.landed_state_hint == LANDING:
        c.landed_state = LANDING
    else:
        c.landed_state = IN_AIR

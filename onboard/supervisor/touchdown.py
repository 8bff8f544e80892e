"""Before PX4's Land: stop to a hover, then move clear of any fleet member near where the vehicle would come down.

PX4 puts a moving multirotor down a braking distance further on than where Land was commanded
(about 12 m from 7 m/s, common/stopping.py); judged at the commanded point, two members ending
at one goal touched down 0.6 m apart on PX4 SITL (issue 36, row 14). So the executor brakes in
offboard first (``brake_to_hover``), and the fleet guard judges the spot where PX4 will put the
vehicle down against where every member is and would come down (``FleetGuard.landing_spot``).
Both are best effort: whatever fails here, the landing goes ahead where the vehicle got to.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable

from firmware_bridge.maneuvers import brake_to_hover
from firmware_bridge.offboard_pilot import OffboardPilot
from onboard.supervisor.settings import SupervisorConfig

log = logging.getLogger(__name__)

# A member may come down near the new spot while the vehicle moves there: judged again, this many moves at most.
MOVES_ASIDE = 2


async def brake(bridge: Any, pilot: OffboardPilot) -> bool:
    """Stop to a hover (`brake_to_hover`); True when it came to one. Logged with the speeds before and after.

    Only while PX4 flies our offboard stream: in a mode of PX4's own (a failsafe landing or return)
    nothing here may fly the vehicle, and the Land follows at once.
    """
    if not pilot.engaged:
        return False
    s = bridge.state
    before = math.hypot(s.vn_m_s, s.ve_m_s)
    t0 = time.monotonic()
    try:
        stopped = await brake_to_hover(pilot)
    except Exception:
        log.exception("braking before the landing")
        return False
    s = bridge.state
    log.info("braked before landing", extra={"fields": {
        "event": "landing_braked", "hovering": stopped, "from_m_s": round(before, 2),
        "to_m_s": round(math.hypot(s.vn_m_s, s.ve_m_s), 2), "seconds": round(time.monotonic() - t0, 2)}})
    return stopped


async def clear_of_the_fleet(bridge: Any, pilot: OffboardPilot, cfg: SupervisorConfig,
                             on_event: Callable[[str, dict[str, Any]], Any]) -> None:
    """In a fleet, move aside (in offboard, at this altitude) when a member is too near where the vehicle
    would come down, and brake there again (a ``landing_moved`` event per move)."""
    fleet = getattr(bridge, "fleet", None)
    envelope = bridge.envelope()
    if fleet is None or envelope is None or not getattr(fleet.cfg, "enabled", False):
        return
    try:
        for _ in range(MOVES_ASIDE):
            spot, near = fleet.landing_spot(envelope)
            if spot is None:
                return
            on_event("landing_moved", {"members_near": near, "north_m": round(spot.north_m, 1),
                                       "east_m": round(spot.east_m, 1)})
            await pilot.fly_to(spot, cfg.speed_m_s, cfg.arrive_tolerance_m, cfg.move_timeout_s)
            await brake(bridge, pilot)
    except Exception:
        log.exception("moving clear of the fleet before landing")

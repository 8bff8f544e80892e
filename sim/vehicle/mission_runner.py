"""Mission execution: which item is current, what counts as reached, what to fly.

PX4's reporting is mimicked as the trace shows it: DO_* items right after a
waypoint are executed at once and the last of them is the one reported in
MISSION_ITEM_REACHED; MISSION_CURRENT then points at the next waypoint; at the
end PX4 says "Mission finished, loitering" and switches to Hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.geodesy import ned_from_geo

from . import flight_tasks
from . import navigation as nav
from . import px4_modes as pm
from .mission import MissionItem
from .physics import Demand

if TYPE_CHECKING:
    from .commander_state import CommanderState

SEV_CRITICAL = 2
SEV_INFO = 6
ACCEPTED = 0
DENIED = 2
NAV_WAYPOINT, NAV_LOITER_UNLIM, NAV_LOITER_TIME, NAV_RTL, NAV_LAND, NAV_TAKEOFF = 16, 17, 19, 20, 21, 22
DO_CHANGE_SPEED = 178
TAKEOFF_STATE = 3
LANDING = 4


def _nan(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


@dataclass
class MissionRun:
    """Progress through the stored mission (indices are MAVLink item seqs)."""

    current: int = 0
    reached: int = -1
    reached_t: float = 0.0
    finished: bool = False
    item_arrived_t: float | None = None  # when the current nav item was first reached (hold time)
    takeoff_first: bool = False


class MissionRunner:
    """Runs the stored mission over the commander's state (``c``), which it is given."""

    def __init__(self, commander: "CommanderState"):
        self.c = commander
        self.run = MissionRun()

    def on_uploaded(self, mission_type: int) -> None:
        c = self.c
        if mission_type == 0:
            self.run = MissionRun()
            c.out.mission_current_changed = True

    def set_current(self, seq: int) -> int:
        c = self.c
        items = c.store.mission()
        if not 0 <= seq < max(1, len(items)):
            return DENIED
        self.run.current = seq
        self.run.finished = False
        self.run.item_arrived_t = None
        c.out.mission_current_changed = True
        return ACCEPTED

    def current_seq(self) -> int:
        c = self.c
        n = len(c.store.mission())
        return max(0, min(self.run.current, n - 1)) if n else 0

    def start(self, now: float) -> None:
        c = self.c
        items = c.store.mission()
        if self.run.finished or self.run.current >= len(items):
            self.run = MissionRun()
        self.run.item_arrived_t = None
        self.run.takeoff_first = c.armed and not c.in_air
        c.takeoff_xy = c.pos()[:2]
        c.takeoff_start_t = now
        if c.armed:
            c.text(SEV_INFO, "Executing Mission")
            self._skip_do_items(now)

    def item_target(self, it: MissionItem) -> tuple[float, float, float]:
        c = self.c
        cur = c.pos()
        if it.frame in (1, 7, 8, 9):  # local frames are not used by MAVSDK missions
            return cur
        if it.x == 0 and it.y == 0:
            n, e = cur[0], cur[1]
        else:
            n, e = ned_from_geo(c.origin, it.lat, it.lon)
        d = cur[2] if _nan(it.z) else c._alt_to_d(float(it.z), it.frame)
        return n, e, d

    def _skip_do_items(self, now: float) -> None:
        """Apply DO_* items at the cursor; each counts as reached, as PX4 reports."""
        c = self.c
        items = c.store.mission()
        while self.run.current < len(items) and items[self.run.current].command >= 80:
            it = items[self.run.current]
            if it.command == DO_CHANGE_SPEED:
                c._cmd_change_speed([it.param1, it.param2, it.param3, it.param4, 0, 0, 0])
            self._mark_reached(self.run.current, now)
            self.run.current += 1
        c.out.mission_current_changed = True
        if self.run.current >= len(items):
            self._finished(now)

    def _mark_reached(self, seq: int, now: float) -> None:
        c = self.c
        self.run.reached = seq
        self.run.reached_t = now
        c.out.item_reached.append(seq)

    def _finished(self, now: float) -> None:
        c = self.c
        items = c.store.mission()
        self.run.finished = True
        self.run.current = max(0, len(items) - 1)
        c.out.mission_current_changed = True
        if c.mode == pm.MISSION and c.armed:
            c.text(SEV_INFO, "Mission finished, loitering")
            c.mode = pm.HOLD
            c._hold_here()

    def demand(self, now: float) -> Demand:
        c = self.c
        items = c.store.mission()
        run = self.run
        if run.finished or run.current >= len(items):
            return flight_tasks.hold_demand(c)
        it = items[run.current]
        target = self.item_target(it)
        if run.takeoff_first or (it.command == NAV_TAKEOFF and not c._reached_alt(target[2])):
            # PX4 inserts a vertical takeoff when a mission starts on the ground
            climb_d = target[2] if it.command == NAV_TAKEOFF else min(
                target[2], c.home.local[2] - c.params.f("MIS_TAKEOFF_ALT"))
            if not c._reached_alt(climb_d):
                c.landed_state_hint = TAKEOFF_STATE
                p = c.pos()
                if not c.in_air:
                    c.takeoff_xy = (p[0], p[1])
                return flight_tasks.demand_to(c, (c.takeoff_xy[0], c.takeoff_xy[1], climb_d), c.params.f("MPC_TKO_SPEED"),
                                    yaw=c.hold_yaw, v_up=c.params.f("MPC_TKO_SPEED"))
            run.takeoff_first = False
            if it.command == NAV_TAKEOFF:
                self._item_done(now)
                return flight_tasks.hold_demand(c)
        run.takeoff_first = False
        if it.command == NAV_RTL:
            self._mark_reached(run.current, now)
            c.mode = pm.RTL  # as the commander enters RTL
            flight_tasks.start_rtl(c)
            return flight_tasks.hold_demand(c)
        if it.command == NAV_LAND:
            p = c.pos()
            if nav.horizontal_distance(p, target) > 1.0 and c.in_air:
                return flight_tasks.demand_to(c, (target[0], target[1], p[2]), c.cruise())
            c.landed_state_hint = LANDING
            return flight_tasks.land_demand(c, (target[0], target[1]))
        yaw = None if _nan(it.param4) else math.radians(it.param4)
        if yaw is None:
            yaw = nav.bearing(c.pos(), target)
            if yaw is None:
                yaw = c.physics.state.yaw
        acc_rad = it.param2 if it.command == NAV_WAYPOINT and not _nan(it.param2) and it.param2 > 0 else c.params.f("NAV_ACC_RAD")
        p = c.pos()
        if run.item_arrived_t is None and nav.horizontal_distance(p, target) <= acc_rad and c._reached_alt(target[2]):
            run.item_arrived_t = now
        if run.item_arrived_t is not None:
            hold = (it.param1 if not _nan(it.param1) else 0.0) if it.command in (NAV_WAYPOINT, NAV_LOITER_TIME) else 0.0
            if it.command == NAV_LOITER_UNLIM:
                hold = math.inf
            if now - run.item_arrived_t >= hold:
                self._item_done(now)
        c.hold_yaw = yaw
        return flight_tasks.demand_to(c, target, c.cruise(), yaw=yaw)

    def _item_done(self, now: float) -> None:
        run = self.run
        run.item_arrived_t = None
        self._mark_reached(run.current, now)
        run.current += 1
        # the DO items after a waypoint are done at once; the last one is "reached"
        self._skip_do_items(now)

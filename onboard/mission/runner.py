"""The mission loop: observe, let the agent act, carry the action out through the vehicle, count it.

Every rule of a mission lives here once, for the vehicle that flies and for the benchmark
that scores it:

- Before anything is armed the instruction is said back (`understand`) and a mission whose
  instruction was not understood is refused, nothing flown.
- A step is one agent action. Whatever it was (a move, a look, one refused or impossible),
  the step ends with an observation from where the vehicle then is, so every step costs the
  same one look and the agent always acts on what it sees now.
- A look-up climbs here or on the way to a neighbour, turns (unless observing turns the
  vehicle anyway: a camera's look-around) and stays up; the moves after it are flown up there
  until a come-down. From over the roofs no name is readable: the runner drops any the sensor
  reports from above cruise. A look-low is a round trip below cruise, observed at the bottom.
- What the vehicle offers and refuses is `look_offers`'; a refused look or come-down flies
  nothing and spends the step. A move to a waypoint not on offer spends the step too
  (`invalid_moves`). A waypoint the safety envelope refuses is never offered again; when none
  is left the mission ends, refused.
- Distances and time are the legs' as the vehicle port reports them: measured on a real vehicle,
  the graph's on the kinematic one; they are summed unrounded.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable

from onboard.vocab.observation import ActionKind, AgentAction
from onboard.agent.understood import understand
from onboard.mission.legs import Leg, LegStatus
from onboard.mission.look_offers import come_down_refusal, further_climb_refusal, look_low_refusal, look_up_refusal
from onboard.mission.observed import MoveOption, WorldObservation
from onboard.mission.ports import Agent, MissionHooks, SensorPort, VehiclePort
from onboard.mission.record import ComeDown, LookLow, LookUp, MissionEnd, MissionRecord, Refusal

Offload = Callable[..., Awaitable[Any]]

NO_WAYPOINT_LEFT = "every waypoint on offer lies outside the safety envelope"


@dataclass(frozen=True)
class MissionLimits:
    """What the vehicle allows this mission: its steps, cruise, and the looks it offers (None: not offered)."""

    step_limit: int
    cruise_alt_m: float
    look_up_ceiling_m: float | None = None
    look_low_floor_m: float | None = None


async def inline(fn: Callable[..., Any], *args: Any) -> Any:
    """Run the agent's step on the loop itself (the benchmark: nothing else shares the loop)."""
    return fn(*args)


async def unless_stopped(coro: Any, stop: asyncio.Event) -> tuple[bool, Any]:
    """Run `coro` unless `stop` is set first (SIGTERM): then it is cancelled, and (False, None) returned."""
    task = asyncio.ensure_future(coro)
    if stop.is_set():
        task.cancel()
        return False, None
    halt = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, halt}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        halt.cancel()
        raise
    if not task.done():
        task.cancel()
        return False, None
    halt.cancel()
    return True, task.result()


def _shown(altitude_m: float | None) -> float | str | None:
    """An altitude as recorded: a non-finite one (NaN from a model) as its text, so the record stays valid JSON."""
    return altitude_m if altitude_m is None or math.isfinite(altitude_m) else str(altitude_m)


class MissionRunner:
    """One mission over one vehicle and one sensor; `run` once. `record` may be a caller's own subclass
    (the supervisor's `FlightOutcome`), filled in place so that an exception leaves it as far as it got."""

    def __init__(self, agent: Agent, vehicle: VehiclePort, sensor: SensorPort, limits: MissionLimits, *,
                 start: int | None = None, hooks: MissionHooks | None = None, record: MissionRecord | None = None,
                 stop: asyncio.Event | None = None, offload: Offload = inline, search_only: bool = False) -> None:
        self.agent = agent
        self.vehicle = vehicle
        self.sensor = sensor
        self.limits = limits
        self.start = start
        self.hooks = hooks or MissionHooks()
        self.record = record if record is not None else MissionRecord()
        self.stop = stop or asyncio.Event()
        self.offload = offload
        self.search_only = search_only
        self.up_m: float | None = None  # flying over the roofs at this altitude (None: at cruise)
        self.heading = 0.0
        self.refused: set[int] = set()  # waypoints the envelope refused: never offered again

    # -- the mission ---------------------------------------------------------------------------------
    async def run(self) -> MissionRecord:
        rec = self.record
        if not self._read_back():
            return rec
        self.hooks.starting(rec.understood)
        await self.vehicle.take_off()
        obs = await self._sense(0, self.start, None)
        lim = self.limits
        for step in range(lim.step_limit + 1):
            if self.stop.is_set():
                rec.end = MissionEnd.TERMINATED
                return rec
            await self.vehicle.ready()
            await self.hooks.before_act(step, obs, self.heading)
            view = obs.without(self.refused).for_agent(
                step, lim.step_limit - step, cruise_alt_m=lim.cruise_alt_m, look_up_ceiling_m=lim.look_up_ceiling_m,
                look_low_floor_m=None if self.up_m is not None else lim.look_low_floor_m,
                shared=self.hooks.shared(), heading=self.heading)
            t0 = time.perf_counter()
            action: AgentAction = await self.offload(self.agent.act, view)
            rec.step_ms.append((time.perf_counter() - t0) * 1000.0)
            await self.hooks.after_act(step, action)
            if action.kind == ActionKind.ARRIVE:
                rec.end = MissionEnd.ARRIVED
                return rec
            if step >= lim.step_limit:
                break
            rec.steps = step + 1
            done, after = await unless_stopped(self._carry_out(step, obs, action), self.stop)
            if not done:
                rec.end = MissionEnd.TERMINATED
                return rec
            if after is None:  # nowhere left to go
                rec.end, rec.detail = MissionEnd.REFUSED, NO_WAYPOINT_LEFT
                return rec
            obs = after
        rec.end = MissionEnd.STEP_LIMIT
        return rec

    def _read_back(self) -> bool:
        """Say back what was understood; refuse (False) what was not. An agent that reads nothing flies."""
        reading = getattr(self.agent, "reading", None)
        if reading is None:
            return True
        u = understand(reading, search_only=self.search_only)
        rec = self.record
        rec.understood = u.line()
        self.hooks.progress(rec.understood)
        self.hooks.event("instruction_understood", {"line": rec.understood, "goal": u.goal_name,
                                                    "relations": list(u.relations), "missing": list(u.missing)})
        if not u.missing:
            return True
        self.hooks.event("mission_refused", {"reason": u.refusal()})
        rec.end, rec.detail = MissionEnd.REFUSED, u.refusal()
        return False

    async def _sense(self, step: int, at: int | None, altitude_m: float | None) -> WorldObservation:
        """The observation the next step acts on; from over the roofs without names."""
        obs = await self.sensor.observe(step, at, self.heading, altitude_m)
        if altitude_m is not None and altitude_m > self.limits.cruise_alt_m and obs.pois:
            obs = replace(obs, pois=())
        self.record.trajectory.append(obs.node)
        self.record.final_node = obs.node
        return obs

    async def _here(self, step: int, node: int) -> WorldObservation:
        """The step is over: what is seen from where the vehicle now flies."""
        return await self._sense(step + 1, node, self.up_m)

    def _count(self, leg: Leg) -> None:
        self.record.flown_m += leg.metres
        self.record.flight_s += leg.seconds

    def _timed_out(self, leg: Leg, detail: dict[str, Any]) -> None:
        if leg.status is LegStatus.TIMED_OUT:
            self.record.timed_out_legs += 1
            self.hooks.event("move_timeout", {**detail, "error_m": round(leg.error_m, 1)})

    # -- one action ------------------------------------------------------------------------------------
    async def _carry_out(self, step: int, obs: WorldObservation, action: AgentAction) -> WorldObservation | None:
        kind = action.kind
        if kind == ActionKind.LOOK_UP:
            return await self._look_up(step, obs, action)
        if kind == ActionKind.COME_DOWN:
            return await self._come_down(step, obs, action)
        if kind == ActionKind.LOOK_LOW:
            return await self._look_low(step, obs, action)
        if kind != ActionKind.MOVE or not obs.without(self.refused).offers(action.node):
            self.record.invalid_moves += 1  # an impossible move costs a step and leaves the vehicle where it is
            self.hooks.event("command_refused", {"command": "move", "step": step, "waypoint": action.node,
                                                 "reason": f"waypoint {action.node} is not on offer"})
            return await self._here(step, obs.node)
        return await self._fly(step, obs, obs.move(action.node))

    async def _fly(self, step: int, obs: WorldObservation, move: MoveOption) -> WorldObservation | None:
        leg = await self.vehicle.fly_to(move)
        if leg.refused:
            return await self._waypoint_refused(step, obs, move, leg)
        self._count(leg)
        self._timed_out(leg, {"waypoint": move.node})
        self.heading = move.bearing
        return await self._here(step, move.node)

    async def _waypoint_refused(self, step: int, obs: WorldObservation, move: MoveOption,
                                leg: Leg) -> WorldObservation | None:
        """The envelope refused flying there (it sent its own event): plan again without it, or end."""
        self.refused.add(move.node)
        self.record.refused_waypoints.append(move.node)
        self.hooks.progress(f"waypoint {move.node} refused: {leg.reason}")
        if not obs.without(self.refused).moves:
            return None
        return await self._here(step, obs.node)

    async def _refuse(self, step: int, obs: WorldObservation, command: str, altitude_m: float | None,
                      reason: str, *, announced: bool = False) -> WorldObservation:
        """A look or come-down not flown: recorded, said (unless the envelope already said it), the step spent."""
        shown = _shown(altitude_m)
        self.record.refused_looks.append(Refusal(step, obs.node, command, shown, reason))
        if not announced:
            self.hooks.event("command_refused", {"command": command, "step": step, "waypoint": obs.node,
                                                 "altitude_m": shown, "reason": reason})
        self.hooks.progress(f"{command.replace('_', '-')} to {altitude_m} m refused: {reason}")
        return await self._here(step, obs.node)

    async def _look_up(self, step: int, obs: WorldObservation, action: AgentAction) -> WorldObservation:
        lim, alt = self.limits, action.altitude_m
        reason = look_up_refusal(alt, lim.cruise_alt_m, lim.look_up_ceiling_m) or further_climb_refusal(alt, self.up_m)
        if reason is None and action.node is not None and not obs.without(self.refused).offers(action.node):
            reason = f"waypoint {action.node} is not on offer"
        if reason is not None:
            return await self._refuse(step, obs, "look_up", alt, reason)
        assert alt is not None
        start = lim.cruise_alt_m if self.up_m is None else self.up_m
        to = None if action.node is None else obs.move(action.node)
        leg = await self.vehicle.climb(alt, start, to, not self.sensor.turns_itself)
        if leg.refused:
            return await self._refuse(step, obs, "look_up", alt, f"safety envelope: {leg.reason}", announced=True)
        rec = self.record
        rec.climb_m += leg.finite_vertical()
        self._count(leg)
        rec.look_ups += self.up_m is None  # a further climb while up is a leg of the same look-up
        rec.look_up_at.append(LookUp(step, obs.node, alt, start))
        node = obs.node
        if to is not None:
            node, self.heading = to.node, to.bearing
        self.up_m = alt if leg.arrived else None  # not up there in time: the port brought it back to cruise
        self._timed_out(leg, {"command": "climb", "altitude_m": alt})
        seen = await self._here(step, node)
        self.hooks.progress(f"looked up from {alt:.0f} m at waypoint {node}: {len(seen.landmarks)} landmark(s) "
                            "in sight; " + ("flying on up there" if self.up_m is not None else "back at cruise"))
        return seen

    async def _come_down(self, step: int, obs: WorldObservation, action: AgentAction) -> WorldObservation | None:
        lim = self.limits
        reason = come_down_refusal(action.altitude_m, lim.cruise_alt_m, self.up_m, action.node is not None)
        if reason is None and action.node is not None and not obs.without(self.refused).offers(action.node):
            reason = f"waypoint {action.node} is not on offer"
        if reason is not None:
            return await self._refuse(step, obs, "come_down", action.altitude_m, reason)
        assert self.up_m is not None
        to_m = lim.cruise_alt_m if action.altitude_m is None else action.altitude_m
        to = None if action.node is None else obs.move(action.node)
        leg = await self.vehicle.come_down(self.up_m, to_m, to)
        if leg.refused:  # only a sloped one can be: a move the envelope would not take
            assert to is not None
            return await self._waypoint_refused(step, obs, to, leg)
        rec = self.record
        rec.climb_m += leg.finite_vertical()
        self._count(leg)
        rec.come_down_at.append(ComeDown(step, obs.node, self.up_m, to_m))
        node = obs.node
        if to is not None:
            node, self.heading = to.node, to.bearing
        self.up_m = None if to_m == lim.cruise_alt_m else to_m
        self._timed_out(leg, {"command": "descend", "altitude_m": to_m})
        self.hooks.progress(f"came down to {'cruise' if self.up_m is None else f'{self.up_m:.0f} m'} "
                            + (f"on the way to waypoint {node}" if to is not None else f"at waypoint {node}"))
        return await self._here(step, node)

    async def _look_low(self, step: int, obs: WorldObservation, action: AgentAction) -> WorldObservation:
        lim, alt = self.limits, action.altitude_m
        reason = "over the roofs: come down first" if self.up_m is not None else \
            look_low_refusal(alt, lim.cruise_alt_m, lim.look_low_floor_m)
        if reason is None and action.node is not None:
            reason = "a look-low is flown where the vehicle is, not on the way"
        if reason is not None:
            return await self._refuse(step, obs, "look_low", alt, reason)
        assert alt is not None
        leg, seen = await self.vehicle.look_low(alt, lambda: self._sense(step + 1, obs.node, alt))
        if leg.refused:
            return await self._refuse(step, obs, "look_low", alt, f"safety envelope: {leg.reason}", announced=True)
        rec = self.record
        rec.low_m += leg.finite_vertical()
        self._count(leg)
        rec.look_lows += 1
        rec.look_low_at.append(LookLow(step, obs.node, alt))
        if seen is None:  # not down there in time: what it would read there was not read
            self._timed_out(leg, {"command": "descend", "altitude_m": alt})
            return await self._here(step, obs.node)
        self.hooks.progress(f"looked low from {alt:.0f} m at waypoint {obs.node}: {len(seen.pois)} name(s) read; "
                            "back at cruise")
        return seen

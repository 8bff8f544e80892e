# Over 400 lines: every leg the vehicle port flies (fly to, climb, turn, come down, land) and the link-loss pause share one wait on the bridge; apart, each would repeat it.
"""Agent moves as bridge commands: take off, fly to a waypoint and wait, pause while the link is down, land.

A look-up is three more legs of the same kind (`climb_to`, `turn_around`,
`back_to_cruise`; a look-low `descend_to` instead of the climb): flown in offboard, every setpoint through the envelope,
and raced against the link exactly as a move is (`_leg`).

Every move is flown in PX4 offboard (`firmware_bridge/offboard_pilot.py`), from
the climb off the ground until the land or return command: should this process
die or hang at any moment of the flight, the setpoint stream stops with it and
PX4's own offboard-loss failsafe brings the vehicle down (issue 19, item 12).
Every setpoint passes the safety envelope (fence, altitude, speed) below the
agent. A move waits for arrival while racing the link: when the bridge reports
link loss the agent is paused (an ``agent_paused`` event), PX4's offboard-loss
failsafe flies the vehicle, and when the link returns (``agent_resumed``) the
executor enters offboard again from where the vehicle is and goes on. A
failsafe the bridge enters (battery ladder) ends the mission: the autopilot is
returning or landing and nothing the agent wants may override it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from common.geodesy import ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import PositionNed, yaw_error_deg
from firmware_bridge.ground_mode import leave_offboard_on_ground
from firmware_bridge.maneuvers import arm_when_ready, position_from_home, wait_until
from firmware_bridge.offboard_pilot import OffboardPilot
from firmware_bridge.safety_envelope import SafetyViolation
from onboard.supervisor.airborne import wait_down
from onboard.supervisor.camera_pointing import CameraPointing, point_camera
from onboard.supervisor.settings import SupervisorConfig
from onboard.supervisor.touchdown import brake, clear_of_the_fleet

EventFn = Callable[[str, dict[str, Any]], Any]

log = logging.getLogger(__name__)

# A look-up's climb and descent have arrived within this many metres of the altitude asked for.
VERTICAL_TOLERANCE_M = 1.0
# Its full turn: this many equal yaw steps (90 degrees: no step is ambiguous about its direction),
# each done within this many degrees, each given at most this long (PX4 turns at 45 deg/s).
TURN_STEPS = 4
TURN_TOLERANCE_DEG = 10.0
TURN_STEP_TIMEOUT_S = 20.0
# The modes that brought the vehicle down; after the disarm PX4 shows another (OFFBOARD or HOLD) within a
# HEARTBEAT or two, which the landing waits this long for before it selects Hold.
LANDING_MODES = ("LAND", "RETURN_TO_LAUNCH")
MODE_AFTER_DISARM_S = 3.0
# Offboard lost because this supervisor's own setpoint stream went stale (its loop starved): offboard
# is taken back this many times a mission; one more ends the mission (and lands).
MAX_STREAM_STALLS = 3


class MissionAborted(RuntimeError):
    """The vehicle can no longer fly the mission (failsafe, link gone for good)."""


class TakenOver(MissionAborted):
    """A person (RC, a ground station) or PX4 itself took the vehicle out of offboard with the link up.

    Whoever switched the mode now flies the vehicle: the supervisor commands nothing more (no land, no
    return, no re-engage) and says so.
    """


@dataclass(frozen=True)
class MoveResult:
    arrived: bool
    error_m: float       # horizontal distance to the waypoint when the move ended (a vertical move: altitude error)
    seconds: float
    paused_s: float      # of which the agent was paused for link loss
    refused: str | None = None  # the safety envelope refused the waypoint (why): nothing was flown


class FlightExecutor:
    def __init__(self, bridge: FlightBridge, cfg: SupervisorConfig, on_event: EventFn | None = None) -> None:
        self.bridge = bridge
        self.cfg = cfg
        self.on_event = on_event or (lambda kind, detail: None)
        self.paused_total_s = 0.0
        self.pilot = OffboardPilot(bridge)
        # The mode someone else switched to mid-mission (TakenOver); from then on nothing is commanded.
        self.taken_over: str | None = None
        self.stream_stalls = 0  # offboard taken back after the own stream went stale (MAX_STREAM_STALLS)
        # The altitude moves are flown at: cruise, or a look-up's once its climb arrived, until back_to_cruise.
        self.flying_alt_m = cfg.cruise_alt_m

    # -- link ---------------------------------------------------------------------------
    def _check_failsafe(self) -> None:
        if self.bridge.failsafe_reason is not None:
            raise MissionAborted(f"bridge failsafe: {self.bridge.failsafe_reason}")

    async def wait_for_link(self) -> float:
        """Seconds paused; returns at once while the link is up."""
        link_ok = self.bridge.monitor.link_ok
        if link_ok.is_set():
            return 0.0
        t0 = time.monotonic()
        self.on_event("agent_paused", {"reason": "link_lost"})
        try:
            await asyncio.wait_for(link_ok.wait(), self.cfg.link_wait_s)
        except asyncio.TimeoutError as exc:
            raise MissionAborted(f"autopilot link not back within {self.cfg.link_wait_s:.0f} s") from exc
        paused = time.monotonic() - t0
        self.paused_total_s += paused
        self.on_event("agent_resumed", {"paused_s": round(paused, 2)})
        return paused

    # -- flight -------------------------------------------------------------------------
    async def take_off(self) -> float:
        """Arm, then climb to cruise altitude in offboard from the ground.

        Not PX4's Takeoff mode: a supervisor that died during that climb left the
        vehicle hovering in Hold at the take-off altitude (measured on PX4 SITL),
        since nothing on PX4 watches the companion there. Climbing in offboard, the
        offboard-loss failsafe covers the flight from the first metre; a death
        between arming and offboard leaves an armed vehicle on the ground, which PX4
        disarms itself (COM_DISARM_PRFLT).
        """
        await self.wait_for_link()
        t0 = time.monotonic()
        alt = self.cfg.cruise_alt_m
        await arm_when_ready(self.bridge, self.cfg.takeoff_timeout_s)
        here = self.pilot.here()
        try:
            await self.pilot.engage(PositionNed(here.north_m, here.east_m, -alt, here.yaw_deg))
        except BaseException:
            if not self.bridge.state.in_air:  # nothing may spin up unattended
                with contextlib.suppress(Exception):
                    await self.bridge.commands.disarm()
            raise
        await wait_until(self.bridge, lambda s: s.in_air and s.rel_alt_m >= alt - 0.5,
                         max(1.0, self.cfg.takeoff_timeout_s - (time.monotonic() - t0)), "climb to cruise altitude")
        return time.monotonic() - t0

    async def _engage(self, hold: PositionNed | None = None) -> None:
        """(Re-)enter offboard; a vehicle the autopilot has put down meanwhile ends the mission."""
        try:
            await self.pilot.engage(hold)
        except (BridgeError, asyncio.TimeoutError) as exc:
            s = self.bridge.state
            if not (s.armed and s.in_air):
                raise MissionAborted("the autopilot brought the vehicle down (failsafe) while the link was lost") from exc
            raise

    def _goal(self, lat: float, lon: float) -> PositionNed:
        n, e = ned_from_geo(self.bridge.envelope().home, lat, lon)
        return PositionNed(n, e, -self.flying_alt_m)

    def error_m(self, lat: float, lon: float) -> float:
        goal = self._goal(lat, lon)
        here = position_from_home(self.bridge)
        return math.hypot(here.north_m - goal.north_m, here.east_m - goal.east_m)

    async def fly_to(self, lat: float, lon: float) -> MoveResult:
        t0 = time.monotonic()
        envelope = self.bridge.envelope()
        if envelope is None:
            raise CommandError("move", CommandResult.REFUSED_BY_ENVELOPE, "home position unknown: no envelope yet")
        try:  # the goal itself first: a refused waypoint is refused before the vehicle moves
            goal = envelope.check_position(self._goal(lat, lon)).intent
        except SafetyViolation as exc:  # the agent hears it and plans around it (issue 19, item 10)
            self.on_event("command_refused", {"command": "move", "lat": lat, "lon": lon, "reason": exc.reason})
            return MoveResult(False, self.error_m(lat, lon), time.monotonic() - t0, 0.0, refused=exc.reason)
        arrived, paused = await self._leg(
            lambda left: self.pilot.fly_to(goal, self.cfg.speed_m_s, self.cfg.arrive_tolerance_m, left),
            t0 + self.cfg.move_timeout_s)
        if self.pilot.refused is not None:  # the straight line crosses the fence: stopped short of it
            self.on_event("command_refused", {"command": "move", "lat": lat, "lon": lon, "reason": self.pilot.refused})
            return MoveResult(False, self.error_m(lat, lon), time.monotonic() - t0, paused, refused=self.pilot.refused)
        return MoveResult(arrived, self.error_m(lat, lon), time.monotonic() - t0, paused)

    # -- the look-up: straight up, a full turn, the moves up there, straight down -------------
    async def climb_to(self, alt_m: float) -> MoveResult:
        """Climb straight up where the vehicle is to ``alt_m`` (m above home), keeping its heading; once
        there, the moves after it are flown at ``alt_m`` (`fly_to`) until `back_to_cruise`.

        The caller (the supervisor) has already refused an altitude outside what it offered; here the
        envelope judges the target once more and a target it would change (clamp to the ceiling or the
        fence) is refused, not flown clamped: sightings reported from ``alt_m`` must be from ``alt_m``.
        Every setpoint of the climb passes the envelope again on its way out, as in every move.
        """
        result = await self._vertical(alt_m, "climb")
        if result.arrived:
            self.flying_alt_m = alt_m
        return result

    async def descend_to(self, alt_m: float) -> MoveResult:
        """Descend straight down where the vehicle is to ``alt_m`` (a look-low), judged as `climb_to` is."""
        return await self._vertical(alt_m, "descend_low")

    async def back_to_cruise(self) -> MoveResult:
        """Back to the cruise altitude, straight, where the vehicle is (the end of a look-up or a look-low);
        the moves after it are flown at cruise again."""
        self.flying_alt_m = self.cfg.cruise_alt_m
        return await self._vertical(self.cfg.cruise_alt_m, "descend")

    async def come_down_to(self, lat: float, lon: float, alt_m: float | None = None) -> MoveResult:
        """The come-down on the way: a move to the waypoint at cruise altitude (or part of the way down, at
        ``alt_m``), one sloped leg from up there (the autopilot flies the straight line); the moves after it
        are flown at that altitude. A refused one flies nothing and leaves the vehicle flying where it was."""
        return await self._fly_to_at(lat, lon, self.cfg.cruise_alt_m if alt_m is None else alt_m)

    async def _fly_to_at(self, lat: float, lon: float, alt_m: float) -> MoveResult:
        """A move to the waypoint at ``alt_m`` (the moves after it flown there too); a refused one flies
        nothing and leaves the altitude the moves are flown at as it was."""
        before = self.flying_alt_m
        self.flying_alt_m = alt_m
        result = await self.fly_to(lat, lon)
        if result.refused is not None:
            self.flying_alt_m = before
        return result

    async def turn_around(self, steps: int = TURN_STEPS) -> bool:
        """A full circle in yaw, in ``steps`` equal turns, holding position: a forward camera sees all around.

        False (nothing turned) when the autopilot reports no heading; the turn's steps wait out a link loss
        like a move does. Returns whether every step reached its heading.
        """
        yaw0 = self.bridge.state.yaw_deg
        if not math.isfinite(yaw0):
            return False
        held = self._held_position()
        done = True
        for k in range(1, steps + 1):
            yaw = (yaw0 + 360.0 * k / steps) % 360.0
            at = PositionNed(held.north_m, held.east_m, held.down_m, yaw)
            turned, _ = await self._leg(
                lambda left, at=at: self.pilot.hold_until(
                    at, lambda s: yaw_error_deg(s.yaw_deg, at.yaw_deg) <= TURN_TOLERANCE_DEG, left, "turn"),
                time.monotonic() + TURN_STEP_TIMEOUT_S)
            if self.pilot.refused is not None:
                self.on_event("command_refused", {"command": "turn", "reason": self.pilot.refused})
                return False
            done &= turned
        return done

    async def turn_to(self, yaw_deg: float, tolerance_deg: float = TURN_TOLERANCE_DEG,
                      timeout_s: float = TURN_STEP_TIMEOUT_S) -> bool:
        """Turn in place to `yaw_deg` (clockwise from north), holding position: a camera's look-around step.

        Flown in offboard like every leg (envelope below it, link loss waited out). False when the
        autopilot reports no heading, the envelope refuses the hold (a ``command_refused`` event), or
        the heading is not reached within `tolerance_deg` in `timeout_s`.
        """
        if not math.isfinite(self.bridge.state.yaw_deg) or not math.isfinite(yaw_deg):
            return False
        held = self._held_position()
        at = PositionNed(held.north_m, held.east_m, held.down_m, yaw_deg % 360.0)
        turned, _ = await self._leg(
            lambda left: self.pilot.hold_until(
                at, lambda s: yaw_error_deg(s.yaw_deg, at.yaw_deg) <= tolerance_deg, left, "turn"),
            time.monotonic() + timeout_s)
        if self.pilot.refused is not None:
            self.on_event("command_refused", {"command": "turn", "yaw_deg": round(at.yaw_deg, 1),
                                              "reason": self.pilot.refused})
            return False
        return turned

    async def point_camera(self, heading_deg: float, pitch_deg: float | None = None,
                           tolerance_deg: float = TURN_TOLERANCE_DEG) -> CameraPointing:
        """The camera to `heading_deg` (from north) and `pitch_deg`: the gimbal where the autopilot announces one,
        waited for on its reported attitude, else the vehicle turns as `turn_to` (`camera_pointing.py`)."""
        return await point_camera(self, heading_deg, pitch_deg, tolerance_deg)

    def _held_position(self) -> PositionNed:
        """Where the pilot holds the vehicle now (the waypoint it arrived at), else where it is."""
        return self.pilot.holding() or self.pilot.here()

    def _look_target(self, target: PositionNed, command: str) -> tuple[PositionNed, str | None]:
        """The envelope's goal for a look's target, or why it is refused (a ``command_refused`` event sent): one
        the envelope would change (clamp to the ceiling or the fence) is not flown clamped, nor one the fleet's
        separation rule would fly at its layer; sightings reported from an altitude must be from there."""
        alt_m = -target.down_m
        try:
            verdict = self.bridge.envelope().check_position(target)
            if verdict.clamped:
                raise SafetyViolation("; ".join(verdict.reasons), target)
        except SafetyViolation as exc:
            self.on_event("command_refused", {"command": command, "altitude_m": alt_m, "reason": exc.reason})
            return target, exc.reason
        goal = verdict.intent
        flown = self.pilot.as_flown(goal)
        if command in ("climb", "descend_low") and flown.down_m != goal.down_m:
            reason = f"the fleet's separation rule holds the vehicle on its layer ({-flown.down_m:.1f} m)"
            self.on_event("command_refused", {"command": command, "altitude_m": alt_m, "reason": reason})
            return goal, reason
        return goal, None

    async def climb_on_to(self, lat: float, lon: float, alt_m: float) -> MoveResult:
        """The look-up's climb on the way: a move to the waypoint at ``alt_m``, one sloped leg (the autopilot
        flies the straight line); the moves after it are flown up there until `back_to_cruise` or
        `come_down_to`. Refused as `climb_to` is when the envelope or the fleet's layer would change the
        altitude at the waypoint, and as a move is when the waypoint is outside the fence: nothing flown."""
        if self.bridge.envelope() is None:
            raise CommandError("climb", CommandResult.REFUSED_BY_ENVELOPE, "home position unknown: no envelope yet")
        there = self._goal(lat, lon)
        _, reason = self._look_target(PositionNed(there.north_m, there.east_m, -alt_m), "climb")
        if reason is not None:
            return MoveResult(False, self.altitude_error_m(alt_m), 0.0, 0.0, refused=reason)
        return await self._fly_to_at(lat, lon, alt_m)

    async def _vertical(self, alt_m: float, command: str) -> MoveResult:
        t0 = time.monotonic()
        envelope = self.bridge.envelope()
        if envelope is None:
            raise CommandError(command, CommandResult.REFUSED_BY_ENVELOPE, "home position unknown: no envelope yet")
        held = self._held_position()
        yaw = self.bridge.state.yaw_deg
        target = PositionNed(held.north_m, held.east_m, -alt_m, yaw if math.isfinite(yaw) else held.yaw_deg)
        goal, reason = self._look_target(target, command)
        if reason is not None:
            return MoveResult(False, self.altitude_error_m(alt_m), time.monotonic() - t0, 0.0, refused=reason)

        def there(s: Any) -> bool:  # a descent to cruise the rule keeps on the layer ends at the layer
            return abs(s.rel_alt_m + self.pilot.as_flown(goal).down_m) <= VERTICAL_TOLERANCE_M

        arrived, paused = await self._leg(lambda left: self.pilot.hold_until(goal, there, left, command),
                                          t0 + self.cfg.move_timeout_s)
        if self.pilot.refused is not None:
            self.on_event("command_refused", {"command": command, "altitude_m": alt_m, "reason": self.pilot.refused})
            return MoveResult(False, self.altitude_error_m(alt_m), time.monotonic() - t0, paused,
                              refused=self.pilot.refused)
        return MoveResult(arrived, self.altitude_error_m(alt_m), time.monotonic() - t0, paused)

    def altitude_error_m(self, alt_m: float) -> float:
        return abs(self.bridge.state.rel_alt_m - alt_m)

    # -- one leg, raced against the link ------------------------------------------------------
    async def _leg(self, fly: Callable[[float], Awaitable[bool]], deadline: float) -> tuple[bool, float]:
        """Run ``fly(seconds_left)`` (a pilot call) until it returns; returns (its result, seconds paused).

        While the link is lost the agent is paused (`wait_for_link`); when it returns the executor
        enters offboard again from where the vehicle is and runs the leg again. A bridge failsafe,
        or offboard left with the link up (a person or PX4 took over), ends the mission.
        """
        paused = 0.0
        while True:
            self._check_failsafe()
            waited = await self.wait_for_link()
            paused += waited
            deadline = max(deadline, time.monotonic() + 5.0) if waited else deadline
            if not self.pilot.engaged:
                lost_at = self.bridge.monitor.link_lost_at
                stalled_at = self.bridge.streamer.stalled_at
                if stalled_at is not None and stalled_at >= self.pilot.engaged_at:
                    # Not a person: the own stream went stale (an 8-vehicle bench run on a saturated
                    # machine starved the loop 1 s) and PX4's offboard-loss failsafe holds. Take it back.
                    self.stream_stalls += 1
                    mode = str(self.bridge.state.flight_mode)
                    self.on_event("stream_stalled", {"count": self.stream_stalls, "mode": mode})
                    if self.stream_stalls > MAX_STREAM_STALLS:
                        raise MissionAborted(f"the setpoint stream went stale {self.stream_stalls} times "
                                             "(the supervisor cannot keep offboard fed)")
                    await self._engage()
                    continue
                if lost_at is None or lost_at < self.pilot.engaged_at:
                    # Out of offboard with the link up: a person (RC, ground station) or PX4 took over.
                    self.taken_over = str(self.bridge.state.flight_mode)
                    self.on_event("taken_over", {"mode": self.taken_over})
                    raise TakenOver(f"the autopilot left offboard (mode {self.taken_over}): taken over, "
                                    "the supervisor commands nothing more")
                try:  # after a link loss PX4's failsafe owns the vehicle until we take it back
                    await self._engage()
                except BridgeError:
                    if not self.bridge.monitor.link_ok.is_set():
                        continue  # lost the link again while engaging: pause, then try again
                    raise
            arrival = asyncio.ensure_future(fly(max(0.1, deadline - time.monotonic())))
            lost = asyncio.ensure_future(self._link_lost())
            try:
                done, _ = await asyncio.wait({arrival, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # also when this leg is cancelled (SIGTERM): nothing of it may run on
                for f in (arrival, lost):
                    if not f.done():
                        f.cancel()
            if arrival in done:
                return arrival.result(), paused
            # link lost (or a failsafe) mid-leg: loop pauses, then flies on from where the vehicle is

    async def _link_lost(self) -> None:
        """Returns when the move cannot go on as it is: link lost, a bridge failsafe, or out of offboard."""
        while (self.bridge.monitor.link_ok.is_set() and self.bridge.failsafe_reason is None
               and self.pilot.engaged):
            await asyncio.sleep(0.1)

    async def finish(self, how: str = "land", wait_s: float | None = None) -> str:
        """Bring the vehicle down ("land" here or "rtl"); returns what was done.

        The command goes out while the offboard stream still runs, so PX4 is never
        left in offboard without setpoints; if it cannot be sent, the stream is
        dropped anyway and PX4's offboard-loss failsafe lands the vehicle. A Land is
        preceded by a stop to a hover and, in a fleet, a move clear of the members
        near where PX4 will put the vehicle down (`touchdown.py`).
        """
        if self.taken_over is not None:  # whoever took over flies it: stop streaming, command nothing
            await self.pilot.release()
            return f"left to the pilot (mode {self.taken_over}): nothing commanded"
        try:
            s = self.bridge.state
            if not s.in_air:
                if s.armed:  # stopped between arming and lift-off: nothing may spin up unattended
                    await self.bridge.commands.disarm()
                return "on ground"
            await self.wait_for_link()
            if how == "rtl":
                await self.bridge.commands.return_to_launch()
            else:
                if wait_s is None:  # not a SIGTERM: there is time to stop, and to land clear of the fleet
                    await brake(self.bridge, self.pilot)
                    await clear_of_the_fleet(self.bridge, self.pilot, self.cfg, self.on_event)
                await self.bridge.commands.land()
        finally:
            await self.pilot.release()
        what = "return to launch" if how == "rtl" else "land"
        if wait_s is not None:  # SIGTERM: PX4 finishes the landing on its own once commanded
            if not await wait_down(self.bridge, wait_s):
                return f"{'returning to launch' if how == 'rtl' else 'landing'} (PX4 finishing; stopped waiting after {wait_s:.0f} s)"
        else:
            await wait_until(self.bridge, lambda s: not s.in_air and not s.armed, self.cfg.land_timeout_s,
                             f"{what} and disarm")
            await self._leave_offboard()
        return "returned to launch" if how == "rtl" else "landed"

    async def _leave_offboard(self) -> None:
        """PX4 disarms back into OFFBOARD after an offboard flight: leave the vehicle in Hold, ready to arm.

        Best effort: the next take-off does the same before it waits for the pre-arm checks. MAVSDK
        reports the armed state and the mode on streams of their own, so the disarm can be seen before
        the mode PX4 went back to: wait for it (a bounded wait) rather than judge the landing's mode.
        """
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await self.bridge.hub.wait_for(lambda s: s.flight_mode not in LANDING_MODES, MODE_AFTER_DISARM_S)
            if await leave_offboard_on_ground(self.bridge):
                self.on_event("left_offboard", {"mode": "HOLD"})
        except Exception:
            log.exception("selecting Hold after the landing")

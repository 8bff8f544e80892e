"""Agent moves as bridge commands: take off, fly to a waypoint and wait, pause while the link is down, land.

Every command goes through the flight bridge, so the safety envelope (fence,
altitude, speed) judges it below the agent. A move is a `goto` to the
waypoint's lat/lon at cruise altitude, then a wait for arrival that races the
link: when the bridge reports link loss the agent is paused (an
``agent_paused`` event), the executor waits for the link to return
(``agent_resumed``) and sends the goto again, because the autopilot may have
switched mode on its own link-loss failsafe meanwhile. A failsafe the bridge
enters (battery ladder) ends the mission: the autopilot is returning or
landing and nothing the agent wants may override it.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any, Callable

from contract.geodesy import ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import GlobalTarget, PositionNed
from firmware_bridge.maneuvers import distance_m, land_and_wait, position_from_home, takeoff_and_wait, wait_until
from onboard.supervisor.settings import SupervisorConfig

EventFn = Callable[[str, dict[str, Any]], Any]


class MissionAborted(RuntimeError):
    """The vehicle can no longer fly the mission (failsafe, link gone for good)."""


@dataclass(frozen=True)
class MoveResult:
    arrived: bool
    error_m: float       # horizontal distance to the waypoint when the move ended
    seconds: float
    paused_s: float      # of which the agent was paused for link loss
    refused: str | None = None  # the safety envelope refused the waypoint (why): nothing was flown


class FlightExecutor:
    def __init__(self, bridge: FlightBridge, cfg: SupervisorConfig, on_event: EventFn | None = None) -> None:
        self.bridge = bridge
        self.cfg = cfg
        self.on_event = on_event or (lambda kind, detail: None)
        self.paused_total_s = 0.0

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
        await self.wait_for_link()
        return await takeoff_and_wait(self.bridge, self.cfg.cruise_alt_m, timeout_s=self.cfg.takeoff_timeout_s)

    def _goal(self, lat: float, lon: float) -> PositionNed:
        n, e = ned_from_geo(self.bridge.envelope().home, lat, lon)
        return PositionNed(n, e, -self.cfg.cruise_alt_m)

    def error_m(self, lat: float, lon: float) -> float:
        goal = self._goal(lat, lon)
        here = position_from_home(self.bridge)
        return math.hypot(here.north_m - goal.north_m, here.east_m - goal.east_m)

    async def fly_to(self, lat: float, lon: float) -> MoveResult:
        t0 = time.monotonic()
        paused = 0.0
        deadline = t0 + self.cfg.move_timeout_s
        goal = self._goal(lat, lon)
        tol = self.cfg.arrive_tolerance_m
        while True:
            self._check_failsafe()
            paused += await self.wait_for_link()
            deadline = max(deadline, time.monotonic() + 5.0) if paused else deadline
            try:
                await self.bridge.commands.goto(GlobalTarget(lat, lon, self.cfg.cruise_alt_m), speed_m_s=self.cfg.speed_m_s)
            except CommandError as exc:
                if exc.result is CommandResult.REFUSED_BY_ENVELOPE:  # the agent hears it and plans around it
                    self.on_event("command_refused", {"command": "goto", "lat": lat, "lon": lon, "reason": exc.detail})
                    return MoveResult(False, self.error_m(lat, lon), time.monotonic() - t0, paused, refused=exc.detail)
                if not self.bridge.monitor.link_ok.is_set():
                    continue  # lost the link while commanding: pause, then send it again
                raise
            except BridgeError:
                if not self.bridge.monitor.link_ok.is_set():
                    continue  # lost the link while commanding: pause, then send it again
                raise
            arrival = asyncio.ensure_future(wait_until(
                self.bridge, lambda s: distance_m(position_from_home(self.bridge, s), goal) <= tol,
                max(0.1, deadline + paused - time.monotonic()), f"move to {lat:.6f},{lon:.6f}"))
            lost = asyncio.ensure_future(self._link_lost())
            done, _ = await asyncio.wait({arrival, lost}, return_when=asyncio.FIRST_COMPLETED)
            for f in (arrival, lost):
                if f not in done:
                    f.cancel()
            if arrival in done:
                if arrival.exception() is None:
                    return MoveResult(True, self.error_m(lat, lon), time.monotonic() - t0, paused)
                return MoveResult(False, self.error_m(lat, lon), time.monotonic() - t0, paused)
            # link lost mid-move: loop pauses, then re-sends the goto

    async def _link_lost(self) -> None:
        while self.bridge.monitor.link_ok.is_set() and self.bridge.failsafe_reason is None:
            await asyncio.sleep(0.1)

    async def finish(self, how: str = "land") -> str:
        """Bring the vehicle down ("land" here or "rtl"); returns what was done."""
        if not self.bridge.state.in_air:
            return "on ground"
        await self.wait_for_link()
        if how == "rtl":
            await self.bridge.commands.return_to_launch()
            await wait_until(self.bridge, lambda s: not s.in_air and not s.armed, self.cfg.land_timeout_s,
                             "return to launch and disarm")
            return "returned to launch"
        await land_and_wait(self.bridge, timeout_s=self.cfg.land_timeout_s)
        return "landed"

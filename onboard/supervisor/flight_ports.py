"""The mission runner's ports on a real vehicle: legs through the MAVSDK bridge, sightings from feed, map and camera.

`FlightVehicle` turns each leg into `FlightExecutor` commands (offboard, every setpoint through the
safety envelope) and measures what was flown from the positions and altitudes the autopilot
reports. `FlightSensor` asks the world feed what is perceived where the autopilot says the vehicle
is; with an onboard map, the moves on offer come from the map and the feed is a sensor only; with
camera perception, the sightings are the camera's look-around (`look_around.LookAround`) and the
feed serves only frames.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import replace
from typing import Any, Awaitable, Callable

from firmware_bridge.maneuvers import position_from_home
from onboard.mission.legs import Leg, LegStatus
from onboard.mission.observed import MoveOption, WorldObservation
from onboard.supervisor.flight_executor import FlightExecutor, MissionAborted, MoveResult

log = logging.getLogger("aerie.supervisor")


def _status(result: MoveResult) -> LegStatus:
    return LegStatus.ARRIVED if result.arrived else LegStatus.TIMED_OUT


class FlightVehicle:
    """A `VehiclePort` over the flight executor: metres and seconds as measured."""

    def __init__(self, executor: FlightExecutor, event: Callable[[str, dict[str, Any]], None]) -> None:
        self.executor = executor
        self.bridge = executor.bridge
        self.event = event

    def _alt(self) -> float:
        return self.bridge.state.rel_alt_m

    def _across_from(self, start: Any) -> float:
        here = position_from_home(self.bridge)
        return math.hypot(here.north_m - start.north_m, here.east_m - start.east_m)

    async def take_off(self) -> None:
        await self.executor.take_off()

    async def ready(self) -> None:
        await self.executor.wait_for_link()

    async def fly_to(self, to: MoveOption) -> Leg:
        t0, start = time.monotonic(), position_from_home(self.bridge)
        result = await self.executor.fly_to(to.lat, to.lon)
        if result.refused is not None:
            return Leg.refusal(result.refused)
        return Leg(_status(result), self._across_from(start), 0.0, time.monotonic() - t0, error_m=result.error_m)

    async def _back_to_cruise(self, command: str) -> None:
        back = await self.executor.back_to_cruise()
        if not back.arrived:
            self.event("move_timeout", {"command": command, "altitude_m": self.executor.cfg.cruise_alt_m,
                                        "error_m": round(back.error_m, 1)})

    async def climb(self, altitude_m: float, from_m: float, to: MoveOption | None, turn: bool) -> Leg:
        t0, start, before = time.monotonic(), position_from_home(self.bridge), self._alt()
        ex = self.executor
        result = await (ex.climb_to(altitude_m) if to is None else ex.climb_on_to(to.lat, to.lon, altitude_m))
        if result.refused is not None:  # the envelope would have changed it: nothing flown (it said so)
            return Leg.refusal(result.refused)
        across = 0.0 if to is None else self._across_from(start)
        top = self._alt()
        if result.arrived:
            if turn and not await ex.turn_around():
                log.info("look-up: no full turn (no heading reported, or a turn timed out)")
            top = max(top, self._alt())  # settled up there by now (the climb ends within 1 m)
            vertical = abs(top - before)
        else:  # not up there in time: what it would see is not the view from there; back to cruise
            await self._back_to_cruise("descend")
            vertical = abs(top - before) + abs(top - self._alt())
        metres = math.hypot(across, vertical if math.isfinite(vertical) else 0.0)
        return Leg(_status(result), metres, vertical, time.monotonic() - t0, error_m=result.error_m)

    async def come_down(self, from_m: float, to_m: float, to: MoveOption | None) -> Leg:
        t0, start, top = time.monotonic(), position_from_home(self.bridge), self._alt()
        ex = self.executor
        if to is None:  # straight down where it is: only ever to cruise (the runner's rule)
            back = await ex.back_to_cruise()
            down = abs(top - self._alt())
            return Leg(_status(back), down if math.isfinite(down) else 0.0, down, time.monotonic() - t0,
                       error_m=back.error_m)
        result = await ex.come_down_to(to.lat, to.lon, None if to_m == ex.cfg.cruise_alt_m else to_m)
        if result.refused is not None:
            return Leg.refusal(result.refused)
        down = abs(top - self._alt())
        metres = math.hypot(self._across_from(start), down if math.isfinite(down) else 0.0)
        return Leg(_status(result), metres, down, time.monotonic() - t0, error_m=result.error_m)

    async def look_low(self, altitude_m: float, observe: Callable[[], Awaitable[WorldObservation]]
                       ) -> tuple[Leg, WorldObservation | None]:
        t0, before = time.monotonic(), self._alt()
        down = await self.executor.descend_to(altitude_m)
        if down.refused is not None:
            return Leg.refusal(down.refused), None
        bottom = self._alt()
        seen = None
        if down.arrived:
            seen = await observe()
            bottom = min(bottom, self._alt())
        await self._back_to_cruise("climb")
        vertical = abs(bottom - before) + abs(bottom - self._alt())
        return Leg(_status(down), vertical if math.isfinite(vertical) else 0.0, vertical, time.monotonic() - t0,
                   error_m=down.error_m), seen


class FlightSensor:
    """A `SensorPort`: the world feed where the autopilot says the vehicle is; the map's moves; the camera's eyes.

    `look` (a `LookAround`, camera perception) replaces whatever the feed said was in sight by the
    camera's fused sightings; it turns the vehicle itself, so a look-up flies no turn of its own.
    """

    def __init__(self, bridge: Any, world: Any, *, cruise_alt_m: float, want_image: bool, onboard_map: Any = None,
                 map_source: str = "", max_snap_m: float = 0.0, look: Any = None,
                 progress: Callable[[str], None] = lambda line: None) -> None:
        self.bridge = bridge
        self.world = world
        self.cruise_alt_m = cruise_alt_m
        self.want_image = want_image
        self.map = onboard_map
        self.map_source = map_source
        self.max_snap_m = max_snap_m
        self.look = look
        self.progress = progress

    @property
    def turns_itself(self) -> bool:
        return self.look is not None

    async def feed(self, at: int | None, heading: float, altitude_m: float | None) -> WorldObservation:
        """What the feed reports here (with a map: at the position the autopilot reports, the map's moves)."""
        s = self.bridge.state
        if self.map is None:
            return await asyncio.to_thread(self.world.observe, s.lat, s.lon, heading, node=at, image=self.want_image,
                                           altitude_m=altitude_m)
        # With a map the world feed is a sensor (what the camera would see here); where the vehicle may fly
        # next comes from the map at the position the autopilot reports. Moves the feed may offer are ignored.
        from onboard.supervisor.map_waypoints import OffTheMap, position_on

        seen = await asyncio.to_thread(self.world.observe, s.lat, s.lon, heading, node=None, image=self.want_image,
                                       altitude_m=altitude_m)
        try:
            here = position_on(self.map, s.lat, s.lon, self.max_snap_m, self.map_source)
        except OffTheMap as exc:
            raise MissionAborted(str(exc)) from None
        return replace(seen, node=here.node, lat=here.lat, lon=here.lon, snap_m=here.snap_m, moves=here.moves)

    async def observe(self, step: int, at: int | None, heading: float, altitude_m: float | None) -> WorldObservation:
        obs = await self.feed(at, heading, altitude_m)
        if self.look is None:
            return obs
        where = "cruise" if altitude_m is None else "up" if altitude_m > self.cruise_alt_m else "low"
        lms, pois = await self.look.run(step, where)
        self.progress(f"looked around: {len(lms)} landmark(s), {len(pois)} name(s) read "
                      f"({self.look.seconds[-1]:.1f} s)")
        return replace(obs, landmarks=lms, pois=pois)

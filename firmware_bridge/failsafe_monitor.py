"""Watches the autopilot link and the battery, and acts before any model is asked.

Link loss (no autopilot HEARTBEAT for ``heartbeat_timeout_s``) pauses the
agent and makes every command fail at once rather than queue: a queued
"goto" replayed after a link returns could send the vehicle somewhere stale.
PX4's own data-link-loss failsafe (NAV_DLL_ACT) flies the vehicle meanwhile.

The battery ladder only climbs within a flight: warn, then return to launch,
then land where it is. A reading that bounces back up (voltage recovers
under lower load) does not cancel a return already begun.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from firmware_bridge.events import EventFanout
from firmware_bridge.safety_envelope import BatteryAction, SafetyEnvelope
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

POLL_S = 0.05


class FailsafeMonitor:
    def __init__(
        self,
        state_of: Callable[[], VehicleState],
        envelope_of: Callable[[], SafetyEnvelope | None],
        heartbeat_timeout_s: float,
        events: EventFanout,
        return_to_launch: Callable[[], Awaitable[None]],
        land: Callable[[], Awaitable[None]],
        on_failsafe: Callable[[str], None],
    ) -> None:
        self._state_of = state_of
        self._envelope_of = envelope_of
        self._timeout = heartbeat_timeout_s
        self._events = events
        self._rtl = return_to_launch
        self._land = land
        self._on_failsafe = on_failsafe
        self.link_ok = asyncio.Event()
        self.battery_level = BatteryAction.NONE
        self.link_lost_at: float | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        state = self._state_of()
        if state.heartbeat_age_s() <= self._timeout:
            self.link_ok.set()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="failsafe-monitor")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            state = self._state_of()
            self._check_link(state)
            if self.link_ok.is_set():
                await self._check_battery(state)
            await asyncio.sleep(POLL_S)

    def _check_link(self, state: VehicleState) -> None:
        age = state.heartbeat_age_s()
        if age > self._timeout and self.link_ok.is_set():
            self.link_ok.clear()
            self.link_lost_at = time.monotonic()
            log.error("autopilot link lost: no heartbeat for %.2f s", age,
                      extra={"fields": {"event": "link_lost", "heartbeat_age_s": round(age, 3)}})
            self._events.emit("link_lost", {"heartbeat_age_s": age})
        elif age <= self._timeout and not self.link_ok.is_set():
            self.link_ok.set()
            down = time.monotonic() - self.link_lost_at if self.link_lost_at else 0.0
            log.warning("autopilot link restored after %.1f s", down,
                        extra={"fields": {"event": "link_restored", "down_s": round(down, 3)}})
            self._events.emit("link_restored", {"down_s": down})

    async def _check_battery(self, state: VehicleState) -> None:
        envelope = self._envelope_of()
        if envelope is None:
            return
        level = envelope.battery_action(state.battery_percent)
        if level <= self.battery_level:
            return
        self.battery_level = level
        detail = {"battery_percent": state.battery_percent}
        if level == BatteryAction.WARN:
            log.warning("battery low: %.0f %%", state.battery_percent, extra={"fields": {"event": "battery_warn", **detail}})
            self._events.emit("battery_warn", detail)
            return
        action = "battery_return" if level == BatteryAction.RETURN else "battery_land"
        log.error("battery %.0f %%: %s", state.battery_percent, action, extra={"fields": {"event": action, **detail}})
        self._events.emit(action, detail)
        self._on_failsafe(action)
        if not state.in_air:
            return
        try:
            await (self._rtl() if level == BatteryAction.RETURN else self._land())
        except Exception as exc:  # keep watching; the next rung may still succeed
            log.error("battery failsafe command failed: %s", exc)
            self.battery_level = BatteryAction(level - 1)

    def reset_battery_ladder(self) -> None:
        """A new flight (landed and disarmed, battery swapped) starts at the bottom again."""
        self.battery_level = BatteryAction.NONE

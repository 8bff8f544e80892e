"""Bridge events (refusals, clamps, link loss, failsafes) for whoever listens.

The bridge does not know about telemetry or the agent; it only announces.
Listeners are plain callables and must be quick: they run on the thread that
saw the event (the loop, or the setpoint thread for ``intent_stale``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BridgeEvent:
    # link_lost, link_restored, intent_stale, battery_warn, battery_return, battery_land, refused, clamped,
    # command_refused; from FleetGuard: separation_{clear,layer,climb,hold,fallback,fallback_climb,refused},
    # fleet_channel_silent, fleet_channel_restored, traffic_rejected;
    # from FlightStateEvents: armed, disarmed, takeoff, landed, mode_change, failsafe
    kind: str
    detail: dict[str, Any] = field(default_factory=dict)
    t: float = field(default_factory=time.time)


class EventFanout:
    def __init__(self) -> None:
        self._listeners: list[Callable[[BridgeEvent], None]] = []
        self.history: list[BridgeEvent] = []

    def add_listener(self, listener: Callable[[BridgeEvent], None]) -> None:
        self._listeners.append(listener)

    def emit(self, kind: str, detail: dict[str, Any] | None = None) -> BridgeEvent:
        event = BridgeEvent(kind, dict(detail or {}))
        self.history.append(event)
        del self.history[:-1000]
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("bridge event listener failed on %s", kind)
        return event


class FlightStateEvents:
    """Turns changes of the vehicle's state into events: what a person watching the flight wants to hear.

    ``armed`` / ``disarmed``, ``takeoff`` / ``landed`` (MAVSDK's in-air flag),
    ``mode_change`` (from, to) and ``failsafe`` (PX4 says "Failsafe activated",
    or the mode it chose for one). Without them a normal flight showed no event
    at all and a dashboard could not tell when the vehicle came down (issue 19,
    item 17). It reads the telemetry hub like any other reader and emits on the
    bridge's fan-out, so the supervisor's listener publishes them as telemetry.
    """

    def __init__(self, hub: Any, events: EventFanout) -> None:
        self._hub = hub
        self._events = events
        self._tasks: list[Any] = []
        self._last: Any = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._last = self._hub.state
        self._tasks = [loop.create_task(self._watch_state(), name="flight-events"),
                       loop.create_task(self._watch_texts(), name="flight-events-texts")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    def observe(self, cur: Any) -> None:
        """Compare with the last snapshot seen and emit what changed."""
        prev, self._last = self._last, cur
        if prev is None:
            return
        if cur.armed != prev.armed:
            self._events.emit("armed" if cur.armed else "disarmed", {"mode": cur.flight_mode})
        if cur.in_air != prev.in_air:
            self._events.emit("takeoff" if cur.in_air else "landed",
                              {"rel_alt_m": round(cur.rel_alt_m, 1) if cur.rel_alt_m == cur.rel_alt_m else None})
        if cur.flight_mode != prev.flight_mode and "UNKNOWN" not in (cur.flight_mode, prev.flight_mode):
            self._events.emit("mode_change", {"from": prev.flight_mode, "to": cur.flight_mode})

    async def _watch_state(self) -> None:
        async for state in self._hub.changes():
            try:
                self.observe(state)
            except Exception:  # an odd value must not end the watching
                log.exception("flight state events")

    async def _watch_texts(self) -> None:
        async for text in self._hub.status_texts():
            if "failsafe" in text.text.lower():
                self._events.emit("failsafe", {"text": text.text, "severity": text.severity,
                                               "mode": self._hub.state.flight_mode})

"""Bridge events (refusals, clamps, link loss, failsafes) for whoever listens.

The bridge does not know about telemetry or the agent; it only announces.
Listeners are plain callables and must be quick: they run on the thread that
saw the event (the loop, or the setpoint thread for ``intent_stale``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BridgeEvent:
    kind: str  # link_lost, link_restored, intent_stale, battery_warn, battery_return, battery_land, refused, clamped
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

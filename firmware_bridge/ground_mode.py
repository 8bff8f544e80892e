"""On the ground: leave offboard before arming, and say what blocks arming when something does.

PX4 goes back, when it disarms, to the last mode the user chose that it can arm
in (its ``UserModeIntention::onDisarm``). After a flight in offboard that is
OFFBOARD, even when a Land or RTL command or a failsafe brought the vehicle
down. Disarmed in OFFBOARD with no setpoint stream, PX4's offboard mode
requirement fails: it clears its pre-arm flag (MAVSDK's ``is_armable``) and
refuses to arm with only "Arming denied: Resolve system health failures first"
(the failing check goes out as an EVENT, which MAVSDK does not show). A
companion waiting for "armable" would wait for ever; selecting Hold, as
``px4-commander mode auto:loiter`` does, clears it. Issue 36, row 13.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

OFFBOARD_BLOCKER = "offboard signal: PX4 is in OFFBOARD with no setpoint stream (it does not arm so)"
# STATUSTEXT severities PX4 uses for refusals and failed checks.
_TELLING = ("EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING")


def stuck_in_offboard(s: VehicleState) -> bool:
    """Disarmed on the ground with OFFBOARD selected: PX4 will not arm until another mode is."""
    return not s.armed and not s.in_air and s.flight_mode == "OFFBOARD"


async def leave_offboard_on_ground(bridge: Any) -> bool:
    """Select Hold when the vehicle sits disarmed on the ground in OFFBOARD; True when it did.

    Hold is what PX4 accepts on the ground and what it chooses itself after a Land
    that did not follow offboard flight: nothing moves, and arming works again.
    """
    if not stuck_in_offboard(bridge.state):
        return False
    log.info("disarmed on the ground in OFFBOARD: selecting Hold",
             extra={"fields": {"event": "left_offboard_on_ground"}})
    await bridge.commands.hold()
    return True


def arming_blockers(s: VehicleState, texts: list[str]) -> list[str]:
    """What the state and the autopilot's recent warnings say keeps PX4 from arming."""
    out = []
    if stuck_in_offboard(s):
        out.append(OFFBOARD_BLOCKER)
    out += [name for name, ok in (("global position", s.global_position_ok), ("home position", s.home_position_ok),
                                  ("local position", s.local_position_ok)) if not ok]
    if s.gps_fix in ("NO_GPS", "NO_FIX"):
        out.append(f"GPS ({s.gps_fix})")
    out += [f'autopilot: "{t}"' for t in texts if t not in out]
    return out or ["none reported by the autopilot"]


class RecentWarnings:
    """The autopilot's warning STATUSTEXTs while in use (``async with``), newest last, without repeats."""

    def __init__(self, hub: Any, keep: int = 8) -> None:
        self._hub = hub
        self._texts: deque[str] = deque(maxlen=keep)
        self._task: asyncio.Task | None = None

    @property
    def texts(self) -> list[str]:
        return list(self._texts)

    async def __aenter__(self) -> "RecentWarnings":
        self._task = asyncio.get_running_loop().create_task(self._collect(), name="arming-warnings")
        await asyncio.sleep(0)  # subscribed before the caller goes on
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _collect(self) -> None:
        async for text in self._hub.status_texts():
            if text.severity in _TELLING and text.text not in self._texts:
                self._texts.append(text.text)

"""Discrete vehicle commands (arm, takeoff, goto, hold, land, RTL, disarm) with typed outcomes.

Each command either returns normally or raises :class:`CommandError`
carrying a :class:`CommandResult`, so callers branch on an enum rather than
on MAVSDK's message strings. Every call has a deadline: the native binding
does its own retries, but a wedged library must never wedge the vehicle's
supervisor.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
from collections.abc import Callable
from typing import Any

from common.geodesy import geo_from_ned, ned_from_geo
from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import GlobalTarget, PositionNed
from firmware_bridge.safety_envelope import SafetyEnvelope, SafetyViolation

log = logging.getLogger(__name__)


class CommandResult(enum.Enum):
    SUCCESS = "success"
    DENIED = "denied"              # the autopilot refused (e.g. disarm in air)
    TIMEOUT = "timeout"            # no answer in time
    NOT_CONNECTED = "not_connected"
    BUSY = "busy"
    UNSUPPORTED = "unsupported"
    REFUSED_BY_ENVELOPE = "refused_by_envelope"
    FAILED = "failed"


class CommandError(BridgeError):
    """A command did not succeed; ``result`` says how."""

    def __init__(self, command: str, result: CommandResult, detail: str = "") -> None:
        super().__init__(f"{command}: {result.value}" + (f" ({detail})" if detail else ""))
        self.command = command
        self.result = result
        self.detail = detail


_ACTION_RESULTS = {
    "COMMAND_DENIED": CommandResult.DENIED,
    "COMMAND_DENIED_NOT_LANDED": CommandResult.DENIED,
    "COMMAND_DENIED_LANDED_STATE_UNKNOWN": CommandResult.DENIED,
    "TIMEOUT": CommandResult.TIMEOUT,
    "NO_SYSTEM": CommandResult.NOT_CONNECTED,
    "CONNECTION_ERROR": CommandResult.NOT_CONNECTED,
    "BUSY": CommandResult.BUSY,
    "UNSUPPORTED": CommandResult.UNSUPPORTED,
}


def result_from_mavsdk(exc: Exception) -> CommandResult:
    """Map a MAVSDK plugin error (ActionError, OffboardError...) to our enum."""
    name = getattr(getattr(exc, "result", None), "name", "")
    return _ACTION_RESULTS.get(name, CommandResult.FAILED)


class Commands:
    """The command half of the bridge; every target passes the safety envelope first."""

    def __init__(self, action: Any, envelope_of: Any, timeout_s: float,
                 on_event: Callable[[str, dict], Any] | None = None,
                 separation_check: Callable[[PositionNed, SafetyEnvelope], str | None] | None = None) -> None:
        # ``envelope_of`` is a callable so that a re-homed envelope is always the one used.
        self._action = action
        self._envelope_of = envelope_of
        self._timeout_s = timeout_s
        # A command the autopilot refused is an event (``command_refused``), not only a log line.
        self._on_event = on_event or (lambda kind, detail: None)
        # In a fleet, a goto's path is checked against the others once (PX4 flies it without asking again).
        self._separation_check = separation_check

    async def _call(self, name: str, coro: Any) -> None:
        try:
            await asyncio.wait_for(coro, self._timeout_s)
        except asyncio.TimeoutError as exc:
            log.warning("command %s timed out", name, extra={"fields": {"event": "command", "command": name, "result": "timeout"}})
            raise CommandError(name, CommandResult.TIMEOUT, f"no answer within {self._timeout_s:.1f} s") from exc
        except BridgeError:
            raise
        except Exception as exc:  # MAVSDK plugin errors
            result = result_from_mavsdk(exc)
            log.warning("command %s failed: %s", name, exc, extra={"fields": {"event": "command", "command": name, "result": result.value}})
            if result in (CommandResult.DENIED, CommandResult.UNSUPPORTED):
                self._on_event("command_refused", {"command": name, "result": result.value, "detail": str(exc)})
            raise CommandError(name, result, str(exc)) from exc
        log.info("command %s ok", name, extra={"fields": {"event": "command", "command": name, "result": "success"}})

    def _envelope(self) -> SafetyEnvelope:
        envelope = self._envelope_of()
        if envelope is None:
            raise CommandError("envelope", CommandResult.REFUSED_BY_ENVELOPE, "home position unknown: no envelope yet")
        return envelope

    async def arm(self) -> None:
        await self._call("arm", self._action.arm())

    async def disarm(self) -> None:
        await self._call("disarm", self._action.disarm())

    async def takeoff(self, altitude_m: float) -> None:
        """Take off to ``altitude_m`` above home (clamped into the envelope's altitude band)."""
        verdict = self._envelope().check_position(PositionNed(0.0, 0.0, -altitude_m))
        alt = verdict.intent.rel_alt_m
        await self._call("set_takeoff_altitude", self._action.set_takeoff_altitude(alt))
        await self._call("takeoff", self._action.takeoff())

    async def goto(self, target: GlobalTarget, speed_m_s: float | None = None) -> GlobalTarget:
        """Fly to a geodetic point (PX4 DO_REPOSITION); returns the target actually sent."""
        envelope = self._envelope()
        try:
            verdict = envelope.check_global(target)
        except SafetyViolation as exc:
            raise CommandError("goto", CommandResult.REFUSED_BY_ENVELOPE, exc.reason) from exc
        sent = verdict.intent
        if self._separation_check is not None:
            north, east = ned_from_geo(envelope.home, sent.lat, sent.lon)
            why = self._separation_check(PositionNed(north, east, -sent.rel_alt_m), envelope)
            if why is not None:
                raise CommandError("goto", CommandResult.REFUSED_BY_ENVELOPE, f"separation: {why}")
        if speed_m_s is not None:
            await self._call("set_current_speed", self._action.set_current_speed(envelope.clamp_speed(speed_m_s)))
        amsl = envelope.home.alt_amsl + sent.rel_alt_m
        yaw = sent.yaw_deg if math.isfinite(sent.yaw_deg) else float("nan")
        await self._call("goto", self._action.goto_location(sent.lat, sent.lon, amsl, yaw))
        return sent

    async def goto_local(self, target: PositionNed, speed_m_s: float | None = None) -> GlobalTarget:
        """Fly to a point given in metres north/east/down of home."""
        envelope = self._envelope()
        lat, lon = geo_from_ned(envelope.home, target.north_m, target.east_m)
        return await self.goto(GlobalTarget(lat, lon, target.rel_alt_m, target.yaw_deg), speed_m_s)

    async def hold(self) -> None:
        await self._call("hold", self._action.hold())

    async def land(self) -> None:
        await self._call("land", self._action.land())

    async def return_to_launch(self) -> None:
        await self._call("return_to_launch", self._action.return_to_launch())

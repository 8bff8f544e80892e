"""Taking down a vehicle that is in the air when the supervisor starts or is told to stop.

Why this exists (issue 19, items 13 and 14): a supervisor restarted mid-flight
found the vehicle hovering and either ignored it (standby) or took it over by
luck; a SIGTERM (systemd stop, `make flash`) could end the process with the
vehicle still up. Both now hand the vehicle to PX4's own RTL or Land, which
PX4 finishes without us; the process waits for touchdown only as long as it
was given, because systemd will not wait forever.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.maneuvers import wait_until

log = logging.getLogger("aerie.supervisor")

EventFn = Callable[[str, Any], None]


def airborne(bridge: FlightBridge) -> bool:
    s = bridge.state
    return s.armed and s.in_air


async def command_down(bridge: FlightBridge, how: str) -> None:
    """RTL or land, as PX4 understands them; raises CommandError when the autopilot does not accept."""
    if how == "rtl":
        await bridge.commands.return_to_launch()
    else:
        await bridge.commands.land()


async def wait_down(bridge: FlightBridge, timeout_s: float) -> bool:
    """True once landed and disarmed; False when ``timeout_s`` passed first (PX4 is still on it)."""
    try:
        await wait_until(bridge, lambda s: not s.in_air and not s.armed, timeout_s, "landed and disarmed")
    except asyncio.TimeoutError:
        return False
    except Exception:  # ManeuverTimeout
        return False
    return True


async def adopt_airborne(bridge: FlightBridge, how: str, event: EventFn) -> bool:
    """At start: a vehicle already armed and in the air is sent home (or landed). True if it was."""
    if not airborne(bridge):
        return False
    s = bridge.state
    detail = {"action": how, "mode": s.flight_mode, "rel_alt_m": round(s.rel_alt_m, 1)}
    log.warning("vehicle already airborne at start (mode %s, %.1f m): %s", s.flight_mode, s.rel_alt_m,
                "returning to launch" if how == "rtl" else "landing",
                extra={"fields": {"event": "adopted_airborne", **detail}})
    try:
        await command_down(bridge, how)
    except Exception as exc:
        detail["error"] = f"{type(exc).__name__}: {exc}"
        log.error("could not take down the airborne vehicle: %s", exc)
    event("adopted_airborne", detail)
    return True


async def bring_down_on_stop(bridge: FlightBridge, how: str, timeout_s: float, event: EventFn) -> str:
    """At exit: an airborne vehicle gets RTL/land now, then at most ``timeout_s`` to be down."""
    if not airborne(bridge):
        return "on ground"
    try:
        await command_down(bridge, how)
    except Exception as exc:
        log.error("on stop: could not command %s: %s", how, exc)
        event("stop_airborne", {"action": how, "error": f"{type(exc).__name__}: {exc}"})
        return f"could not {how}: {exc}"
    event("stop_airborne", {"action": how, "wait_s": timeout_s})
    down = await wait_down(bridge, timeout_s)
    return ("returned to launch" if how == "rtl" else "landed") if down else \
        f"{'returning to launch' if how == 'rtl' else 'landing'} (PX4 finishing; exited after {timeout_s:.0f} s)"

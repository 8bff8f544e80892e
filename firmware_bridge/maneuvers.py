"""Small closed-loop manoeuvres built on the bridge: fly until a condition holds, or time out.

They keep the offboard intent fresh while they wait (the streamer's watchdog
would otherwise, rightly, stop the stream) and always end on a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from typing import TYPE_CHECKING

from common.geodesy import ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from firmware_bridge.errors import BridgeError
from firmware_bridge.ground_mode import RecentWarnings, arming_blockers, leave_offboard_on_ground, stuck_in_offboard
from firmware_bridge.intents import GlobalTarget, Intent, PositionNed, VelocityNed
from firmware_bridge.vehicle_state import VehicleState

if TYPE_CHECKING:
    from firmware_bridge.offboard_pilot import OffboardPilot

REFRESH_S = 0.1
ARM_RETRIES = 10
ARM_LINK_WAIT_S = 10.0  # the least an arm waits for a link gone quiet, however late the checks passed
LEAVE_OFFBOARD_RETRY_S = 2.0  # a Hold that PX4 did not take (or whose HEARTBEAT is late) is sent again
# Slower than this, horizontally and vertically (m/s), a vehicle hovers: PX4 would carry it on at most
# about 0.3 m after a Land (common/stopping.py).
HOVER_SPEED_M_S = 0.5
# A brake that has not come to a hover by then gives up (the landing goes ahead, judged where PX4 will
# put the vehicle down): seconds, several times a stop from 12 m/s.
BRAKE_TIMEOUT_S = 15.0


class ManeuverTimeout(BridgeError):
    """The vehicle did not reach the manoeuvre's goal in time."""


def position_from_home(bridge: FlightBridge, s: VehicleState | None = None) -> PositionNed:
    """The vehicle's position in metres north/east/down of home."""
    s = s or bridge.state
    envelope = bridge.envelope()
    if envelope is None or not math.isfinite(s.lat):
        return PositionNed(math.nan, math.nan, math.nan)
    north, east = ned_from_geo(envelope.home, s.lat, s.lon)
    return PositionNed(north, east, -s.rel_alt_m)


def distance_m(a: PositionNed, b: PositionNed) -> float:
    return math.dist((a.north_m, a.east_m, a.down_m), (b.north_m, b.east_m, b.down_m))


async def wait_until(bridge: FlightBridge, predicate, timeout_s: float, what: str) -> VehicleState:
    try:
        return await bridge.hub.wait_for(predicate, timeout_s)
    except asyncio.TimeoutError as exc:
        raise ManeuverTimeout(f"{what}: not reached within {timeout_s:.0f} s") from exc


async def hold_intent(bridge: FlightBridge, intent: Intent, seconds: float) -> None:
    """Stream ``intent`` for ``seconds``, refreshing it like a live agent would."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        bridge.submit(intent)
        await asyncio.sleep(REFRESH_S)


async def offboard_to(bridge: FlightBridge, target: PositionNed, tolerance_m: float = 1.0, timeout_s: float = 30.0) -> float:
    """Fly an offboard position target until within ``tolerance_m``; returns the seconds taken."""
    start = time.monotonic()
    while True:
        bridge.submit(target)
        if distance_m(position_from_home(bridge), target) <= tolerance_m:
            return time.monotonic() - start
        if time.monotonic() - start > timeout_s:
            raise ManeuverTimeout(f"offboard target {target} not reached within {timeout_s:.0f} s")
        await asyncio.sleep(REFRESH_S)


async def goto_and_wait(bridge: FlightBridge, target: GlobalTarget, tolerance_m: float = 1.5,
                        timeout_s: float = 60.0, speed_m_s: float | None = None) -> float:
    start = time.monotonic()
    sent = await bridge.commands.goto(target, speed_m_s)
    envelope = bridge.envelope()
    assert envelope is not None
    n, e = ned_from_geo(envelope.home, sent.lat, sent.lon)
    goal = PositionNed(n, e, -sent.rel_alt_m)
    await wait_until(bridge, lambda s: distance_m(position_from_home(bridge, s), goal) <= tolerance_m, timeout_s, "goto")
    return time.monotonic() - start


def _ready(s: VehicleState) -> bool:
    return s.armable and not stuck_in_offboard(s)


async def arm_when_ready(bridge: FlightBridge, timeout_s: float = 60.0) -> None:
    """Arm once PX4's pre-arm checks pass, first taking it out of offboard if it sits in it.

    PX4 refuses to arm until its pre-arm checks pass (about 4 s after boot), and
    MAVSDK may still show a restarted autopilot's old health: retry briefly.
    After a landing from offboard flight PX4 sits disarmed in OFFBOARD, which it
    never arms in without setpoints (see ground_mode.py): select Hold, again if
    the mode shows up late. When the checks never pass, the error says which
    ones the autopilot's state and warnings name.
    """
    async with RecentWarnings(bridge.hub) as warnings:
        deadline = time.monotonic() + timeout_s
        last_hold = -math.inf
        while not _ready(bridge.state):  # OFFBOARD is left even when MAVSDK still shows an old "armable"
            now = time.monotonic()
            if now >= deadline:
                blockers = "; ".join(arming_blockers(bridge.state, warnings.texts))
                raise ManeuverTimeout(f"pre-arm checks: not reached within {timeout_s:.0f} s; blocking: {blockers}")
            if stuck_in_offboard(bridge.state) and now - last_hold >= LEAVE_OFFBOARD_RETRY_S:
                last_hold = now
                try:
                    await leave_offboard_on_ground(bridge)
                except CommandError:  # refused or unanswered: the deadline's error names what blocks
                    pass
            with contextlib.suppress(asyncio.TimeoutError):
                await bridge.hub.wait_for(_ready, min(LEAVE_OFFBOARD_RETRY_S, max(0.0, deadline - now)))
    deadline = max(deadline, time.monotonic() + ARM_LINK_WAIT_S)
    for attempt in range(ARM_RETRIES):
        await _link_within(bridge, deadline)
        try:
            await bridge.commands.arm()
            return
        except CommandError as exc:
            retriable = exc.result in (CommandResult.DENIED, CommandResult.NOT_CONNECTED)
            if not retriable or attempt == ARM_RETRIES - 1 or time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.5)


async def _link_within(bridge: FlightBridge, deadline: float) -> None:
    """A heartbeat gap on a loaded companion clears the link for a moment; arming waits it out.

    The bridge refuses every command while the link is down (nothing is queued), so an
    arm sent in such a gap fails at once though the autopilot is fine a poll later.
    """
    link_ok = bridge.monitor.link_ok
    if link_ok.is_set():
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(link_ok.wait(), max(0.0, deadline - time.monotonic()))


async def takeoff_and_wait(bridge: FlightBridge, altitude_m: float, timeout_s: float = 60.0) -> float:
    """Arm and take off in PX4's Takeoff mode; returns once at ``altitude_m``."""
    start = time.monotonic()
    await arm_when_ready(bridge, timeout_s)
    await bridge.commands.takeoff(altitude_m)
    await wait_until(bridge, lambda s: s.in_air and s.rel_alt_m >= altitude_m - 0.5, timeout_s, "takeoff")
    return time.monotonic() - start


async def land_and_wait(bridge: FlightBridge, timeout_s: float = 90.0) -> float:
    start = time.monotonic()
    await bridge.commands.land()
    await wait_until(bridge, lambda s: not s.in_air and not s.armed, timeout_s, "land and disarm")
    return time.monotonic() - start


def hovering(s: VehicleState, limit_m_s: float = HOVER_SPEED_M_S) -> bool:
    """Moving no faster than ``limit_m_s`` horizontally and vertically (unknown velocity: not hovering)."""
    return math.hypot(s.vn_m_s, s.ve_m_s) <= limit_m_s and abs(s.vd_m_s) <= limit_m_s


async def brake_to_hover(pilot: "OffboardPilot", timeout_s: float = BRAKE_TIMEOUT_S) -> bool:
    """Stop the vehicle in offboard and hold it where it stopped; True when it came to a hover in time.

    Before a Land: PX4 puts a moving multirotor down a braking distance further on, about 12 m from
    7 m/s (common/stopping.py), so a landing judged where it was commanded came down beside
    another member (issue 36, row 14). A zero velocity, not a position: a position setpoint where
    the vehicle is is overshot by its stopping distance and flown back to; the zero velocity stops
    it at its own braking rate, with the setpoint passing the envelope and the separation rule like
    any other. Once stopped (or out of time) the pilot holds the position reached.
    """
    yaw = pilot.here().yaw_deg
    stopped = await pilot.hold_until(VelocityNed(0.0, 0.0, 0.0, yaw), hovering, timeout_s, "brake")
    here = pilot.here()
    if math.isfinite(here.north_m + here.east_m + here.down_m):
        await pilot.hold_until(here, lambda s: True, REFRESH_S, "hover")  # from now on: hold this position
    return stopped

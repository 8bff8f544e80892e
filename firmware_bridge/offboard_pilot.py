"""Flies a whole flight in PX4 offboard, so that a dead supervisor always ends in PX4's own failsafe.

Why offboard for every move and not a goto: a goto (DO_REPOSITION) leaves PX4
in Hold, where nothing on the vehicle watches the companion computer; a
SIGKILLed supervisor left it hovering, armed, until the battery ran low
(issue 19, item 12). In offboard PX4 needs a setpoint at least every
``COM_OF_LOSS_T``. MAVSDK's native Offboard plugin repeats ours at 20 Hz
from a C++ thread of *this* process, so when the process dies the stream
dies with it and PX4's offboard-loss action (``COM_OBL_RC_ACT``: land,
return, or descend) takes over within ``COM_OF_LOSS_T``. A supervisor that
is wedged rather than dead ends the same way: one asyncio task refreshes the
intent every ``REFRESH_S``, and the streamer's staleness watchdog drops the
stream when that task stops running.

How a move is flown: a "carrot" position walks from the start to the goal at
the move's speed and PX4's position controller follows it a few metres
behind (a bare position setpoint far away would be flown at
``MPC_XY_VEL_MAX``). Every carrot passes the safety envelope: once when
submitted and again on every tick of the streamer. A carrot the envelope
refuses (a fence the straight line crosses) stops the move where the last
accepted carrot was, and says why.

A look-up's climb, turn and descent have nothing to walk: `hold_until` holds
one position (straight above or below, or the same one with another yaw)
until the vehicle gets there; PX4 limits the climb, descent and yaw rates
itself (MPC_Z_VEL_MAX_UP/DN, MPC_YAWRAUTO_MAX).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.intents import PositionNed
from firmware_bridge.maneuvers import distance_m, position_from_home, wait_until
from firmware_bridge.safety_envelope import SafetyViolation
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

REFRESH_S = 0.1
ENGAGE_TIMEOUT_S = 10.0

Target = Callable[[float], PositionNed]  # time.monotonic() -> where to be


def carrot(start: PositionNed, goal: PositionNed, speed_m_s: float, t0: float) -> Target:
    """A point that leaves ``start`` at ``t0`` and walks to ``goal`` at ``speed_m_s``, horizontally.

    Altitude is the goal's from the start: PX4 limits the climb rate itself
    (MPC_Z_VEL_MAX_UP/DN), and moves are flown level anyway.
    """
    dn, de = goal.north_m - start.north_m, goal.east_m - start.east_m
    length = math.hypot(dn, de)

    def at(now: float) -> PositionNed:
        f = 1.0 if length < 1e-6 else min(1.0, max(0.0, speed_m_s * (now - t0) / length))
        return PositionNed(start.north_m + f * dn, start.east_m + f * de, goal.down_m, goal.yaw_deg)

    return at


def bearing_deg(start: PositionNed, goal: PositionNed, default: float) -> float:
    dn, de = goal.north_m - start.north_m, goal.east_m - start.east_m
    return math.degrees(math.atan2(de, dn)) % 360.0 if math.hypot(dn, de) >= 1.0 else default


class OffboardPilot:
    """Keeps one offboard intent fresh from engage() to release(); moves change what that intent is."""

    def __init__(self, bridge: FlightBridge, refresh_s: float = REFRESH_S) -> None:
        self.bridge = bridge
        self.refresh_s = refresh_s
        self._target: Target | None = None
        self._last_ok: PositionNed | None = None
        self._task: asyncio.Task | None = None
        self.refused: str | None = None  # why the envelope stopped the current move, if it did
        self.engaged_at = -math.inf  # time.monotonic() of the last successful engage()

    # -- state ---------------------------------------------------------------------------
    @property
    def engaged(self) -> bool:
        """PX4 is in offboard on our stream (false after a failsafe, a link loss or a mode change)."""
        return (self._task is not None and self.bridge.streamer.streaming
                and self.bridge.state.flight_mode == "OFFBOARD")

    def holding(self) -> PositionNed | None:
        """Where the pilot wants the vehicle now (the carrot, or the position held), or None when idle."""
        target = self._target
        return target(time.monotonic()) if target is not None else None

    def here(self) -> PositionNed:
        p = position_from_home(self.bridge)
        yaw = self.bridge.state.yaw_deg
        return PositionNed(p.north_m, p.east_m, p.down_m, yaw if math.isfinite(yaw) else 0.0)

    # -- life ------------------------------------------------------------------------------
    async def engage(self, hold: PositionNed | None = None, timeout_s: float = ENGAGE_TIMEOUT_S) -> None:
        """Enter offboard holding ``hold`` (default: where the vehicle is), and keep it fresh."""
        target = hold if hold is not None else self.here()
        target = self.bridge.streamer.submit(target).intent  # refused -> SafetyViolation, nothing started
        self._hold(target)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._refresh(), name="offboard-pilot")
        await self.bridge.streamer.start_offboard(target)
        await wait_until(self.bridge, lambda s: s.flight_mode == "OFFBOARD", timeout_s, "offboard mode")
        self.engaged_at = time.monotonic()
        log.info("offboard engaged", extra={"fields": {"event": "offboard_engaged"}})

    async def release(self) -> None:
        """Stop refreshing and streaming: after land/RTL has taken the vehicle out of offboard."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._target = None
        self.bridge.streamer.clear()

    # -- moves -----------------------------------------------------------------------------
    async def fly_to(self, goal: PositionNed, speed_m_s: float, tolerance_m: float, timeout_s: float) -> bool:
        """Walk the carrot to ``goal``; True once within ``tolerance_m``, False on timeout or refusal.

        The pilot holds the last carrot afterwards, in offboard, until the next move.
        """
        envelope = self.bridge.envelope()
        if envelope is None:
            raise SafetyViolation("home position unknown: no envelope yet", goal)
        speed = envelope.clamp_speed(speed_m_s)
        start = self.here()
        goal = PositionNed(goal.north_m, goal.east_m, goal.down_m, bearing_deg(start, goal, start.yaw_deg))
        self.refused = None
        self._target = carrot(start, goal, speed, time.monotonic())
        try:
            await wait_until(self.bridge, lambda s: self.refused is not None
                             or distance_m(position_from_home(self.bridge, s), self.as_flown(goal)) <= tolerance_m,
                             timeout_s, "offboard move")
        except Exception:
            self._hold(self._last_ok or self.here())
            return False
        if self.refused is not None:
            return False
        self._hold(goal)
        return True

    def as_flown(self, goal: PositionNed) -> PositionNed:
        """``goal`` at the altitude the fleet's separation rule has the vehicle fly it now, else ``goal``.

        A vehicle yielding on its layer (``layer``, or ``fallback`` while the fleet channel is
        silent) flies every position target at the layer's altitude, so it is there when it is
        over the goal on its layer; judged at the goal's own altitude it would never arrive and
        every move would end in its timeout (the first fleet runs of ``aerie bench fleet``).
        Holds and climbs where it stands are not arrivals: they keep the goal as it is.
        """
        d = getattr(getattr(self.bridge, "fleet", None), "last", None)
        if d is not None and d.action in ("layer", "fallback") and isinstance(d.intent, PositionNed):
            return PositionNed(goal.north_m, goal.east_m, d.intent.down_m, goal.yaw_deg)
        return goal

    async def hold_until(self, at: PositionNed, reached: Callable[[VehicleState], bool], timeout_s: float,
                         what: str) -> bool:
        """Hold ``at`` until ``reached(state)``; False on timeout or when the envelope refuses ``at``.

        The held position passes the envelope on every tick like every carrot; the pilot goes on
        holding it (or the last accepted one) afterwards, in offboard, until the next leg.
        """
        self.refused = None
        self._hold(at)
        try:
            await wait_until(self.bridge, lambda s: self.refused is not None or reached(s), timeout_s, what)
        except Exception:
            return False
        return self.refused is None

    def _hold(self, at: PositionNed) -> None:
        self._target = lambda now: at

    async def _refresh(self) -> None:
        while True:
            target = self._target
            if target is not None:
                intent = target(time.monotonic())
                try:
                    self._last_ok = self.bridge.submit(intent).intent
                except SafetyViolation as exc:
                    if self.bridge.failsafe_reason is None and self.bridge.monitor.link_ok.is_set():
                        # The envelope refused this carrot: stop where the last accepted one was.
                        self.refused = exc.reason
                        self._hold(self._last_ok or self.here())
                    # else: link lost or a failsafe owns the vehicle; the intent ages and the stream stops
                except Exception:  # never let one bad tick end the refreshing
                    log.exception("offboard refresh failed")
            await asyncio.sleep(self.refresh_s)

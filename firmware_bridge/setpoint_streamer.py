"""Streams the current offboard intent at a fixed rate, from its own thread.

Who keeps the beat: MAVSDK's native Offboard plugin re-sends the last
setpoint at 20 Hz from its own C++ thread, which no Python thread (and no
GIL held by an inference thread) can delay. This module decides *what* that
setpoint is: its own thread re-checks the intent against the safety
envelope every tick (a velocity that was safe a second ago may now carry the
vehicle into the fence) and hands MAVSDK a new setpoint only when the
checked value changes. Measured on a loaded 2-core machine, a Python loop
alone showed p99 periods of 65 ms; the native timer is what keeps the wire
steady.

Why a staleness watchdog: that same native re-sending continues for as long
as the Offboard plugin lives, whatever happened to the code that set it
(MAVSDK's most reported defect, #374). When no fresh intent arrives within
``intent_timeout_s`` we *destroy* the plugin, which is the only way to make
MAVSDK stop, so PX4's own offboard-loss failsafe (COM_OF_LOSS_T, then
COM_OBL_RC_ACT) takes over exactly as if the companion computer had died.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.geodesy import ned_from_geo
from firmware_bridge.commands import CommandError, CommandResult, result_from_mavsdk
from firmware_bridge.intents import Intent, PositionNed, VelocityNed
from firmware_bridge.safety_envelope import SafetyEnvelope, SafetyViolation, Verdict
from firmware_bridge.settings import StreamerConfig
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Stamped:
    intent: Intent
    t: float  # time.monotonic() when submitted


class SetpointStreamer:
    """Owns MAVSDK's Offboard plugin; the only sender of offboard setpoints."""

    def __init__(
        self,
        raw_system: Any,
        cfg: StreamerConfig,
        envelope_of: Callable[[], SafetyEnvelope | None],
        state_of: Callable[[], VehicleState],
        on_event: Callable[[str, dict], None] | None = None,
        offboard_factory: Callable[[Any], Any] | None = None,
        separation: Callable[[Intent, SafetyEnvelope], Any] | None = None,
    ) -> None:
        from mavsdk.plugins.offboard import Offboard

        self._raw_system = raw_system
        self._cfg = cfg
        self._envelope_of = envelope_of
        self._state_of = state_of
        self._on_event = on_event or (lambda kind, detail: None)
        self._make_offboard = offboard_factory or Offboard
        # The fleet's separation rule (FleetGuard.apply): judges what the envelope let through.
        self._separation = separation
        self._latest: _Stamped | None = None
        self._lock = threading.Lock()  # guards the plugin's lifetime against close()
        self._plugin: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.tick_times: deque[float] = deque(maxlen=200_000)  # send times, for benchmarks
        # Periods between consecutive ticks of one uninterrupted stream (none across a pause in
        # offboard), seconds: what a supervisor reports as its setpoint timing.
        self.periods_s: deque[float] = deque(maxlen=200_000)
        self._prev_tick: float | None = None
        # When the stream last stopped because no fresh intent came (the supervisor's loop stalled),
        # time.monotonic(): the executor tells that apart from a person taking the vehicle over.
        self.stalled_at: float | None = None
        self._last_sent: tuple | None = None
        self.priority = "default"

    # -- public ------------------------------------------------------------------
    @property
    def streaming(self) -> bool:
        return self._plugin is not None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="setpoint-streamer", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with self._lock:
            self._drop_plugin()

    def submit(self, intent: Intent) -> Verdict:
        """Check ``intent`` against the envelope and make it the one streamed. Thread-safe.

        Raises :class:`SafetyViolation` when the envelope refuses it; the
        previous intent then keeps ageing, so a stream of refused intents ends
        in the staleness failsafe rather than in flying the last good one forever.
        """
        verdict = self._check(intent)
        self._latest = _Stamped(intent, time.monotonic())
        return verdict

    def clear(self) -> None:
        """Forget the intent and stop streaming now (after offboard has been left)."""
        self._latest = None
        with self._lock:
            self._drop_plugin()

    async def start_offboard(self, first: Intent, settle_s: float = 0.3) -> None:
        """Start PX4 offboard the way PX4 requires: setpoints first, then the mode switch."""
        self.submit(first)
        self.start()
        deadline = time.monotonic() + max(settle_s, 3.0 / self._cfg.rate_hz)
        while time.monotonic() < deadline or self._plugin is None:
            if time.monotonic() > deadline + 2.0:
                raise CommandError("offboard_start", CommandResult.FAILED, "setpoint stream did not start")
            await asyncio.sleep(0.02)
        plugin = self._plugin
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(loop.run_in_executor(None, plugin.start), 5.0)
        except asyncio.TimeoutError as exc:
            raise CommandError("offboard_start", CommandResult.TIMEOUT) from exc
        except Exception as exc:
            raise CommandError("offboard_start", result_from_mavsdk(exc), str(exc)) from exc
        log.info("offboard started", extra={"fields": {"event": "offboard_start"}})

    async def stop_offboard(self) -> None:
        """Leave offboard (MAVSDK switches the vehicle to Hold) and stop streaming."""
        plugin = self._plugin
        if plugin is not None:
            loop = asyncio.get_running_loop()
            try:
                await asyncio.wait_for(loop.run_in_executor(None, plugin.stop), 5.0)
            except asyncio.TimeoutError as exc:
                raise CommandError("offboard_stop", CommandResult.TIMEOUT) from exc
            except Exception as exc:
                raise CommandError("offboard_stop", result_from_mavsdk(exc), str(exc)) from exc
        self.clear()

    # -- internals ---------------------------------------------------------------
    def _check(self, intent: Intent) -> Verdict:
        envelope = self._envelope_of()
        if envelope is None:
            raise SafetyViolation("home position unknown: no envelope yet", intent)
        verdict = self._envelope_check(envelope, intent)
        if self._separation is None:
            return verdict
        decision = self._separation(verdict.intent, envelope)
        if not decision.changed:
            return verdict
        # What separation substitutes (a hold, a layer) passes the envelope like any intent.
        again = self._envelope_check(envelope, decision.intent)
        return Verdict(again.intent, True, verdict.reasons + (decision.reason,) + again.reasons)

    def _envelope_check(self, envelope: SafetyEnvelope, intent: Intent) -> Verdict:
        if isinstance(intent, PositionNed):
            return envelope.check_position(intent)
        return envelope.check_velocity(intent, self._here(envelope))

    def _here(self, envelope: SafetyEnvelope) -> PositionNed | None:
        s = self._state_of()
        if not (math.isfinite(s.lat) and math.isfinite(s.lon) and math.isfinite(s.rel_alt_m)):
            return None
        north, east = ned_from_geo(envelope.home, s.lat, s.lon)
        return PositionNed(north, east, -s.rel_alt_m)

    def _raise_priority(self) -> None:
        """Best effort: ask the kernel to run this thread ahead of inference threads.

        Round-robin real-time scheduling at a low RT priority when allowed
        (root, or CAP_SYS_NICE granted by the systemd unit), else a lower nice
        value, else nothing; the stream works either way, only its jitter
        under full CPU load differs.
        """
        if not self._cfg.realtime_priority:
            return
        try:
            os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(10))
            self.priority = "SCHED_RR 10"
            return
        except (OSError, AttributeError):
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -10)
            self.priority = "nice -10"
        except (OSError, AttributeError):
            self.priority = "default"
        log.info("setpoint thread priority: %s", self.priority)

    def _run(self) -> None:
        self._raise_priority()
        period = 1.0 / self._cfg.rate_hz
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception:  # never let one bad tick end the stream
                log.exception("setpoint tick failed")
            next_t += period
            delay = next_t - time.monotonic()
            if delay < -period:  # fell behind (machine stalled): resync, don't burst
                next_t = time.monotonic()
                delay = 0.0
            if delay > 0:
                self._stop.wait(delay)

    def _tick(self) -> None:
        stamped = self._latest
        now = time.monotonic()
        with self._lock:
            if stamped is None:
                self._prev_tick = None
                return
            if now - stamped.t > self._cfg.intent_timeout_s:
                self._prev_tick = None
                if self._plugin is not None:
                    self._drop_plugin()
                    self.stalled_at = now
                    age = now - stamped.t
                    log.warning(
                        "no fresh intent for %.2f s: setpoint stream stopped, autopilot failsafe takes over", age,
                        extra={"fields": {"event": "intent_stale", "age_s": round(age, 3)}},
                    )
                    self._on_event("intent_stale", {"age_s": age})
                return
            try:
                verdict = self._check(stamped.intent)
            except SafetyViolation as exc:
                # Position targets were checked on submit; this is a velocity whose
                # look-ahead now fails outright: hold position instead.
                log.warning("setpoint refused: %s", exc.reason)
                verdict = Verdict(VelocityNed(0.0, 0.0, 0.0), True, (exc.reason,))
            if self._plugin is None:
                self._plugin = self._make_offboard(self._raw_system)
                self._last_sent = None
            setpoint = self._setpoint(verdict.intent)
            if setpoint != self._last_sent:
                self._send(setpoint)
                self._last_sent = setpoint
            self.tick_times.append(now)
            if self._prev_tick is not None:
                self.periods_s.append(now - self._prev_tick)
            self._prev_tick = now

    def period_summary(self, since: int = 0) -> dict[str, float | None]:
        """Tick periods of the uninterrupted stream from the ``since``-th recorded on, in ms (None: none)."""
        d = sorted(list(self.periods_s)[since:])
        if not d:
            return {"count": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}

        def pct(q: float) -> float:  # nearest rank: a percentile that is one of the measured periods
            return d[min(len(d) - 1, max(0, math.ceil(q / 100.0 * len(d)) - 1))] * 1000.0

        return {"count": len(d), "p50_ms": round(pct(50), 2), "p99_ms": round(pct(99), 2),
                "max_ms": round(d[-1] * 1000.0, 2)}

    def _setpoint(self, intent: Intent) -> tuple:
        """The value MAVSDK should repeat: a tuple so that 'changed?' is a plain comparison."""
        if isinstance(intent, PositionNed):
            # Intents are relative to home; PX4's local frame is relative to its EKF origin.
            s = self._state_of()
            return ("position", intent.north_m + s.home_north_m, intent.east_m + s.home_east_m,
                    intent.down_m + s.home_down_m, intent.yaw_deg)
        return ("velocity", intent.north_m_s, intent.east_m_s, intent.down_m_s, intent.yaw_deg)

    def _send(self, setpoint: tuple) -> None:
        from mavsdk.plugins.offboard import PositionNedYaw, VelocityNedYaw

        kind, a, b, c, yaw = setpoint
        if kind == "position":
            self._plugin.set_position_ned(PositionNedYaw(a, b, c, yaw))
        else:
            self._plugin.set_velocity_ned(VelocityNedYaw(a, b, c, yaw))

    def _drop_plugin(self) -> None:
        plugin, self._plugin = self._plugin, None
        if plugin is not None:
            plugin.destroy()

"""The vehicle's camera gimbal through MAVSDK's gimbal plugin (MAVLink gimbal protocol v2), with deadlines.

Why a gimbal: a look-around that turns the whole vehicle spends flight time on every view and
moves the airframe for a camera's sake; a gimbal turns the camera alone, faster, while the
vehicle holds its heading. The gimbal moves no vehicle, so nothing here passes the safety
envelope, and nothing the gimbal does can make the bridge refuse a setpoint.

How it is found: MAVSDK asks each component of the autopilot's system for
GIMBAL_MANAGER_INFORMATION on its HEARTBEATs and announces a gimbal once its device answers;
the bridge uses one announced within ``gimbal.discovery_s`` of connecting. Its attitude,
control status and end stops reach `VehicleState` through the telemetry hub (the one place that
subscribes). A pointing takes primary control when nobody holds it (never from another
component: a ground station's operator keeps the gimbal they took), sends one
DO_GIMBAL_MANAGER_PITCHYAW with the yaw locked to north, and waits for the reported attitude.
Every command and each pointing's attitudes are journalled as events (``gimbal_command``,
``gimbal_attitude``); a gimbal that stops reporting is a ``gimbal_silent`` event and a command
it does not answer a `GimbalUnavailable` after the link's command timeout, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import yaw_error_deg
from firmware_bridge.settings import GimbalConfig
from firmware_bridge.telemetry_hub import TelemetryHub
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

WATCH_S = 0.25  # how often the silence watchdog looks at the attitude's age
# A pointing has settled when the gimbal reports turning slower than this (a frame taken while it still
# slews is taken on the way, at an angle the tolerance allows but the camera has already left).
SETTLED_DEG_S = 2.0


class GimbalUnavailable(BridgeError):
    """No gimbal to point: none announced, silent, controlled by another component, or a command failed."""


@dataclass(frozen=True)
class Pointing:
    """One pointing: what was asked (pitch, heading from north), whether the attitude got there, how long."""

    pitch_deg: float
    yaw_deg: float
    reached: bool
    seconds: float
    attitude: tuple[float, float]  # the last reported (pitch, heading), degrees


class GimbalPort:
    """The bridge's one way to the gimbal; `available` says whether a pointing may be asked of it now."""

    def __init__(self, cfg: GimbalConfig, system: Any, hub: TelemetryHub, command_timeout_s: float,
                 on_event: Callable[[str, dict[str, Any]], Any]) -> None:
        self.cfg = cfg
        self._system = system
        self._hub = hub
        self._timeout_s = command_timeout_s
        self._on_event = on_event
        self._plugin: Any = None
        self._watch: asyncio.Task | None = None
        self._deadline = math.inf  # discovery window's end (time.monotonic())
        self.silent = False

    # -- life ----------------------------------------------------------------------------------
    def start(self) -> None:
        """Create MAVSDK's gimbal plugin (discovery starts on the next HEARTBEATs) and watch for silence."""
        if not self.cfg.use or self._plugin is not None:
            return
        from mavsdk.asyncio.plugins.gimbal import GimbalAsync

        self._plugin = GimbalAsync(self._system)
        self._hub.start_gimbal(self._plugin)
        self._deadline = time.monotonic() + self.cfg.discovery_s
        self._watch = asyncio.get_running_loop().create_task(self._watch_silence(), name="gimbal-watch")

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None

    def destroy(self) -> None:
        """After the hub has stopped (its streams unsubscribe first)."""
        if self._plugin is not None:
            self._plugin.destroy()
            self._plugin = None

    # -- state ---------------------------------------------------------------------------------
    def fresh(self, s: VehicleState, now: float | None = None) -> bool:
        age = (time.monotonic() if now is None else now) - s.gimbal_attitude_t
        return s.gimbal_id > 0 and age <= self.cfg.attitude_timeout_s  # NaN (never reported) is not fresh

    async def available(self) -> bool:
        """A gimbal is announced and reporting. Waits out what is left of the discovery window first, so a
        look-around right after connecting does not turn the vehicle for a gimbal MAVSDK is still finding."""
        if self._plugin is None:
            return False
        left = self._deadline - time.monotonic()
        if left > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await self._hub.wait_for(self.fresh, left)
        return self.fresh(self._hub.state)

    def reaches(self, heading_deg: float, vehicle_yaw_deg: float, margin_deg: float = 0.0) -> bool:
        """Whether ``heading_deg`` lies within the yaw end stops (announced; unknown ones: everywhere)."""
        s = self._hub.state
        if not (math.isfinite(s.gimbal_yaw_min_deg) and math.isfinite(s.gimbal_yaw_max_deg)):
            return True
        if not math.isfinite(vehicle_yaw_deg):
            return False
        rel = (heading_deg - vehicle_yaw_deg + 180.0) % 360.0 - 180.0
        return s.gimbal_yaw_min_deg + margin_deg <= rel <= s.gimbal_yaw_max_deg - margin_deg

    def pitch_within_stops(self, pitch_deg: float) -> float:
        s = self._hub.state
        lo = s.gimbal_pitch_min_deg if math.isfinite(s.gimbal_pitch_min_deg) else -90.0
        hi = s.gimbal_pitch_max_deg if math.isfinite(s.gimbal_pitch_max_deg) else 90.0
        return max(lo, min(hi, pitch_deg))

    # -- commands ------------------------------------------------------------------------------
    async def _command(self, name: str, call: Callable[[], Any], detail: dict[str, Any]) -> None:
        """One plugin call with the link's deadline; journalled whatever its outcome."""
        t0 = time.monotonic()
        result = "SUCCESS"
        try:
            await asyncio.wait_for(call(), self._timeout_s)
        except asyncio.TimeoutError:
            result = "TIMEOUT"
        except Exception as exc:  # GimbalError: its result names why (DENIED comes back as ERROR)
            result = getattr(getattr(exc, "result", None), "name", type(exc).__name__)
        self._on_event("gimbal_command", {"command": name, **detail, "result": result,
                                      "seconds": round(time.monotonic() - t0, 3)})
        if result != "SUCCESS":
            raise GimbalUnavailable(f"gimbal {name}: {result}")

    async def take_control(self) -> None:
        """Primary control, unless another component holds it (then GimbalUnavailable: theirs to give back)."""
        from mavsdk.asyncio.plugins.gimbal import ControlMode

        s = self._hub.state
        if s.gimbal_control == "PRIMARY":
            return
        if s.gimbal_control == "OTHER":
            raise GimbalUnavailable("another component controls the gimbal")
        await self._command("take_control", lambda: self._plugin.take_control(s.gimbal_id, ControlMode.PRIMARY),
                            {"gimbal_id": s.gimbal_id})

    async def release_control(self) -> None:
        s = self._hub.state
        if self._plugin is None or s.gimbal_control not in ("PRIMARY", "SECONDARY"):
            return
        await self._command("release_control", lambda: self._plugin.release_control(s.gimbal_id),
                            {"gimbal_id": s.gimbal_id})

    async def point(self, pitch_deg: float, yaw_deg: float, tolerance_deg: float) -> Pointing:
        """Point the camera ``pitch_deg`` from the horizon and ``yaw_deg`` from north, and wait (at most
        ``gimbal.point_timeout_s``) until the reported attitude is within ``tolerance_deg`` of both and the
        gimbal has stopped turning.

        Raises GimbalUnavailable when there is no gimbal to point or it refuses or ignores the command.
        """
        from mavsdk.asyncio.plugins.gimbal import GimbalMode, SendMode

        if not await self.available():
            raise GimbalUnavailable("no gimbal reporting")
        await self.take_control()
        s = self._hub.state
        pitch = self.pitch_within_stops(pitch_deg)
        yaw = yaw_deg % 360.0
        await self._command("set_angles", lambda: self._plugin.set_angles(
            s.gimbal_id, 0.0, pitch, (yaw + 180.0) % 360.0 - 180.0, GimbalMode.YAW_LOCK, SendMode.ONCE),
            {"gimbal_id": s.gimbal_id, "pitch_deg": round(pitch, 2), "yaw_deg": round(yaw, 2), "frame": "north",
             "vehicle_yaw_deg": round(s.yaw_deg, 1) if math.isfinite(s.yaw_deg) else None})
        return await self._settle(pitch, yaw, tolerance_deg)

    async def _settle(self, pitch: float, yaw: float, tolerance_deg: float) -> Pointing:
        """Follow the reported attitude until it is there or the time is up; journal its track."""
        t0 = time.monotonic()
        track: list[list[float]] = []

        def there(s: VehicleState) -> bool:
            if s.gimbal_attitude_t >= t0 and (not track or track[-1][0] != round(s.gimbal_attitude_t - t0, 2)):
                track.append([round(s.gimbal_attitude_t - t0, 2), round(s.gimbal_pitch_deg, 1),
                              round(s.gimbal_yaw_deg, 1)])
            return (self.fresh(s) and s.gimbal_attitude_t >= t0 and abs(s.gimbal_pitch_deg - pitch) <= tolerance_deg
                    and yaw_error_deg(s.gimbal_yaw_deg, yaw) <= tolerance_deg
                    and not s.gimbal_rate_deg_s > SETTLED_DEG_S)  # NaN: a gimbal that reports no rate

        reached = True
        try:
            await self._hub.wait_for(there, self.cfg.point_timeout_s)
        except asyncio.TimeoutError:
            reached = False
        s = self._hub.state
        done = Pointing(pitch, yaw, reached, time.monotonic() - t0, (s.gimbal_pitch_deg, s.gimbal_yaw_deg))
        self._on_event("gimbal_attitude", {
            "pitch_deg": round(s.gimbal_pitch_deg, 2), "yaw_deg": round(s.gimbal_yaw_deg, 2),
            "yaw_body_deg": round(s.gimbal_yaw_body_deg, 2), "asked": [pitch, yaw], "reached": reached,
            "seconds": round(done.seconds, 3),
            "vehicle_yaw_deg": round(s.yaw_deg, 1) if math.isfinite(s.yaw_deg) else None,
            "track": track[-40:]})  # the attitudes on the way, (seconds, pitch, heading): its last 4 s
        return done

    # -- silence -------------------------------------------------------------------------------
    async def _watch_silence(self) -> None:
        """A gimbal once heard that stops reporting is an event (and again when it reports)."""
        while True:
            await asyncio.sleep(WATCH_S)
            s = self._hub.state
            if s.gimbal_id <= 0 or not math.isfinite(s.gimbal_attitude_t):
                continue
            fresh = self.fresh(s)
            if not fresh and not self.silent:
                self.silent = True
                self._on_event("gimbal_silent", {"age_s": round(time.monotonic() - s.gimbal_attitude_t, 2)})
            elif fresh and self.silent:
                self.silent = False
                self._on_event("gimbal_restored", {"pitch_deg": round(s.gimbal_pitch_deg, 1),
                                               "yaw_deg": round(s.gimbal_yaw_deg, 1)})

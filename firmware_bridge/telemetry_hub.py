"""Exactly one MAVSDK subscription per telemetry stream, fanned out to any number of readers.

Subscribing twice to the same MAVSDK stream is a known trap (the second
subscription can silently replace or starve the first), so this hub is the
only code that calls ``subscribe_*``: it refuses a second subscription to a
stream by name, keeps the latest value of everything in one
:class:`VehicleState`, and lets readers either read that snapshot or wait
for the next change.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from firmware_bridge.errors import BridgeError
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)


class DuplicateSubscription(BridgeError):
    """A second subscription to the same MAVSDK stream was attempted."""


@dataclasses.dataclass(frozen=True)
class StatusText:
    severity: str
    text: str
    t: float


class TelemetryHub:
    """Owns the telemetry subscriptions of one vehicle and its latest state.

    ``state`` may be read from any thread (it is one immutable object swapped
    atomically); everything else belongs to the event loop the hub runs on.
    """

    def __init__(self) -> None:
        self._state = VehicleState()
        self._tasks: dict[str, asyncio.Task] = {}
        self._watchers: set[asyncio.Event] = set()
        self._text_queues: set[asyncio.Queue] = set()
        self._autopilot_sysid: int | None = None
        self._first_value: dict[str, asyncio.Event] = {}

    @property
    def state(self) -> VehicleState:
        return self._state

    # -- lifecycle -----------------------------------------------------------
    def start(self, telemetry: Any, mavlink_direct: Any, autopilot_sysid: int) -> None:
        """Start one task per stream on the running loop."""
        self._autopilot_sysid = autopilot_sysid
        t = telemetry
        self._stream("position", t.subscribe_position, self._on_position)
        self._stream("position_velocity_ned", t.subscribe_position_velocity_ned, self._on_pv_ned)
        self._stream("attitude_euler", t.subscribe_attitude_euler, self._on_attitude)
        self._stream("battery", t.subscribe_battery, self._on_battery)
        self._stream("flight_mode", t.subscribe_flight_mode, lambda m: self._set(flight_mode=m.name))
        self._stream("armed", t.subscribe_armed, lambda a: self._set(armed=bool(a)))
        self._stream("in_air", t.subscribe_in_air, lambda a: self._set(in_air=bool(a)))
        self._stream("landed_state", t.subscribe_landed_state, lambda s: self._set(landed_state=s.name))
        self._stream("gps_info", t.subscribe_gps_info, self._on_gps)
        self._stream("health", t.subscribe_health, self._on_health)
        self._stream("home", t.subscribe_home, self._on_home)
        self._stream("status_text", t.subscribe_status_text, self._on_status_text)
        self._stream("heartbeat", lambda: mavlink_direct.subscribe_message("HEARTBEAT"), self._on_heartbeat)
        # The gimbal's end stops: MAVSDK's gimbal plugin asks for this message but does not pass its limits on.
        self._stream("gimbal_manager_information",
                     lambda: mavlink_direct.subscribe_message("GIMBAL_MANAGER_INFORMATION"),
                     self._on_gimbal_manager_information)

    def start_gimbal(self, gimbal: Any) -> None:
        """The gimbal plugin's streams (firmware_bridge/gimbal.py starts them once the plugin exists)."""
        self._stream("gimbal_list", gimbal.subscribe_gimbal_list, self._on_gimbal_list)
        self._stream("gimbal_attitude", gimbal.subscribe_attitude, self._on_gimbal_attitude)
        self._stream("gimbal_control", gimbal.subscribe_control_status, self._on_gimbal_control)

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        for task in self._tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def _stream(self, name: str, subscribe: Callable[[], AsyncIterator[Any]], on_value: Callable[[Any], None]) -> None:
        if name in self._tasks:
            raise DuplicateSubscription(f"telemetry stream '{name}' is already subscribed")
        self._first_value[name] = asyncio.Event()
        self._tasks[name] = asyncio.get_running_loop().create_task(self._pump(name, subscribe, on_value), name=f"telemetry:{name}")

    async def _pump(self, name: str, subscribe: Callable[[], AsyncIterator[Any]], on_value: Callable[[Any], None]) -> None:
        async for value in subscribe():
            try:
                on_value(value)
            except Exception:  # a malformed value must not end the stream
                log.exception("telemetry stream %s: bad value %r", name, value)
            else:
                self._first_value[name].set()

    def delivered(self, name: str) -> bool:
        """Whether stream ``name`` has delivered a value since the hub started."""
        event = self._first_value.get(name)
        return event is not None and event.is_set()

    async def wait_delivered(self, names: Sequence[str], timeout_s: float) -> list[str]:
        """Wait until every stream in ``names`` has delivered once; returns those still missing at the timeout."""
        pending = [self._first_value[n].wait() for n in names if not self.delivered(n)]
        if pending:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*pending), timeout_s)
        return [n for n in names if not self.delivered(n)]

    # -- readers ---------------------------------------------------------------
    async def changes(self) -> AsyncIterator[VehicleState]:
        """Yield the newest state after each change; a slow reader skips to the newest."""
        event = asyncio.Event()
        self._watchers.add(event)
        try:
            while True:
                await event.wait()
                event.clear()
                yield self._state
        finally:
            self._watchers.discard(event)

    async def wait_for(self, predicate: Callable[[VehicleState], bool], timeout_s: float) -> VehicleState:
        """Wait until ``predicate(state)`` holds; raises ``TimeoutError`` after ``timeout_s``."""
        if predicate(self._state):
            return self._state

        async def _wait() -> VehicleState:
            async for state in self.changes():
                if predicate(state):
                    return state
            raise AssertionError("unreachable")

        return await asyncio.wait_for(_wait(), timeout_s)

    async def status_texts(self) -> AsyncIterator[StatusText]:
        """Each autopilot STATUSTEXT from now on; a reader too slow for 256 of them loses the oldest."""
        queue: asyncio.Queue = asyncio.Queue(maxsize=256)
        self._text_queues.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._text_queues.discard(queue)

    def invalidate_health(self) -> None:
        """Forget health flags after a link loss: a restarted autopilot must earn them again."""
        self._set(global_position_ok=False, home_position_ok=False, local_position_ok=False, armable=False)

    # -- updates -----------------------------------------------------------------
    def _set(self, **changes: Any) -> None:
        changes.setdefault("last_update_t", time.monotonic())
        self._state = dataclasses.replace(self._state, **changes)
        for event in self._watchers:
            event.set()

    def _on_position(self, p: Any) -> None:
        self._set(lat=p.latitude_deg, lon=p.longitude_deg, alt_amsl_m=p.absolute_altitude_m, rel_alt_m=p.relative_altitude_m)

    def _on_pv_ned(self, pv: Any) -> None:
        pos, vel = pv.position, pv.velocity
        self._set(
            north_m=pos.north_m, east_m=pos.east_m, down_m=pos.down_m,
            vn_m_s=vel.north_m_s, ve_m_s=vel.east_m_s, vd_m_s=vel.down_m_s,
        )

    def _on_attitude(self, a: Any) -> None:
        self._set(roll_deg=a.roll_deg, pitch_deg=a.pitch_deg, yaw_deg=a.yaw_deg)

    def _on_battery(self, b: Any) -> None:
        # MAVSDK 2.x and later (4.x included) report remaining_percent as 0..100.
        self._set(battery_percent=b.remaining_percent, battery_voltage_v=b.voltage_v)

    def _on_gps(self, g: Any) -> None:
        self._set(gps_fix=g.fix_type.name, gps_satellites=int(g.num_satellites))

    def _on_health(self, h: Any) -> None:
        self._set(
            global_position_ok=bool(h.is_global_position_ok),
            home_position_ok=bool(h.is_home_position_ok),
            local_position_ok=bool(h.is_local_position_ok),
            armable=bool(h.is_armable),
        )

    def _on_home(self, h: Any) -> None:
        self._set(
            home_lat=h.latitude_deg, home_lon=h.longitude_deg, home_alt_amsl_m=h.absolute_altitude_m,
            home_north_m=_finite_or_zero(h.local_north_m), home_east_m=_finite_or_zero(h.local_east_m),
            home_down_m=_finite_or_zero(h.local_down_m),
        )

    def _on_status_text(self, s: Any) -> None:
        text = StatusText(severity=s.type.name, text=str(s.text).rstrip("\t"), t=time.monotonic())
        log.info("autopilot: %s", text.text, extra={"fields": {"event": "statustext", "severity": text.severity}})
        for queue in self._text_queues:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(text)

    def _on_gimbal_manager_information(self, msg: Any) -> None:
        if msg.system_id != self._autopilot_sysid:
            return
        f = json.loads(msg.fields_json)
        deg = {k: math.degrees(float(f[k])) for k in ("pitch_min", "pitch_max", "yaw_min", "yaw_max")}
        self._set(gimbal_pitch_min_deg=deg["pitch_min"], gimbal_pitch_max_deg=deg["pitch_max"],
                  gimbal_yaw_min_deg=deg["yaw_min"], gimbal_yaw_max_deg=deg["yaw_max"])

    def _on_gimbal_list(self, gimbals: Any) -> None:
        self._set(gimbal_id=int(gimbals.gimbals[0].gimbal_id) if gimbals.gimbals else 0)

    def _on_gimbal_attitude(self, a: Any) -> None:
        if a.gimbal_id != (self._state.gimbal_id or 1):  # the first gimbal is the camera's
            return
        body = a.euler_angle_forward.yaw_deg
        north = a.euler_angle_north.yaw_deg
        if not math.isfinite(north):  # MAVSDK had no vehicle heading yet
            north = self._state.yaw_deg + body
        rates = [abs(math.degrees(r)) for r in (a.angular_velocity.pitch_rad_s, a.angular_velocity.yaw_rad_s)
                 if math.isfinite(r)]
        self._set(gimbal_pitch_deg=a.euler_angle_forward.pitch_deg, gimbal_yaw_body_deg=body,
                  gimbal_rate_deg_s=max(rates) if rates else math.nan,
                  gimbal_yaw_deg=north % 360.0 if math.isfinite(north) else north,
                  gimbal_attitude_t=time.monotonic(), gimbal_attitude_us=int(a.timestamp_us))

    def _on_gimbal_control(self, c: Any) -> None:
        mode = c.control_mode.name
        if mode == "NONE" and c.sysid_primary_control != 0:
            mode = "OTHER"
        self._set(gimbal_control=mode)

    def _on_heartbeat(self, msg: Any) -> None:
        if msg.system_id == self._autopilot_sysid and msg.component_id == 1:
            self._set(last_heartbeat_t=time.monotonic())


def _finite_or_zero(x: float) -> float:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else 0.0

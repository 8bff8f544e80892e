"""The flight bridge: one object that owns the MAVSDK link to one vehicle.

It composes the pieces — connection, telemetry hub, commands, setpoint
streamer, safety envelope, fleet separation, failsafe monitor — and is the only way the rest of
Aerie reaches the autopilot. Use it as an async context manager::

    async with await FlightBridge.connect(cfg.bridge) as bridge:
        await bridge.commands.arm()
        await bridge.commands.takeoff(10)
        await bridge.streamer.start_offboard(VelocityNed(1, 0, 0))

What ``connect`` promises when it returns: every telemetry stream in
``STATE_STREAMS`` has delivered at least once (else ``StreamsMissing`` naming
the silent ones) and the vehicle is healthy with a known home (else
``HealthTimeout``), each within the link's timeouts. So no caller ever acts on
a default such as ``landed_state == "UNKNOWN"``.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import replace
from collections.abc import Iterable
from typing import Any

from common.geodesy import GeoPoint
from firmware_bridge.commands import CommandError, CommandResult, Commands
from firmware_bridge.connection import HealthTimeout, Link, open_link
from firmware_bridge.errors import BridgeError
from firmware_bridge.events import EventFanout, FlightStateEvents
from firmware_bridge.failsafe_monitor import FailsafeMonitor
from firmware_bridge.fleet_guard import FleetGuard
from firmware_bridge.fleet_picture import TrafficReport
from firmware_bridge.gimbal import GimbalPort
from firmware_bridge.intents import Intent
from firmware_bridge.safety_envelope import SafetyEnvelope, SafetyViolation, Verdict
from firmware_bridge.settings import BridgeConfig, GeofenceConfig
from firmware_bridge.setpoint_streamer import SetpointStreamer
from firmware_bridge.telemetry_hub import TelemetryHub
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

# The telemetry streams whose values the bridge's users act on (state, envelope, monitor, agent).
# `connect` returns only once each has delivered, so no caller ever reads a default that the
# autopilot never said (``landed_state == "UNKNOWN"`` on a vehicle standing on the ground).
STATE_STREAMS: tuple[str, ...] = ("heartbeat", "health", "home", "position", "position_velocity_ned",
                                  "attitude_euler", "battery", "flight_mode", "armed", "in_air", "landed_state")


class StreamsMissing(BridgeError):
    """The autopilot answered but some telemetry stream the bridge relies on never delivered."""


class FenceChangeRefused(BridgeError):
    """A geofence change was asked for while the vehicle is in the air."""


class _LinkGuardedAction:
    """MAVSDK's Action plugin, refusing at once while the link is down (queue nothing)."""

    def __init__(self, action: Any, link_ok: asyncio.Event) -> None:
        self._action = action
        self._link_ok = link_ok

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._action, name)

        async def guarded(*args: Any) -> Any:
            if not self._link_ok.is_set():
                raise CommandError(name, CommandResult.NOT_CONNECTED, "autopilot link lost")
            return await target(*args)

        return guarded


class FlightBridge:
    def __init__(self, cfg: BridgeConfig, link: Link) -> None:
        from mavsdk.asyncio.plugins.action import ActionAsync
        from mavsdk.asyncio.plugins.mavlink_direct import MavlinkDirectAsync
        from mavsdk.asyncio.plugins.telemetry import TelemetryAsync

        self.cfg = cfg
        self.link = link
        self.events = EventFanout()
        self.hub = TelemetryHub()
        self._telemetry = TelemetryAsync(link.system)
        self._mavlink_direct = MavlinkDirectAsync(link.system)
        self._envelope: SafetyEnvelope | None = None
        self._envelope_home: tuple[float, float, float] | None = None
        self.failsafe_reason: str | None = None
        self.hub.start(self._telemetry, self._mavlink_direct, link.sysid)
        self.events.add_listener(lambda e: self.hub.invalidate_health() if e.kind == "link_lost" else None)
        self.monitor = FailsafeMonitor(
            state_of=lambda: self.hub.state,
            envelope_of=self.envelope,
            heartbeat_timeout_s=cfg.link.heartbeat_timeout_s,
            events=self.events,
            return_to_launch=lambda: self.commands.return_to_launch(),
            land=lambda: self.commands.land(),
            on_failsafe=self._enter_failsafe,
        )
        self._action = ActionAsync(link.system)
        # Separation from the other vehicles of a fleet (inactive unless cfg.fleet.enabled).
        self.fleet = FleetGuard(cfg.fleet, cfg.safety, lambda: self.hub.state, self.envelope, self.events.emit)
        if cfg.fleet.enabled and cfg.fleet.member_id != link.sysid:
            log.warning("fleet.member_id %d differs from the autopilot's system id %d: make sure no other "
                        "member has either", cfg.fleet.member_id, link.sysid)
        self.commands = Commands(
            _LinkGuardedAction(self._action, self.monitor.link_ok),
            envelope_of=self.envelope,
            timeout_s=cfg.link.command_timeout_s,
            on_event=self.events.emit,
            separation_check=self.fleet.check_goto,
        )
        self.flight_events = FlightStateEvents(self.hub, self.events)
        # The camera gimbal, if the autopilot announces one (moves no vehicle: no envelope, no separation).
        self.gimbal = GimbalPort(cfg.gimbal, link.system, self.hub, cfg.link.command_timeout_s, self.events.emit)
        self.streamer = SetpointStreamer(
            link.system._system,  # the native System under the asyncio wrapper
            cfg.streamer,
            envelope_of=self.envelope,
            state_of=lambda: self.hub.state,
            on_event=self.events.emit,
            separation=self.fleet.apply,
        )

    # -- construction ---------------------------------------------------------------
    @classmethod
    async def connect(cls, cfg: BridgeConfig) -> "FlightBridge":
        """Connect and return once every stream of :data:`STATE_STREAMS` has delivered at least once
        and the vehicle is healthy, each within the link's timeouts;
        otherwise raise :class:`StreamsMissing` naming the silent streams, or :class:`HealthTimeout`."""
        link = await open_link(cfg.link.url, cfg.link.connect_timeout_s, gate=cfg.link.datagram_gate)
        bridge = cls(cfg, link)
        try:
            missing = await bridge.hub.wait_delivered(STATE_STREAMS, cfg.link.connect_timeout_s)
            if missing:
                raise StreamsMissing(f"autopilot on {link.url} answered, but within {cfg.link.connect_timeout_s:.1f} s "
                                     f"these telemetry streams never delivered: {', '.join(missing)}")
            bridge.monitor.start()
            bridge.flight_events.start()
            bridge.gimbal.start()  # after the hub's subscriptions: its end stops arrive once, when MAVSDK asks
            await bridge.wait_healthy(cfg.link.health_timeout_s)
        except BaseException:
            await bridge.close()
            raise
        return bridge

    async def wait_healthy(self, timeout_s: float) -> VehicleState:
        def ready(s: VehicleState) -> bool:
            return s.healthy and math.isfinite(s.home_lat) and math.isfinite(s.lat)

        try:
            return await self.hub.wait_for(ready, timeout_s)
        except asyncio.TimeoutError as exc:
            s = self.hub.state
            missing = [name for name, ok in (("global position", s.global_position_ok), ("home", s.home_position_ok),
                                             ("local position", s.local_position_ok)) if not ok]
            raise HealthTimeout(
                f"autopilot on {self.link.url} not healthy within {timeout_s:.1f} s: missing {', '.join(missing) or 'position'}"
            ) from exc

    async def close(self) -> None:
        self.streamer.close()
        await self.flight_events.stop()
        await self.monitor.stop()
        await self.gimbal.stop()
        await self.hub.stop()
        self.gimbal.destroy()
        for plugin in (self._telemetry, self._mavlink_direct, self._action):
            plugin.destroy()
        self.link.close()

    async def __aenter__(self) -> "FlightBridge":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- state ----------------------------------------------------------------------
    @property
    def state(self) -> VehicleState:
        return self.hub.state

    def envelope(self) -> SafetyEnvelope | None:
        """The envelope around the current home; rebuilt when PX4 re-sets home (at arming)."""
        s = self.hub.state
        if not math.isfinite(s.home_lat):
            return None
        home = (s.home_lat, s.home_lon, s.home_alt_amsl_m)
        if self._envelope is None or home != self._envelope_home:
            self._envelope = SafetyEnvelope(self.cfg.safety, GeoPoint(*home))
            self._envelope_home = home
        return self._envelope

    def set_geofence(self, fence: GeofenceConfig) -> None:
        """A new mission's geofence; only on the ground, so no flight ever sees its fence move."""
        if self.hub.state.in_air:
            raise FenceChangeRefused("the geofence can only change on the ground")
        self.cfg = replace(self.cfg, safety=replace(self.cfg.safety, geofence=fence))
        self._envelope = None  # rebuilt from the new config on the next envelope() call
        self.events.emit("geofence_set", {"max_distance_from_home_m": fence.max_distance_from_home_m,
                                          "polygon_vertices": len(fence.polygon), "action": fence.action})

    # -- intents -----------------------------------------------------------------------
    def submit(self, intent: Intent) -> Verdict:
        """Hand an offboard intent to the streamer, unless a failsafe owns the vehicle."""
        if self.failsafe_reason is not None:
            raise SafetyViolation(f"{self.failsafe_reason} in progress: intents are refused", intent)
        if not self.monitor.link_ok.is_set():
            raise SafetyViolation("autopilot link lost: intents are refused", intent)
        return self.streamer.submit(intent)

    def update_traffic(self, reports: Iterable[TrafficReport]) -> tuple[str, ...]:
        """The fleet channel's latest reports of the other vehicles; returns why any was rejected.

        Every call counts as the channel speaking (an empty batch too); without calls for
        ``fleet.channel_timeout_s`` the vehicle takes its own altitude layer.
        """
        return self.fleet.update_traffic(reports)

    def _enter_failsafe(self, reason: str) -> None:
        self.failsafe_reason = reason
        self.streamer.clear()

    def failsafe_recovered(self) -> str | None:
        """Clear a failsafe whose cause is gone; return why it still holds (None: no failsafe now).

        Called before each new flight (the standby service keeps one bridge for every mission).
        The evidence needed is the vehicle's own: on the ground, disarmed, and a battery above
        the warning level (a fresh pack, since the ladder was entered below it). Then the
        battery ladder starts again from the bottom, and the clearing is logged and emitted as
        a ``failsafe_cleared`` event.
        """
        if self.failsafe_reason is None:
            return None
        s = self.hub.state
        warn = self.cfg.safety.battery_warn_percent
        missing = []
        if s.in_air or s.landed_state != "ON_GROUND":
            missing.append(f"not landed (landed state {s.landed_state})")
        if s.armed:
            missing.append("still armed")
        if not s.battery_percent > warn:  # NaN (no reading) is no evidence
            missing.append(f"battery {s.battery_percent:.0f} % not above the {warn:.0f} % warning level")
        if missing:
            return f"{self.failsafe_reason} still holds: {'; '.join(missing)}"
        reason, self.failsafe_reason = self.failsafe_reason, None
        self.monitor.reset_battery_ladder()
        detail = {"reason": reason, "battery_percent": s.battery_percent, "landed_state": s.landed_state}
        log.warning("failsafe %s cleared: landed, disarmed, battery %.0f %%", reason, s.battery_percent,
                    extra={"fields": {"event": "failsafe_cleared", **detail}})
        self.events.emit("failsafe_cleared", detail)
        return None

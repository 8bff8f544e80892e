"""`aerie bench nav --fly`: the episode's legs flown by the vehicle port `aerie fly` flies, over MAVSDK.

Per episode: Aerie's simulated vehicle (or a PX4 at ``url``) with its home on the task's start
node, a `FlightBridge` to it, and the supervisor's own `FlightExecutor` and `FlightVehicle`
port: take-off in offboard, every setpoint through the safety envelope, the looks as the
supervisor flies them, metres and seconds as measured. Only the sensor is the benchmark's (the
oracle on the graph), so a flown episode differs from the kinematic one only by the flying.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.settings import BridgeConfig, GeofenceConfig, LinkConfig, SafetyConfig
from onboard.supervisor.flight_executor import FlightExecutor
from onboard.supervisor.flight_ports import FlightVehicle
from onboard.supervisor.settings import SupervisorConfig
from sim.world.world import World

log = logging.getLogger("aerie.bench")

# The public tasks span the whole 1 x 1.7 km extract; a 2.5 km fence around home covers it.
FENCE_RADIUS_M = 2500.0
# The simulated vehicle's take-off, landing and descent speeds: a quick episode, PX4's own logic.
SIM_PARAMS = {"MPC_TKO_SPEED": 5.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0}


@dataclass
class FlownVehicle:
    """One episode's vehicle: `async with` it, fly through `port`, and it is landed and closed after."""

    world: World
    start_node: int
    url: str | None = None
    speed_m_s: float = 10.0
    events: list[tuple[str, Any]] = field(default_factory=list)
    landed: str = ""
    _sim: Any = None
    _bridge: Any = None
    executor: FlightExecutor | None = None
    port: FlightVehicle | None = None

    def _event(self, kind: str, detail: Any) -> None:
        self.events.append((kind, detail))

    async def __aenter__(self) -> "FlownVehicle":
        lat, lon = (float(v) for v in self.world.graph.latlon[self.start_node])
        url = self.url
        if url is None:
            from sim.vehicle import SimVehicleProcess

            self._sim = SimVehicleProcess(home=(lat, lon, 10.0), seed=self.start_node, params=dict(SIM_PARAMS),
                                          prearm_delay_s=0.5).start()
            url = self._sim.mavsdk_url
        try:
            cfg = BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=15, health_timeout_s=30),
                               safety=SafetyConfig(geofence=GeofenceConfig(max_distance_from_home_m=FENCE_RADIUS_M)))
            self._bridge = await FlightBridge.connect(cfg)
            sup = replace(SupervisorConfig(), cruise_alt_m=float(self.world.cruise_alt), speed_m_s=self.speed_m_s)
            self.executor = FlightExecutor(self._bridge, sup, self._event)
            self.port = FlightVehicle(self.executor, self._event)
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self.executor is not None:
                self.landed = await self.executor.finish("land")
        finally:
            await self._close()

    async def _close(self) -> None:
        try:
            if self._bridge is not None:
                await self._bridge.close()
        finally:
            if self._sim is not None:
                self._sim.stop()

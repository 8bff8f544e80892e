"""Fly benchmark moves for real: MAVSDK over UDP to a PX4-like vehicle.

The episode loop is synchronous and the flight bridge is asyncio, so this
mover owns an event loop on a background thread and turns each `fly_to(node)`
into a bridge `goto` to the node's lat/lon at the world's cruise altitude,
waiting until the vehicle is there. The agent, the perception and the metrics
are exactly those of the kinematic episodes: only the flying changes.

A look-low (`look_from(altitude_m)`) is flown too: a goto straight down at
the current node, a full turn in four yaw steps (gotos to the same point with
a yaw), a goto back to cruise; its seconds are the flight's. A look-up
(`climb_to(altitude_m)`) is the goto up and the turn (`climb_on_to(node,
altitude_m)`: the goto to the next node at that altitude, the turn there); the moves after it are
flown at that altitude until `come_down`, a goto back to cruise where it is,
or `come_down_to(node)`, a goto to the next node at cruise altitude.
The episode only asks for one the vehicle's rules allow
(`onboard.supervisor.look_offers`); the bridge's envelope clamps the gotos
into the altitude band besides.

By default it starts Aerie's simulated vehicle with its home on the task's
start node; pass ``url`` to fly a PX4 SITL (or a real vehicle) instead.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import dataclass, field

from contract.geodesy import ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.intents import GlobalTarget
from firmware_bridge.maneuvers import distance_m, land_and_wait, position_from_home, takeoff_and_wait, wait_until
from firmware_bridge.intents import PositionNed
from firmware_bridge.settings import BridgeConfig, GeofenceConfig, LinkConfig, SafetyConfig
from sim.world.world import World

# The public tasks span the whole 1 x 1.7 km extract; a 2.5 km fence around home covers it.
FENCE_RADIUS_M = 2500.0
# A look-up's climb and descent end within this many metres of the altitude; its turn is this many yaw steps.
VERTICAL_TOLERANCE_M = 1.0
TURN_STEPS = 4


@dataclass
class FlightRecord:
    """What the vehicle actually did, for comparing with the episode's node trajectory."""

    nodes: list[int] = field(default_factory=list)
    arrival_errors_m: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    look_up_tops_m: list[float] = field(default_factory=list)  # the altitude each look (up or low) reached


class MavsdkMover:
    """A `Mover` (see `sim.benchmark.episode`) that flies through the MAVSDK bridge."""

    def __init__(self, world: World, start_node: int, *, url: str | None = None, speed_m_s: float = 10.0,
                 arrive_tolerance_m: float = 3.0, move_timeout_s: float = 60.0, sim_params: dict | None = None) -> None:
        self.world = world
        self.node = start_node
        self.url = url
        self.speed_m_s = speed_m_s
        self.arrive_tolerance_m = arrive_tolerance_m
        self.move_timeout_s = move_timeout_s
        self.sim_params = sim_params or {"MPC_TKO_SPEED": 5.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0}
        self.record = FlightRecord(nodes=[start_node])
        self.alt = world.cruise_alt  # the altitude moves are flown at (a look-up's until its come-down)
        self._sim = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mavsdk-mover", daemon=True)
        self._bridge: FlightBridge | None = None

    # -- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> "MavsdkMover":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        lat, lon = self.world.graph.latlon[self.node]
        url = self.url
        if url is None:
            from sim.vehicle import SimVehicleProcess

            self._sim = SimVehicleProcess(home=(float(lat), float(lon), 10.0), seed=self.node,
                                          params=self.sim_params, prearm_delay_s=0.5).start()
            url = self._sim.mavsdk_url
        self._thread.start()
        cfg = BridgeConfig(
            link=LinkConfig(url=url, connect_timeout_s=15, health_timeout_s=30),
            safety=SafetyConfig(geofence=GeofenceConfig(max_distance_from_home_m=FENCE_RADIUS_M)),
        )
        self._bridge = self._run(FlightBridge.connect(cfg))
        self._run(takeoff_and_wait(self._bridge, self.world.cruise_alt, timeout_s=60))

    def close(self) -> None:
        try:
            if self._bridge is not None:
                if self._bridge.state.in_air:
                    self._run(land_and_wait(self._bridge, timeout_s=120))
                self._run(self._bridge.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            if self._sim is not None:
                self._sim.stop()

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    # -- Mover ---------------------------------------------------------------------------
    def fly_to(self, node: int) -> float:
        assert self._bridge is not None, "start() first"
        lat, lon = (float(v) for v in self.world.graph.latlon[node])
        t0 = time.monotonic()
        error = self._run(self._goto(lat, lon))
        seconds = time.monotonic() - t0
        self.node = node
        self.record.nodes.append(node)
        self.record.arrival_errors_m.append(error)
        self.record.seconds.append(seconds)
        return seconds

    def look_from(self, altitude_m: float) -> float:
        """Descend (a look-low) at the current node to `altitude_m`, turn a full circle, come back to cruise;
        seconds taken."""
        assert self._bridge is not None, "start() first"
        t0 = time.monotonic()
        self.record.look_up_tops_m.append(self._run(self._look_from(altitude_m)))
        return time.monotonic() - t0

    def climb_to(self, altitude_m: float, from_m: float | None = None) -> float:
        """Climb at the current node to `altitude_m` and turn a full circle; moves fly up there until `come_down`."""
        assert self._bridge is not None, "start() first"
        t0 = time.monotonic()
        self.record.look_up_tops_m.append(self._run(self._look_from(altitude_m, back=False)))
        self.alt = altitude_m
        return time.monotonic() - t0

    def come_down(self, from_m: float) -> float:
        """Back to cruise at the current node after a look-up; seconds taken."""
        assert self._bridge is not None, "start() first"
        t0 = time.monotonic()
        self.alt = self.world.cruise_alt
        self._run(self._vertical(self.alt, "look-up back to cruise"))
        return time.monotonic() - t0

    def climb_on_to(self, node: int, altitude_m: float, from_m: float | None = None) -> float:
        """Up to `altitude_m` on the way to the neighbouring `node` (one goto there at that altitude) and a full
        turn there; moves fly up there until a come-down. Seconds taken."""
        t0 = time.monotonic()
        self.alt = altitude_m
        self.fly_to(node)
        self.record.look_up_tops_m.append(self._run(self._look_from(altitude_m, back=False)))
        return time.monotonic() - t0

    def come_down_to(self, node: int, from_m: float, to_m: float | None = None) -> float:
        """Down to cruise (or to `to_m`) on the way to the neighbouring `node`: one goto there at that altitude
        (the vehicle flies the sloped line); seconds taken."""
        self.alt = self.world.cruise_alt if to_m is None else to_m
        return self.fly_to(node)

    async def _vertical(self, alt: float, what: str) -> None:
        lat, lon = (float(v) for v in self.world.graph.latlon[self.node])
        await self._bridge.commands.goto(GlobalTarget(lat, lon, alt))
        await wait_until(self._bridge, lambda s: abs(s.rel_alt_m - alt) <= VERTICAL_TOLERANCE_M, self.move_timeout_s, what)

    async def _look_from(self, altitude_m: float, back: bool = True) -> float:
        bridge = self._bridge
        lat, lon = (float(v) for v in self.world.graph.latlon[self.node])
        await self._vertical(altitude_m, f"look-up/low to {altitude_m:.0f} m")
        top = bridge.state.rel_alt_m
        yaw0 = bridge.state.yaw_deg
        if math.isfinite(yaw0):
            for k in range(1, TURN_STEPS + 1):
                yaw = (yaw0 + 360.0 * k / TURN_STEPS) % 360.0
                await bridge.commands.goto(GlobalTarget(lat, lon, altitude_m, yaw))
                await wait_until(bridge, lambda s, yaw=yaw: abs((s.yaw_deg - yaw + 180.0) % 360.0 - 180.0) <= 10.0,
                                 self.move_timeout_s, "look-up turn")
        top = max(top, bridge.state.rel_alt_m)
        if back:
            await self._vertical(self.world.cruise_alt, "look-low back to cruise")
        return top

    async def _goto(self, lat: float, lon: float) -> float:
        bridge = self._bridge
        alt = self.alt
        await bridge.commands.goto(GlobalTarget(lat, lon, alt), speed_m_s=self.speed_m_s)
        n, e = ned_from_geo(bridge.envelope().home, lat, lon)
        goal = PositionNed(n, e, -alt)
        state = await wait_until(bridge, lambda s: distance_m(position_from_home(bridge, s), goal) <= self.arrive_tolerance_m,
                                 self.move_timeout_s, f"move to {lat:.6f},{lon:.6f}")
        here = position_from_home(bridge, state)
        return math.hypot(here.north_m - n, here.east_m - e)

"""Two simulated PX4s, two bridges over real MAVSDK and UDP, routes that meet; the simulators' truth sampled.

Shared by the separation flights (``test_separation_flight.py``) and fault 36.17
(``tests/faults/test_36_17_stacked_crossing.py``). Each bridge hears the other
vehicle the way a fleet channel would tell it: the other bridge's telemetry,
handed over every 0.1 s through ``update_traffic``. A thread samples both
simulators' true positions; a breach is a sample where the two are too near by
the rule's own definition (``separation.too_near``: horizontally nearer than
``fleet.min_separation_m`` and vertically nearer than ``fleet.downwash_vertical_m``).
Every wait is a deadline for a hung test on a busy machine, never a speed claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from dataclasses import dataclass, field

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.fleet_picture import TrafficReport
from firmware_bridge.intents import PositionNed
from firmware_bridge.maneuvers import takeoff_and_wait
from firmware_bridge.offboard_pilot import OffboardPilot
from firmware_bridge.separation import too_near
from firmware_bridge.settings import BridgeConfig, FleetConfig, LinkConfig, SafetyConfig, StreamerConfig
from sim.vehicle import DEFAULT_HOME, SimFleet

FAST = {"MPC_TKO_SPEED": 4.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0, "COM_LOW_BAT_ACT": 0}
ORIGIN = GeoPoint(*DEFAULT_HOME)  # the shared frame the routes are drawn in
CRUISE_M = 10.0
SPEED_M_S = 4.0
FLEET = FleetConfig(enabled=True)
DEADLINE_S = 120.0  # for a hung flight on a loaded machine, not a speed claim


def home_at(north: float, east: float) -> tuple[float, float, float]:
    return (*geo_from_ned(ORIGIN, north, east), ORIGIN.alt_amsl)


def bridge_config(url: str, member: int, enabled: bool = True, lookahead_s: float = FLEET.lookahead_s) -> BridgeConfig:
    return BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=10, health_timeout_s=20),
                        streamer=StreamerConfig(rate_hz=20.0, intent_timeout_s=1.0), safety=SafetyConfig(),
                        fleet=FleetConfig(enabled=enabled, member_id=member, lookahead_s=lookahead_s))


def report_of(bridge: FlightBridge, member: int) -> TrafficReport:
    """What a fleet channel would carry of this vehicle: its own telemetry."""
    s = bridge.state
    age = max(0.0, time.monotonic() - s.last_update_t) if math.isfinite(s.last_update_t) else 0.0
    return TrafficReport(member, s.lat, s.lon, s.alt_amsl_m, s.vn_m_s, s.ve_m_s, s.vd_m_s, min(age, 600.0))


async def feed_traffic(a: FlightBridge, b: FlightBridge, cut: asyncio.Event) -> None:
    """The fleet channel between the two, until ``cut`` is set."""
    while not cut.is_set():
        a.update_traffic([report_of(b, 2)])
        b.update_traffic([report_of(a, 1)])
        await asyncio.sleep(0.1)


@dataclass
class Sample:
    t: float  # vehicle 1's simulated time, s
    north: tuple[float, float]
    east: tuple[float, float]
    alt: tuple[float, float]  # metres above the shared origin's altitude

    @property
    def horizontal_m(self) -> float:
        return math.hypot(self.north[0] - self.north[1], self.east[0] - self.east[1])

    @property
    def vertical_m(self) -> float:
        return abs(self.alt[0] - self.alt[1])


@dataclass
class TruthSampler:
    """Samples both simulators' true positions from a thread, about every 50 ms."""

    fleet: SimFleet
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "TruthSampler":
        self._thread = threading.Thread(target=self._run, name="truth-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            ta, tb = self.fleet.truths()
            na, ea = ned_from_geo(ORIGIN, ta["lat"], ta["lon"])
            nb, eb = ned_from_geo(ORIGIN, tb["lat"], tb["lon"])
            self.samples.append(Sample(ta["t"], (na, nb), (ea, eb),
                                       (ta["alt_amsl"] - ORIGIN.alt_amsl, tb["alt_amsl"] - ORIGIN.alt_amsl)))
            self._stop.wait(0.05)

    def breaches(self) -> list[Sample]:
        """Samples with the two too near: within the separation cylinder, whatever their bands."""
        return [s for s in self.samples if too_near(s.horizontal_m, s.vertical_m, FLEET)]

    def min_3d_m(self) -> float:
        return min(math.hypot(s.horizontal_m, s.vertical_m) for s in self.samples)

    def min_in_band_m(self) -> float:
        """The least horizontal distance while in one altitude band (inf: never in one band that near)."""
        return min((s.horizontal_m for s in self.samples if s.vertical_m < FLEET.altitude_band_m), default=math.inf)

    def min_horizontal_m(self) -> float:
        return min(s.horizontal_m for s in self.samples)


@contextlib.asynccontextmanager
async def two_in_the_air(fleet: SimFleet, enabled: bool = True, lookahead_s: float = FLEET.lookahead_s,
                         cruise: tuple[float, float] = (CRUISE_M, CRUISE_M)):
    """Both bridges connected, the channel running, each at its cruise in offboard; yields (a, b, pa, pb, cut)."""
    async with await FlightBridge.connect(bridge_config(fleet[0].mavsdk_url, 1, enabled, lookahead_s)) as a, \
            await FlightBridge.connect(bridge_config(fleet[1].mavsdk_url, 2, enabled, lookahead_s)) as b:
        cut = asyncio.Event()
        feed = asyncio.get_running_loop().create_task(feed_traffic(a, b, cut))
        pa, pb = OffboardPilot(a), OffboardPilot(b)
        try:
            await asyncio.gather(takeoff_and_wait(a, cruise[0]), takeoff_and_wait(b, cruise[1]))
            await asyncio.gather(pa.engage(), pb.engage())
            yield a, b, pa, pb, cut
        finally:
            cut.set()
            await feed
            await asyncio.gather(pa.release(), pb.release())


def local_goal(bridge: FlightBridge, north: float, east: float, alt: float = CRUISE_M) -> PositionNed:
    """A point of the shared frame in this bridge's home frame."""
    envelope = bridge.envelope()
    lat, lon = geo_from_ned(ORIGIN, north, east)
    n, e = ned_from_geo(envelope.home, lat, lon)
    return PositionNed(n, e, -alt)


def kinds(bridge: FlightBridge) -> list[str]:
    """The bridge's fleet events, in order."""
    return [e.kind for e in bridge.events.history if e.kind.startswith(("separation_", "fleet_", "traffic_"))]


async def fly_meeting_routes(homes, goals, enabled: bool = True, lookahead_s: float = FLEET.lookahead_s,
                             cruise: tuple[float, float] = (CRUISE_M, CRUISE_M)):
    """Vehicle i takes off at homes[i] to cruise[i] and flies to goals[i] (shared frame) at that altitude, together."""
    with SimFleet(homes, params=FAST, prearm_delay_s=0.5) as fleet:
        async with two_in_the_air(fleet, enabled, lookahead_s, cruise) as (a, b, pa, pb, cut):
            sampler = TruthSampler(fleet).start()
            try:
                reached = await asyncio.gather(
                    pa.fly_to(local_goal(a, *goals[0], cruise[0]), SPEED_M_S, 1.5, DEADLINE_S),
                    pb.fly_to(local_goal(b, *goals[1], cruise[1]), SPEED_M_S, 1.5, DEADLINE_S))
            finally:
                sampler.stop()
            return sampler, kinds(a), kinds(b), tuple(reached)


def say(name: str, sampler: TruthSampler, ev1: list[str] = (), ev2: list[str] = ()) -> None:
    closest = min(sampler.samples, key=lambda s: s.horizontal_m)
    print(f"{name}: min horizontal separation in one band {sampler.min_in_band_m():.1f} m, "
          f"min 3D distance {sampler.min_3d_m():.1f} m, "
          f"closest pass {closest.horizontal_m:.1f} m at {closest.alt[0]:.1f} / {closest.alt[1]:.1f} m "
          f"(vertical {closest.vertical_m:.1f} m), samples {len(sampler.samples)}, breaches {len(sampler.breaches())}, "
          f"limit {FLEET.min_separation_m:.1f} m / band {FLEET.altitude_band_m:.1f} m "
          f"/ downwash {FLEET.downwash_vertical_m:.1f} m; "
          f"events 1: {ev1}, 2: {ev2}")

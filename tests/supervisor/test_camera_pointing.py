"""Pointing the camera in flight: the gimbal where the vehicle announces one (the vehicle holding its heading),
the vehicle turning where none is, over real MAVSDK and UDP against the simulated vehicle.

A look-around's headings at a waypoint (`ordered_headings`), each at a gimbal pitch; the journal (the bridge's
events, published as telemetry) shows each gimbal command and where each pointing ended.
"""

from __future__ import annotations


import pytest

from contract.payloads.event import check_kind
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.settings import BridgeConfig, LinkConfig
from onboard.supervisor.flight_executor import FlightExecutor
from onboard.supervisor.look_around import ordered_headings
from onboard.supervisor.settings import SupervisorConfig
from sim.flight_rig import SIM_PARAMS
from sim.vehicle import SimVehicleProcess

TOLERANCE_DEG = 3.0
VIEWS = 5


def _angle(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


async def _fly_and_point(v: SimVehicleProcess, headings_from, pitch: float):
    """Take off, point the camera through the look-around's headings; (pointings, vehicle yaws, bridge events)."""
    cfg = SupervisorConfig(cruise_alt_m=6.0)
    bcfg = BridgeConfig(link=LinkConfig(url=v.mavsdk_url, connect_timeout_s=10, health_timeout_s=20))
    async with await FlightBridge.connect(bcfg) as bridge:
        events: list = []
        executor = FlightExecutor(bridge, cfg, lambda kind, detail: events.append((kind, detail)))
        await executor.take_off()
        yaw0 = v.truth()["yaw_deg"]
        done, yaws = [], []
        for heading in headings_from(yaw0):
            done.append(await executor.point_camera(heading, pitch, TOLERANCE_DEG))
            yaws.append(v.truth()["yaw_deg"])
        truth = v.truth()
        assert await executor.finish("land") == "landed"
        return yaw0, done, yaws, truth, list(bridge.events.history)


async def test_a_look_around_points_the_gimbal_through_its_headings_and_the_vehicle_does_not_turn():
    with SimVehicleProcess(seed=5, params=SIM_PARAMS, prearm_delay_s=0.5) as v:
        yaw0, done, yaws, truth, history = await _fly_and_point(
            v, lambda yaw: ordered_headings(VIEWS, yaw), -30.0)
    headings = ordered_headings(VIEWS, yaw0)
    print(f"gimbal: {VIEWS} views pointed in {sum(p.seconds for p in done):.1f} s")
    assert [p.by for p in done] == ["gimbal"] * VIEWS  # 5 x 72 deg: all within the gimbal's +-160
    for heading, p, yaw in zip(headings, done, yaws):
        assert p.pointed and _angle(p.yaw_deg, heading) <= TOLERANCE_DEG and p.pitch_deg == pytest.approx(-30.0, abs=TOLERANCE_DEG)
        assert _angle(yaw, yaw0) <= 2.0, (heading, yaw, yaw0)  # the vehicle held its heading
    assert _angle(truth["gimbal_yaw_deg"], headings[-1]) <= TOLERANCE_DEG  # the simulator's own truth agrees
    kinds = [e.kind for e in history if e.kind.startswith("gimbal")]
    assert kinds.count("gimbal_command") == 1 + VIEWS  # take control once, then one set_angles per heading
    attitudes = [e.detail for e in history if e.kind == "gimbal_attitude"]
    assert len(attitudes) == VIEWS and all(a["reached"] and a["track"] for a in attitudes)
    assert all(check_kind(k) for k in kinds)


async def test_a_heading_behind_the_gimbals_stops_turns_the_vehicle_then_points_the_gimbal():
    with SimVehicleProcess(seed=5, params=SIM_PARAMS, prearm_delay_s=0.5) as v:
        yaw0, done, yaws, _, _ = await _fly_and_point(v, lambda yaw: [(yaw + 90.0) % 360.0, (yaw + 180.0) % 360.0],
                                                      -20.0)
    assert [p.by for p in done] == ["gimbal", "vehicle+gimbal"]
    assert _angle(yaws[0], yaw0) <= 2.0 and _angle(yaws[1], yaw0 + 180.0) <= TOLERANCE_DEG + 1.0
    assert all(p.pointed for p in done) and _angle(done[1].yaw_deg, yaw0 + 180.0) <= TOLERANCE_DEG


async def test_without_a_gimbal_the_vehicle_turns_to_each_heading_as_before():
    with SimVehicleProcess(seed=5, params=SIM_PARAMS, prearm_delay_s=0.5, gimbal=False) as v:
        yaw0, done, yaws, truth, history = await _fly_and_point(
            v, lambda yaw: ordered_headings(VIEWS, yaw), -30.0)
    headings = ordered_headings(VIEWS, yaw0)
    print(f"no gimbal: {VIEWS} views turned to in {sum(p.seconds for p in done):.1f} s")
    assert [p.by for p in done] == ["vehicle"] * VIEWS and all(p.pitch_deg is None for p in done)
    for heading, p, yaw in zip(headings, done, yaws):
        assert p.pointed and _angle(yaw, heading) <= TOLERANCE_DEG + 1.0
    assert not [e for e in history if e.kind.startswith("gimbal")] and truth["gimbal_yaw_deg"] is None

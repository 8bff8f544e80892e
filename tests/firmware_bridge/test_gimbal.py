"""The camera gimbal through MAVSDK's gimbal plugin, over real UDP, against the simulated vehicle's gimbal.

The gimbal's mechanics and protocol are tested on their own in tests/sim/test_vehicle_gimbal.py; the
look-around pointing it in flight in tests/supervisor/test_camera_pointing.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
from dataclasses import replace

import pytest
from pymavlink.dialects.v20 import development as mavlink2

from contract.payloads.event import check_kind
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.gimbal import GimbalUnavailable
from firmware_bridge.settings import BridgeConfig, GimbalConfig, LinkConfig
from sim.vehicle import SimVehicleProcess
from sim.vehicle.gimbal import GimbalSpec

SPEC = GimbalSpec()  # the simulated gimbal's: its slew rates and end stops are what the bridge must see


def _config(url: str, **gimbal) -> BridgeConfig:
    return BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=10, health_timeout_s=20),
                        gimbal=replace(GimbalConfig(), **gimbal))


def _kinds(bridge: FlightBridge) -> list[str]:
    return [e.kind for e in bridge.events.history if e.kind.startswith("gimbal")]


async def _event(bridge: FlightBridge, kind: str, timeout_s: float = 20.0):
    """The next event of `kind` (a deadline for a hung test, not a speed claim)."""
    got: asyncio.Future = asyncio.get_running_loop().create_future()
    bridge.events.add_listener(lambda e: got.done() or got.set_result(e) if e.kind == kind else None)
    return await asyncio.wait_for(got, timeout_s)


@pytest.fixture
def vehicle():
    with SimVehicleProcess(seed=3, prearm_delay_s=0.5) as v:
        yield v


def _rates(samples: list[tuple[int, float, float]], axis: int, lo: float, hi: float) -> float:
    """The median rate of one axis between successive reports whose angles both lie within lo..hi, per the
    gimbal's own report clock (so a busy machine's late delivery does not count)."""
    rates = [(b[axis] - a[axis]) / ((b[0] - a[0]) * 1e-6) for a, b in zip(samples, samples[1:])
             if b[0] > a[0] and lo <= a[axis] <= hi and lo <= b[axis] <= hi]
    assert len(rates) >= 3, samples
    return statistics.median(rates)


async def test_a_gimbal_is_found_controlled_and_pointed_and_its_attitude_converges_at_the_slew_rate(vehicle):
    async with await FlightBridge.connect(_config(vehicle.mavsdk_url)) as bridge:
        assert await bridge.gimbal.available()
        s = bridge.state
        assert s.gimbal_id == 1 and s.gimbal_control == "NONE"
        assert (s.gimbal_yaw_min_deg, s.gimbal_yaw_max_deg) == pytest.approx((SPEC.yaw_min_deg, SPEC.yaw_max_deg))
        assert (s.gimbal_pitch_min_deg, s.gimbal_pitch_max_deg) == pytest.approx((SPEC.pitch_min_deg, SPEC.pitch_max_deg))
        vehicle_yaw = vehicle.truth()["yaw_deg"]
        samples: list[tuple[int, float, float]] = []

        async def record() -> None:
            async for st in bridge.hub.changes():
                if not samples or st.gimbal_attitude_us != samples[-1][0]:
                    samples.append((st.gimbal_attitude_us, st.gimbal_pitch_deg, st.gimbal_yaw_body_deg))

        recorder = asyncio.ensure_future(record())
        try:
            done = await bridge.gimbal.point(-45.0, vehicle_yaw + 120.0, tolerance_deg=1.0)
        finally:
            recorder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recorder
        assert done.reached and bridge.state.gimbal_control == "PRIMARY"
        truth = vehicle.truth()
        assert truth["gimbal_pitch_deg"] == pytest.approx(-45.0, abs=1.0)
        assert truth["gimbal_yaw_body_deg"] == pytest.approx(120.0, abs=1.0)
        assert truth["yaw_deg"] == pytest.approx(vehicle_yaw, abs=1.0)  # the vehicle did not turn
        # the reported attitude went there at the gimbal's rates, not in one jump
        assert _rates(samples, 2, 10.0, 110.0) == pytest.approx(SPEC.yaw_rate_deg_s, rel=0.1)
        assert _rates(samples, 1, -40.0, -5.0) == pytest.approx(-SPEC.pitch_rate_deg_s, rel=0.1)
        # journalled: the commands and where the pointing ended, each a registered event kind
        commands = [e.detail for e in bridge.events.history if e.kind == "gimbal_command"]
        assert [(c["command"], c["result"]) for c in commands] == [("take_control", "SUCCESS"), ("set_angles", "SUCCESS")]
        attitude = next(e.detail for e in bridge.events.history if e.kind == "gimbal_attitude")
        assert attitude["reached"] and attitude["asked"] == pytest.approx([-45.0, (vehicle_yaw + 120.0) % 360.0])
        assert len(attitude["track"]) >= 5  # the attitudes on the way
        assert all(check_kind(k) for k in _kinds(bridge))


async def test_a_gimbal_that_stops_answering_is_an_event_and_an_error_not_a_hang(vehicle):
    async with await FlightBridge.connect(_config(vehicle.mavsdk_url, attitude_timeout_s=0.5,
                                                  point_timeout_s=3.0)) as bridge:
        assert (await bridge.gimbal.point(-20.0, 30.0, tolerance_deg=1.0)).reached
        silent = asyncio.ensure_future(_event(bridge, "gimbal_silent"))
        await asyncio.sleep(0)
        vehicle.set_gimbal_silent(True)
        await silent
        assert not await bridge.gimbal.available()
        with pytest.raises(GimbalUnavailable, match="no gimbal reporting"):
            await bridge.gimbal.point(-10.0, 60.0, tolerance_deg=1.0)
        # a command sent before the silence is noticed (a long attitude timeout here): MAVSDK's retries run out and
        # the pointing ends in an error, within the link's command deadline
        bridge.gimbal.cfg = replace(bridge.gimbal.cfg, attitude_timeout_s=60.0)
        with pytest.raises(GimbalUnavailable, match="set_angles: (TIMEOUT|ERROR)"):
            await bridge.gimbal.point(-10.0, 60.0, tolerance_deg=1.0)
        silent = asyncio.ensure_future(_event(bridge, "gimbal_silent"))
        await asyncio.sleep(0)
        bridge.gimbal.cfg = replace(bridge.gimbal.cfg, attitude_timeout_s=0.5)
        await silent
        back = asyncio.ensure_future(_event(bridge, "gimbal_restored"))
        await asyncio.sleep(0)
        vehicle.set_gimbal_silent(False)
        await back
        assert (await bridge.gimbal.point(-10.0, 60.0, tolerance_deg=1.0)).reached
        assert not [e for e in bridge.events.history if e.kind == "link_lost"]


async def test_a_gimbal_another_component_controls_is_left_to_it(vehicle):
    async with await FlightBridge.connect(_config(vehicle.mavsdk_url)) as bridge:
        assert await bridge.gimbal.available()
        other = mavlink2.MAVLink(None, srcSystem=200, srcComponent=190)  # a ground station's operator
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            msg = other.command_long_encode(1, 1, 1001, 0, 200, 190, -1, -1, 0, 0, 154)
            sock.sendto(msg.pack(other), ("127.0.0.1", vehicle.port))
            await bridge.hub.wait_for(lambda s: s.gimbal_control == "OTHER", 10.0)
        with pytest.raises(GimbalUnavailable, match="another component"):
            await bridge.gimbal.point(-10.0, 60.0, tolerance_deg=1.0)
        assert vehicle.truth()["gimbal_primary_control"] == [200, 190]


async def test_without_a_gimbal_none_is_announced_and_none_is_pointed():
    with SimVehicleProcess(seed=4, prearm_delay_s=0.5, gimbal=False) as v:
        async with await FlightBridge.connect(_config(v.mavsdk_url, discovery_s=2.0)) as bridge:
            assert not await bridge.gimbal.available()
            assert bridge.state.gimbal_id == 0 and _kinds(bridge) == []
            with pytest.raises(GimbalUnavailable):
                await bridge.gimbal.point(-10.0, 60.0, tolerance_deg=1.0)
        truth = v.truth()
        assert (truth["gimbal_pitch_deg"], truth["gimbal_yaw_deg"]) == (None, None)

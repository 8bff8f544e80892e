"""The bridge flying the simulated PX4 over real UDP loopback with real MAVSDK."""

import asyncio
import math
import time

import pytest

from contract.geodesy import geo_from_ned
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from sim.flight_check import run_flight_check
from firmware_bridge.intents import GlobalTarget, PositionNed, VelocityNed
from firmware_bridge.maneuvers import (
    hold_intent, land_and_wait, position_from_home, takeoff_and_wait, wait_until,
)
from firmware_bridge.safety_envelope import SafetyViolation
from firmware_bridge.settings import BridgeConfig, GeofenceConfig, LinkConfig, SafetyConfig, StreamerConfig
from sim.vehicle import SimVehicleProcess

# Faster climbs and descents than PX4's defaults keep the suite short; behaviour is otherwise PX4's.
FAST = {"MPC_TKO_SPEED": 4.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0, "COM_LOW_BAT_ACT": 0}


def bridge_config(url: str, **safety) -> BridgeConfig:
    return BridgeConfig(
        link=LinkConfig(url=url, connect_timeout_s=10, health_timeout_s=20),
        streamer=StreamerConfig(rate_hz=20.0, intent_timeout_s=1.0),
        safety=SafetyConfig(**safety) if safety else SafetyConfig(),
    )


@pytest.fixture
def vehicle(tmp_path):
    sim = SimVehicleProcess(seed=7, params=FAST, setpoint_log=tmp_path / "setpoints.jsonl", prearm_delay_s=0.5)
    sim.start()
    yield sim
    sim.stop()


async def test_full_flight_check(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        timings = await run_flight_check(bridge, altitude_m=6.0, square_m=8.0, say=lambda _: None)
        assert set(timings) >= {"arm+takeoff", "offboard start", "square corner 4", "goto 30 m N", "land+disarm"}
        truth = vehicle.truth()
        assert not truth["armed"]
        # The goto ended 30 m north of where offboard left the vehicle; it landed there.
        assert position_from_home(bridge).north_m > 25


async def test_offboard_velocity_moves_the_vehicle(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        start = position_from_home(bridge)
        await bridge.streamer.start_offboard(VelocityNed(0.0, 0.0, 0.0))
        await hold_intent(bridge, VelocityNed(0.0, 3.0, 0.0), 3.0)
        await hold_intent(bridge, VelocityNed(0.0, 0.0, 0.0), 1.0)
        moved = position_from_home(bridge)
        assert bridge.state.flight_mode == "OFFBOARD"
        assert moved.east_m - start.east_m > 5.0
        assert abs(moved.north_m - start.north_m) < 3.0
        await bridge.streamer.stop_offboard()
        await wait_until(bridge, lambda s: s.flight_mode == "HOLD", 3, "hold after offboard")


async def test_rtl_returns_home_and_disarms(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        await bridge.commands.goto_local(PositionNed(15.0, 10.0, -5.0), speed_m_s=6.0)
        await wait_until(bridge, lambda s: position_from_home(bridge, s).north_m > 13.5, 30, "goto_local")
        assert position_from_home(bridge).east_m == pytest.approx(10.0, abs=2.0)
        await bridge.commands.return_to_launch()
        await wait_until(bridge, lambda s: s.flight_mode == "RETURN_TO_LAUNCH", 3, "RTL mode")
        await wait_until(bridge, lambda s: not s.armed and not s.in_air, 90, "RTL landed and disarmed")
        home = position_from_home(bridge)
        assert math.hypot(home.north_m, home.east_m) < 3.0


async def test_refused_commands_are_typed(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await wait_until(bridge, lambda s: s.armable, 10, "pre-arm")
        await bridge.commands.arm()
        await wait_until(bridge, lambda s: s.armed, 3, "armed")
        await bridge.commands.disarm()  # on the ground: accepted
        await wait_until(bridge, lambda s: not s.armed, 3, "disarmed")
        await takeoff_and_wait(bridge, 4.0)
        with pytest.raises(CommandError) as err:
            await bridge.commands.disarm()  # PX4: "Disarming denied: not landed"
        assert err.value.result is CommandResult.DENIED
        await land_and_wait(bridge)


async def test_intents_stop_vehicle_fails_safe(vehicle, tmp_path):
    """The agent goes quiet: the streamer stops, and PX4's offboard-loss failsafe follows in time."""
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        await bridge.streamer.start_offboard(PositionNed(0.0, 0.0, -5.0))
        await hold_intent(bridge, PositionNed(0.0, 0.0, -5.0), 1.0)
        assert vehicle.truth()["mode"] == "OFFBOARD"
        last_intent = time.monotonic()
        stale = asyncio.Event()
        bridge.events.add_listener(lambda e: stale.set() if e.kind == "intent_stale" else None)
        # ... and nothing more is submitted.
        await asyncio.wait_for(stale.wait(), 3.0)
        stale_after = time.monotonic() - last_intent
        assert stale_after <= bridge.cfg.streamer.intent_timeout_s + 0.2
        # Poll the vehicle's own mode until it leaves offboard.
        while vehicle.truth()["mode"] == "OFFBOARD":
            assert time.monotonic() - last_intent < 6.0, "vehicle never left offboard"
            await asyncio.sleep(0.02)
        failsafe_at = time.monotonic()
    setpoints = [line for line in (tmp_path / "setpoints.jsonl").read_text().splitlines() if "SET_POSITION_TARGET" in line]
    import json

    last_setpoint_mono = max(json.loads(line)["mono"] for line in setpoints)
    com_of_loss_t = 1.0
    # Clocks: both sides use time.monotonic() on the same machine.
    assert failsafe_at - last_setpoint_mono <= com_of_loss_t + 0.5
    assert failsafe_at - last_setpoint_mono >= com_of_loss_t - 0.1
    assert vehicle.truth()["mode"] in ("POSCTL", "LAND", "HOLD")


async def test_vehicle_killed_link_loss_detected_quickly(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        lost = asyncio.Event()
        bridge.events.add_listener(lambda e: lost.set() if e.kind == "link_lost" else None)
        vehicle.kill()
        killed_at = time.monotonic()
        await asyncio.wait_for(lost.wait(), 4.0)
        assert time.monotonic() - killed_at <= 2.0 + 0.2
        t = time.monotonic()
        with pytest.raises(CommandError) as err:
            await bridge.commands.takeoff(5.0)
        assert err.value.result is CommandResult.NOT_CONNECTED
        with pytest.raises(SafetyViolation, match="link lost"):
            bridge.submit(VelocityNed(1.0, 0.0, 0.0))
        assert time.monotonic() - t < 0.2  # clear error, no hang


async def test_reconnects_when_autopilot_restarts(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        lost, restored = asyncio.Event(), asyncio.Event()
        bridge.events.add_listener(lambda e: lost.set() if e.kind == "link_lost" else None)
        bridge.events.add_listener(lambda e: restored.set() if e.kind == "link_restored" else None)
        vehicle.kill()
        await asyncio.wait_for(lost.wait(), 4.0)
        reborn = SimVehicleProcess(gcs_port=vehicle.gcs_port, seed=8, params=FAST, prearm_delay_s=0.5).start()
        try:
            await asyncio.wait_for(restored.wait(), 10.0)
            await bridge.wait_healthy(10.0)
            await takeoff_and_wait(bridge, 3.0)
            await land_and_wait(bridge)
        finally:
            reborn.stop()


async def test_goto_outside_geofence_is_refused_and_never_flown(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url, geofence=GeofenceConfig(max_distance_from_home_m=40.0))) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        lat, lon = geo_from_ned(bridge.envelope().home, 80.0, 0.0)
        with pytest.raises(CommandError) as err:
            await bridge.commands.goto(GlobalTarget(lat, lon, 5.0))
        assert err.value.result is CommandResult.REFUSED_BY_ENVELOPE
        await asyncio.sleep(1.0)
        assert math.hypot(vehicle.truth()["ned"][0], vehicle.truth()["ned"][1]) < 3.0


async def test_velocity_towards_fence_is_stopped_before_it(vehicle):
    fence = GeofenceConfig(max_distance_from_home_m=25.0)
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url, geofence=fence)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        await bridge.streamer.start_offboard(VelocityNed(0.0, 0.0, 0.0))
        worst = 0.0
        end = time.monotonic() + 12.0
        while time.monotonic() < end:  # an agent insisting on flying north at 4 m/s
            bridge.submit(VelocityNed(4.0, 0.0, 0.0))
            n, e = vehicle.truth()["ned"][:2]
            worst = max(worst, math.hypot(n, e))
            await asyncio.sleep(0.1)
        assert 10.0 < worst < 25.0


async def test_clamped_position_target_stays_inside(vehicle):
    fence = GeofenceConfig(max_distance_from_home_m=20.0, action="clamp")
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url, geofence=fence, altitude_ceiling_m=8.0)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        verdict = bridge.submit(PositionNed(60.0, 0.0, -30.0))
        assert verdict.clamped and verdict.intent.rel_alt_m == 8.0 and verdict.intent.north_m < 20.0
        await bridge.streamer.start_offboard(PositionNed(60.0, 0.0, -30.0))
        await hold_intent(bridge, PositionNed(60.0, 0.0, -30.0), 7.0)
        t = vehicle.truth()
        assert math.hypot(*t["ned"][:2]) < 20.0 and -t["ned"][2] < 8.6


async def test_battery_below_threshold_returns_to_launch(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        events = []
        bridge.events.add_listener(lambda e: events.append(e.kind))
        vehicle.set_battery(18.0)  # below battery_rtl_percent (20), above land (10)
        await wait_until(bridge, lambda s: s.flight_mode == "RETURN_TO_LAUNCH", 8, "battery RTL")
        assert "battery_return" in events
        with pytest.raises(SafetyViolation, match="battery_return"):
            bridge.submit(VelocityNed(1.0, 0.0, 0.0))


async def test_garbage_and_truncated_frames_are_ignored(vehicle):
    """Noise on both UDP ports (MAVSDK's and the vehicle's) changes nothing and crashes nothing."""
    import random
    import socket

    from pymavlink.dialects.v20 import common as mavlink2

    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 4.0)
        await bridge.streamer.start_offboard(PositionNed(0.0, 0.0, -4.0))
        rng = random.Random(3)
        mav = mavlink2.MAVLink(None, srcSystem=1, srcComponent=1)
        hb = mav.heartbeat_encode(2, 12, 157, 50593792, 4).pack(mav)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(2000):
            kind = i % 4
            if kind == 0:
                data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
            elif kind == 1:
                data = hb[: rng.randint(1, len(hb) - 1)]  # truncated frame
            elif kind == 2:
                data = b"\xfd" + bytes(rng.getrandbits(8) for _ in range(rng.randint(5, 60)))  # bogus v2 header
            else:
                corrupt = bytearray(hb)
                corrupt[rng.randrange(len(corrupt))] ^= 0xFF  # bad CRC
                data = bytes(corrupt)
            sock.sendto(data, ("127.0.0.1", vehicle.gcs_port))
            sock.sendto(data, ("127.0.0.1", vehicle.port))
            if i % 100 == 0:
                bridge.submit(PositionNed(0.0, 0.0, -4.0))
                await asyncio.sleep(0.02)
        sock.close()
        await hold_intent(bridge, PositionNed(5.0, 0.0, -4.0), 3.0)
        assert bridge.monitor.link_ok.is_set()
        assert position_from_home(bridge).north_m > 3.0
        assert bridge.state.flight_mode == "OFFBOARD"
        await bridge.streamer.stop_offboard()
        await land_and_wait(bridge)
    assert vehicle.proc.poll() is None  # the vehicle process is still alive

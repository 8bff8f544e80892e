"""The bridge flying the simulated PX4 over real UDP loopback with real MAVSDK."""

import asyncio
import math
import time

import pytest

from common.geodesy import geo_from_ned
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from sim.flight_check import run_flight_check
from firmware_bridge.intents import GlobalTarget, PositionNed, VelocityNed
from firmware_bridge.maneuvers import (
    hold_intent, land_and_wait, offboard_to, position_from_home, takeoff_and_wait, wait_until,
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
        # fly east until 5 m covered (3 s on a quiet machine; a busy one may take longer, which is no fault)
        end = time.monotonic() + 60.0
        while position_from_home(bridge).east_m - start.east_m <= 5.0:
            assert time.monotonic() < end, "never moved 5 m east"
            await hold_intent(bridge, VelocityNed(0.0, 3.0, 0.0), 0.2)
        await hold_intent(bridge, VelocityNed(0.0, 0.0, 0.0), 1.0)
        moved = position_from_home(bridge)
        assert bridge.state.flight_mode == "OFFBOARD"
        assert moved.east_m - start.east_m > 5.0
        assert abs(moved.north_m - start.north_m) < 2.0  # east, as asked
        assert abs(moved.north_m - start.north_m) < 3.0
        await bridge.streamer.stop_offboard()
        await wait_until(bridge, lambda s: s.flight_mode == "HOLD", 30, "hold after offboard")


async def test_rtl_returns_home_and_disarms(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        await bridge.commands.goto_local(PositionNed(15.0, 10.0, -5.0), speed_m_s=6.0)
        await wait_until(bridge, lambda s: position_from_home(bridge, s).north_m > 13.5, 30, "goto_local")
        assert position_from_home(bridge).east_m == pytest.approx(10.0, abs=2.0)
        await bridge.commands.return_to_launch()
        await wait_until(bridge, lambda s: s.flight_mode == "RETURN_TO_LAUNCH", 30, "RTL mode")
        await wait_until(bridge, lambda s: not s.armed and not s.in_air, 90, "RTL landed and disarmed")
        home = position_from_home(bridge)
        assert math.hypot(home.north_m, home.east_m) < 3.0


async def test_refused_commands_are_typed(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await wait_until(bridge, lambda s: s.armable, 60, "pre-arm")
        await bridge.commands.arm()
        await wait_until(bridge, lambda s: s.armed, 30, "armed")
        await bridge.commands.disarm()  # on the ground: accepted
        await wait_until(bridge, lambda s: not s.armed, 30, "disarmed")
        await takeoff_and_wait(bridge, 4.0)
        with pytest.raises(CommandError) as err:
            await bridge.commands.disarm()  # PX4: "Disarming denied: not landed"
        assert err.value.result is CommandResult.DENIED
        await land_and_wait(bridge)


async def _vehicle_mode_leaves(vehicle, mode: str, timeout_s: float = 30.0) -> None:
    """Poll the vehicle's own mode; the deadline is for a hung test on a loaded machine, not a speed claim."""
    end = time.monotonic() + timeout_s
    while vehicle.truth()["mode"] == mode:
        assert time.monotonic() < end, f"vehicle never left {mode}"
        await asyncio.sleep(0.05)


async def test_intents_stop_vehicle_fails_safe(vehicle, tmp_path):
    """The agent goes quiet: the streamer stops, and PX4's offboard-loss failsafe follows.

    Order and lower bounds only, each on the clock of the side that decided: the streamer
    never calls an intent stale before intent_timeout_s, the vehicle's stream ends before its
    failsafe, and the failsafe never comes before COM_OF_LOSS_T. How promptly each fires is
    load-dependent; the vehicle's delay is checked on a synthetic clock
    (tests/sim/test_vehicle_commander.py::test_offboard_loss_action_follows_com_obl_rc_act).
    """
    import json

    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await takeoff_and_wait(bridge, 5.0)
        await bridge.streamer.start_offboard(PositionNed(0.0, 0.0, -5.0))
        await hold_intent(bridge, PositionNed(0.0, 0.0, -5.0), 1.0)
        assert vehicle.truth()["mode"] == "OFFBOARD"
        stale: list = []
        got_stale = asyncio.Event()
        bridge.events.add_listener(lambda e: (stale.append(e), got_stale.set()) if e.kind == "intent_stale" else None)
        # ... and nothing more is submitted.
        await asyncio.wait_for(got_stale.wait(), 30.0)
        assert stale[0].detail["age_s"] > bridge.cfg.streamer.intent_timeout_s
        await _vehicle_mode_leaves(vehicle, "OFFBOARD")
    recs = [json.loads(line) for line in (tmp_path / "setpoints.jsonl").read_text().splitlines()]
    last_setpoint = max(r["mono"] for r in recs if r["msg"].startswith("SET_POSITION_TARGET"))
    failsafe = next(r for r in recs if r["msg"] == "STATUSTEXT" and r["text"] == "Failsafe activated")
    com_of_loss_t = 1.0
    # Both stamps are the vehicle's time.monotonic(); the 0.2 s allows for the vehicle being descheduled
    # between reading its clock for a loop turn and logging the setpoint it received in that turn.
    assert failsafe["mono"] - last_setpoint >= com_of_loss_t - 0.2
    assert not [r for r in recs if r["msg"].startswith("SET_POSITION_TARGET") and r["mono"] > failsafe["mono"]]
    assert vehicle.truth()["mode"] in ("POSCTL", "LAND", "HOLD")


async def test_vehicle_killed_link_loss_detected(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        lost: list = []
        got_lost = asyncio.Event()
        bridge.events.add_listener(lambda e: (lost.append(e), got_lost.set()) if e.kind == "link_lost" else None)
        vehicle.kill()
        await asyncio.wait_for(got_lost.wait(), 30.0)  # a deadline; detection time is the bridge's link timeout
        assert not bridge.monitor.link_ok.is_set()
        # a clear error at once, not MAVSDK's command timeout (which would end in TIMEOUT, not NOT_CONNECTED)
        with pytest.raises(CommandError) as err:
            await asyncio.wait_for(bridge.commands.takeoff(5.0), 30.0)
        assert err.value.result is CommandResult.NOT_CONNECTED
        with pytest.raises(SafetyViolation, match="link lost"):
            bridge.submit(VelocityNed(1.0, 0.0, 0.0))


async def test_reconnects_when_autopilot_restarts(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        kinds: list[str] = []
        lost, restored = asyncio.Event(), asyncio.Event()
        bridge.events.add_listener(lambda e: kinds.append(e.kind))
        bridge.events.add_listener(lambda e: lost.set() if e.kind == "link_lost" else None)
        # only a restore after the loss counts: on a loaded machine the monitor may first see the link come up
        # after connect, and that earlier restore must not satisfy the wait below
        bridge.events.add_listener(lambda e: restored.set() if e.kind == "link_restored" and lost.is_set() else None)
        vehicle.kill()
        await asyncio.wait_for(lost.wait(), 30.0)
        reborn = SimVehicleProcess(gcs_port=vehicle.gcs_port, seed=8, params=FAST, prearm_delay_s=0.5).start()
        try:
            await asyncio.wait_for(restored.wait(), 60.0)
            await bridge.wait_healthy(60.0)
            assert bridge.monitor.link_ok.is_set()
            link_kinds = [k for k in kinds if k in ("link_lost", "link_restored")]
            first_loss = link_kinds.index("link_lost")
            assert link_kinds[first_loss:first_loss + 2] == ["link_lost", "link_restored"]
            await takeoff_and_wait(bridge, 3.0)
            flown = reborn.truth()
            assert flown["armed"] and -flown["ned"][2] > 2.0, flown  # the new autopilot flew the bridge's commands
            await land_and_wait(bridge)
            landed = reborn.truth()
            assert not landed["armed"] and landed["landed_state"] == 1
            assert not bridge.state.armed and not bridge.state.in_air
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
        pressed_from = time.monotonic()
        # an agent insisting on flying north at 4 m/s: for at least 12 s, and at least until the vehicle
        # got within 15 m of the fence (on a busy machine the simulator may fall behind the wall clock)
        while time.monotonic() - pressed_from < 12.0 or worst <= 10.0:
            assert time.monotonic() - pressed_from < 90.0, f"never got near the fence (worst {worst:.1f} m)"
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
        await wait_until(bridge, lambda s: s.flight_mode == "RETURN_TO_LAUNCH", 30, "battery RTL")
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
        await offboard_to(bridge, PositionNed(5.0, 0.0, -4.0), tolerance_m=1.5, timeout_s=60.0)
        assert bridge.monitor.link_ok.is_set()
        assert position_from_home(bridge).north_m > 3.0
        assert bridge.state.flight_mode == "OFFBOARD"
        await bridge.streamer.stop_offboard()
        await land_and_wait(bridge)
    assert vehicle.proc.poll() is None  # the vehicle process is still alive

"""Issue 36, row 13: after a landing from offboard flight PX4 sits disarmed in OFFBOARD and will not arm.

Against the simulated PX4 over real UDP with real MAVSDK: the vehicle lands
on a Land command given while the offboard stream runs (as the supervisor lands)
and disarms back into OFFBOARD; arming is refused as PX4 refuses it; the bridge
selects Hold and arms; and when arming stays blocked the error names the check.
"""

import asyncio

import pytest

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from firmware_bridge.ground_mode import OFFBOARD_BLOCKER, arming_blockers
from firmware_bridge.maneuvers import ManeuverTimeout, arm_when_ready, position_from_home, takeoff_and_wait, wait_until
from firmware_bridge.vehicle_state import VehicleState
from sim.vehicle import SimVehicleProcess
from tests.firmware_bridge.test_flight import FAST, bridge_config

QUICK_LANDING = {**FAST, "COM_DISARM_LAND": 0.5, "LNDMC_TRIG_TIME": 0.3}


@pytest.fixture
def vehicle():
    sim = SimVehicleProcess(seed=11, params=QUICK_LANDING, prearm_delay_s=0.5)
    sim.start()
    yield sim
    sim.stop()


async def _fly_offboard_and_land(bridge: FlightBridge) -> None:
    await takeoff_and_wait(bridge, 4.0)
    here = position_from_home(bridge)
    await bridge.streamer.start_offboard(here)
    await wait_until(bridge, lambda s: s.flight_mode == "OFFBOARD", 30, "offboard")
    await bridge.commands.land()  # while the stream runs, as the supervisor's finish() does
    bridge.streamer.clear()
    await wait_until(bridge, lambda s: not s.in_air and not s.armed, 90, "landed and disarmed")


async def test_landed_in_offboard_refuses_to_arm_then_hold_clears_it(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await _fly_offboard_and_land(bridge)
        await wait_until(bridge, lambda s: s.flight_mode == "OFFBOARD" and not s.armable, 10, "back in OFFBOARD")
        texts = []

        async def collect():
            async for t in bridge.hub.status_texts():
                texts.append(t.text)

        reader = asyncio.get_running_loop().create_task(collect())
        await asyncio.sleep(0)
        with pytest.raises(CommandError) as err:
            await bridge.commands.arm()
        assert err.value.result is CommandResult.DENIED
        await wait_until(bridge, lambda s: "Arming denied: Resolve system health failures first" in texts, 10,
                         "PX4's refusal text")
        reader.cancel()
        await arm_when_ready(bridge, 20)  # selects Hold, then arms
        assert vehicle.truth()["armed"] and vehicle.truth()["flight_mode"] == "HOLD"
        await wait_until(bridge, lambda s: s.armed, 10, "armed seen")
        await bridge.commands.disarm()


async def test_arming_blocked_names_the_check(vehicle):
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await wait_until(bridge, lambda s: s.armable, 30, "pre-arm")
        vehicle.set_gps(False)
        await wait_until(bridge, lambda s: not s.armable, 30, "GPS loss seen")
        with pytest.raises(ManeuverTimeout) as err:
            await arm_when_ready(bridge, 3)
        message = str(err.value)
        assert "pre-arm checks: not reached within 3 s; blocking:" in message
        assert "global position" in message or "GPS" in message, message
        assert not bridge.state.armed


def test_blockers_name_offboard_positions_and_autopilot_texts():
    s = VehicleState(flight_mode="OFFBOARD", armed=False, in_air=False, global_position_ok=True,
                     home_position_ok=False, local_position_ok=True, gps_fix="FIX_3D")
    out = arming_blockers(s, ["Preflight Fail: Compass Sensor 0 missing"])
    assert out == [OFFBOARD_BLOCKER, "home position", 'autopilot: "Preflight Fail: Compass Sensor 0 missing"']
    healthy = VehicleState(flight_mode="HOLD", global_position_ok=True, home_position_ok=True,
                           local_position_ok=True, gps_fix="FIX_3D")
    assert arming_blockers(healthy, []) == ["none reported by the autopilot"]


async def test_arming_waits_out_a_heartbeat_gap(vehicle):
    """CI, 2 cores, two autopilots: a heartbeat gap cleared the link as a mission armed and the arm failed."""
    async with await FlightBridge.connect(bridge_config(vehicle.mavsdk_url)) as bridge:
        await wait_until(bridge, lambda s: s.armable, 30, "pre-arm")
        vehicle.set_link_down(True)
        await asyncio.wait_for(_cleared(bridge.monitor.link_ok), 30)
        arming = asyncio.get_running_loop().create_task(arm_when_ready(bridge, 20))
        await asyncio.sleep(0.5)
        assert not arming.done(), "arming did not wait for the link"
        vehicle.set_link_down(False)
        await asyncio.wait_for(arming, 30)
        await wait_until(bridge, lambda s: s.armed, 10, "armed seen")
        await bridge.commands.disarm()


async def _cleared(event: asyncio.Event) -> None:
    while event.is_set():
        await asyncio.sleep(0.05)

"""The supervisor's own loop stalls mid-move: offboard is taken back, not mistaken for a person's takeover.

An 8-vehicle `aerie bench fleet` run on a saturated machine starved one supervisor's loop for a second:
the setpoint streamer stopped on the stale intent (as it must, so PX4's failsafe holds a vehicle whose
supervisor hangs), and the executor, seeing offboard lost with the link up, took it for a pilot's
takeover and left the vehicle hovering. Here a real simulated PX4 over real MAVSDK flies a move while the
test blocks the event loop past the intent timeout (the fault itself; nothing is judged by time): the move
must go on to arrival, the stall said as ``stream_stalled``, and nothing handed to a pilot.
"""

from __future__ import annotations

import asyncio
import time

from common.geodesy import geo_from_ned
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.maneuvers import takeoff_and_wait, wait_until
from onboard.supervisor.flight_executor import FlightExecutor
from onboard.supervisor.settings import SupervisorConfig
from sim.vehicle import SimFleet
from tests.firmware_bridge.separation_kit import CRUISE_M, FAST, ORIGIN, bridge_config, home_at


async def test_a_stalled_loop_takes_offboard_back_and_the_move_arrives():
    events: list = []
    cfg = SupervisorConfig(speed_m_s=5.0, cruise_alt_m=CRUISE_M)
    with SimFleet([home_at(0.0, 0.0)], params=FAST, prearm_delay_s=0.5) as fleet:
        link = bridge_config(fleet[0].mavsdk_url, 1, enabled=False)
        async with await FlightBridge.connect(link) as bridge:
            await takeoff_and_wait(bridge, CRUISE_M)
            executor = FlightExecutor(bridge, cfg, lambda kind, detail: events.append((kind, detail)))
            await executor.pilot.engage()
            lat, lon = geo_from_ned(ORIGIN, 80.0, 0.0)
            move = asyncio.ensure_future(executor.fly_to(lat, lon))
            await wait_until(bridge, lambda s: s.vn_m_s > 1.0, 60.0, "moving north")
            time.sleep(link.streamer.intent_timeout_s + 0.6)  # the stall: this loop runs nothing
            result = await asyncio.wait_for(move, 120.0)
            stalled = [d for k, d in events if k == "stream_stalled"]
            assert result.arrived, (result, events)
            assert stalled and stalled[0]["count"] == 1, events
            assert executor.taken_over is None and not [k for k, _ in events if k == "taken_over"]
            assert bridge.state.flight_mode == "OFFBOARD" and bridge.streamer.stalled_at is not None
            await executor.pilot.release()

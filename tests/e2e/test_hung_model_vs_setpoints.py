"""A model call that hangs must not touch the setpoint stream.

The vehicle (simulated PX4, real MAVSDK over UDP) hovers in offboard while the
agent's model call hangs inside an inference worker. The deadline fires and
surfaces as an error on the agent's side; the setpoints keep arriving at the
vehicle without interruption (no gap over 500 ms, the link benchmark's
definition of a gap; the benchmark reports the fine-grained periods).
"""

import asyncio
import json
import threading
import time

import pytest

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.intents import PositionNed
from firmware_bridge.maneuvers import hold_intent, land_and_wait, takeoff_and_wait
from firmware_bridge.settings import BridgeConfig, LinkConfig
from onboard.inference.inference_worker import DeadlineExceeded, ThreadWorker
from sim.vehicle import SimVehicleProcess


async def test_hung_model_call_times_out_while_setpoints_flow(tmp_path):
    log = tmp_path / "setpoints.jsonl"
    sim = SimVehicleProcess(seed=4, params={"MPC_TKO_SPEED": 4.0, "MPC_LAND_SPEED": 3.0}, setpoint_log=log,
                            prearm_delay_s=0.5).start()
    release = threading.Event()
    worker = ThreadWorker("planner", deadline_s=1.5)
    try:
        cfg = BridgeConfig(link=LinkConfig(url=sim.mavsdk_url, connect_timeout_s=10, health_timeout_s=20))
        async with await FlightBridge.connect(cfg) as bridge:
            await takeoff_and_wait(bridge, 5.0)
            hover = PositionNed(0.0, 0.0, -5.0)
            await bridge.streamer.start_offboard(hover)
            first_tick = len(bridge.streamer.tick_times)
            t_from = time.monotonic()

            async def agent_keeps_its_intent_fresh():
                await hold_intent(bridge, hover, 3.0)

            keeper = asyncio.create_task(agent_keeps_its_intent_fresh())
            t0 = time.monotonic()
            with pytest.raises(DeadlineExceeded):
                await worker.call_async(release.wait, 60)  # a model that never answers
            waited = time.monotonic() - t0
            await keeper
            t_to = time.monotonic()
            ticks = list(bridge.streamer.tick_times)[first_tick:]
            assert bridge.state.flight_mode == "OFFBOARD"
            await bridge.streamer.stop_offboard()
            await land_and_wait(bridge)
        assert 1.4 <= waited <= 3.0
        arrivals = [r.get("kt") or r["mono"] for r in map(json.loads, log.read_text().splitlines())
                    if r["msg"].startswith("SET_POSITION_TARGET") and t_from <= r["mono"] <= t_to]
        for times in (ticks, arrivals):
            assert len(times) >= 40  # ~20 Hz over ~3 s
            assert max(b - a for a, b in zip(times, times[1:])) < 0.5
    finally:
        release.set()
        worker.close()
        sim.stop()

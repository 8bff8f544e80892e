"""Issue 19, item 13: a supervisor that starts while its vehicle is in the air takes it home first.

The vehicle is put in the air by another MAVSDK client (this test, through the
flight bridge: arm, take off, leave it hovering in Hold, disconnect), as a
previous supervisor or a person would have left it. Then `aerie fly --standby`
(the service) starts: it must not ignore the vehicle but command RTL (the
default `supervisor.on_start_airborne`), say so in its log and as an
`adopted_airborne` telemetry event in its journal, and the vehicle comes home
and disarms.
"""

from __future__ import annotations

import asyncio
import signal

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.maneuvers import takeoff_and_wait
from sim.flight_rig import start_rig
from tests.faults.flykit import fly_config, start_fly, stop_process, wait_truth
from tests.supervisor.flightkit import world
from tests.supervisor.test_faults import journal_messages


async def _leave_hovering(cfg) -> None:
    async with await FlightBridge.connect(cfg.bridge) as bridge:
        await takeoff_and_wait(bridge, 12.0)


def test_standby_started_under_an_airborne_vehicle_returns_it(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, status_socket=False)
        asyncio.run(_leave_hovering(cfg))
        hovering = rig.vehicle.truth()
        assert hovering["armed"] and hovering["rel_alt"] > 8 and hovering["flight_mode"] == "HOLD", hovering
        proc = start_fly(rig, cfg, tmp_path, "--standby")
        rtl = wait_truth(rig, lambda t: t["flight_mode"] == "RETURN_TO_LAUNCH", 120, "RTL from the started supervisor",
                         tmp_path)
        assert rtl["failsafe"] is None, rtl
        wait_truth(rig, lambda t: not t["armed"] and t["on_ground"], 180, "home and disarmed", tmp_path)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        log = (tmp_path / "fly.log").read_text()
        assert "airborne at start" in log, log
        events = [m["payload"] for m in journal_messages(cfg) if m["type"] == "event"]
        adopted = [e for e in events if e["kind"] == "adopted_airborne"]
        assert adopted and adopted[0]["detail"]["action"] == "rtl" and adopted[0]["detail"]["mode"] == "HOLD", events
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()

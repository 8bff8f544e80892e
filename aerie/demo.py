"""`make demo`: fly a whole simulated mission on the embedded defaults.

Today's mission is the flight bridge's repertoire flown against the
simulated PX4 over real UDP with real MAVSDK: take off, an offboard square
and velocity leg, goto, land. The agent, the ground station and post-flight
reflection join this demo as they land (issue #8 describes the final form).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time


async def _demo() -> int:
    from firmware_bridge.bridge import FlightBridge
    from firmware_bridge.errors import BridgeError
    from firmware_bridge.flight_check import run_flight_check
    from onboard.config import load_config
    from sim.vehicle import SimVehicleProcess

    cfg = load_config(None)
    print("Aerie demo: starting the simulated PX4 vehicle (MAVLink over UDP loopback) ...")
    sim = SimVehicleProcess(seed=1, prearm_delay_s=1.0)
    sim.start()
    try:
        bridge_cfg = cfg.bridge
        from dataclasses import replace

        bridge_cfg = replace(bridge_cfg, link=replace(bridge_cfg.link, url=sim.mavsdk_url))
        print(f"connecting with MAVSDK to {sim.mavsdk_url} ...")
        started = time.monotonic()
        async with await FlightBridge.connect(bridge_cfg) as bridge:
            s = bridge.state
            print(f"connected: home {s.home_lat:.6f}, {s.home_lon:.6f}; battery {s.battery_percent:.0f} %; mode {s.flight_mode}")
            timings = await run_flight_check(bridge, altitude_m=10.0, square_m=10.0)
            battery = bridge.state.battery_percent
        total = time.monotonic() - started
    except BridgeError as exc:
        print(f"demo FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        sim.stop()
    print()
    print("| step | seconds |")
    print("|---|---|")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.1f} |")
    print(f"| **total (incl. connect)** | **{total:.1f}** |")
    print(f"\nmission flown; battery left {battery:.0f} %")
    return 0


def main(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="aerie demo", description=__doc__.splitlines()[0]).parse_args(argv)
    return asyncio.run(_demo())

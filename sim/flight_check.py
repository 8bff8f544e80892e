"""`aerie flight-check` / `make sitl`: the bridge's whole repertoire on a real or simulated PX4.

Connect, arm, take off to 10 m, fly an offboard position square and an
offboard velocity leg, leave offboard, goto 30 m north, land and wait for
auto-disarm. Prints one line per step and exits non-zero on the first failure,
so it works as a smoke test against PX4 SITL (`make sitl`) and in CI against
the simulated vehicle (`--sim`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Callable

from common.geodesy import geo_from_ned
from common.log_setup import LoggingConfig, configure_logging
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import GlobalTarget, PositionNed, VelocityNed
from firmware_bridge.maneuvers import (
    goto_and_wait, hold_intent, land_and_wait, offboard_to, position_from_home, takeoff_and_wait, wait_until,
)
from firmware_bridge.settings import BridgeConfig, LinkConfig


def say_as_events(publisher) -> Callable[[str], object]:
    """Each step's line as a ``flight_check`` event of ``publisher``: the dashboard's events panel shows the check."""
    return lambda line: publisher.event("flight_check", {"line": line})


async def run_flight_check(bridge: FlightBridge, altitude_m: float = 10.0, square_m: float = 10.0,
                           say=print) -> dict[str, float]:
    timings: dict[str, float] = {}

    async def step(name: str, coro) -> None:
        t = time.monotonic()
        await coro
        timings[name] = time.monotonic() - t
        p = position_from_home(bridge)
        say(f"  ok  {name:<22} {timings[name]:6.1f} s   pos N {p.north_m:6.1f} E {p.east_m:6.1f} alt {p.rel_alt_m:5.1f} m"
            f"   mode {bridge.state.flight_mode}")

    await step("arm+takeoff", takeoff_and_wait(bridge, altitude_m))
    here = position_from_home(bridge)
    await step("offboard start", bridge.streamer.start_offboard(PositionNed(here.north_m, here.east_m, -altitude_m)))
    await step("offboard mode", wait_until(bridge, lambda s: s.flight_mode == "OFFBOARD", 5, "offboard mode"))
    corners = [(square_m, 0), (square_m, square_m), (0, square_m), (0, 0)]
    for i, (n, e) in enumerate(corners, 1):
        target = PositionNed(here.north_m + n, here.east_m + e, -altitude_m)
        await step(f"square corner {i}", offboard_to(bridge, target, tolerance_m=1.0, timeout_s=40))
    await step("velocity 2 m/s N 3 s", hold_intent(bridge, VelocityNed(2.0, 0.0, 0.0), 3.0))
    await step("velocity stop", hold_intent(bridge, VelocityNed(0.0, 0.0, 0.0), 1.5))
    await step("offboard stop", bridge.streamer.stop_offboard())
    p = position_from_home(bridge)
    envelope = bridge.envelope()
    lat, lon = geo_from_ned(envelope.home, p.north_m + 30.0, p.east_m)
    await step("goto 30 m N", goto_and_wait(bridge, GlobalTarget(lat, lon, altitude_m), speed_m_s=5.0, timeout_s=60))
    await step("land+disarm", land_and_wait(bridge))
    return timings


async def _main(args: argparse.Namespace) -> int:
    sim = None
    url = args.url
    if args.sim:
        from sim.vehicle import SimVehicleProcess  # only the CLI's --sim path knows the simulator

        sim = SimVehicleProcess(prearm_delay_s=1.0)
        sim.start()
        url = sim.mavsdk_url
        print(f"simulated vehicle up, MAVSDK on {url}")
    cfg = BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=args.connect_timeout, health_timeout_s=60))
    try:
        print(f"connecting to {url} ...")
        async with await FlightBridge.connect(cfg) as bridge:
            s = bridge.state
            print(f"connected: home {s.home_lat:.6f}, {s.home_lon:.6f}; mode {s.flight_mode}; battery {s.battery_percent:.0f} %")
            timings = await run_flight_check(bridge, args.altitude, args.square)
        print(f"flight check passed in {sum(timings.values()):.1f} s")
        return 0
    except BridgeError as exc:
        print(f"flight check FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if sim is not None:
            sim.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie flight-check", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="udpin://127.0.0.1:14540", help="MAVSDK connection URL")
    parser.add_argument("--sitl", action="store_true", help="say that the target is a real PX4 SITL (make sitl)")
    parser.add_argument("--sim", action="store_true", help="start Aerie's simulated vehicle and fly against it")
    parser.add_argument("--altitude", type=float, default=10.0)
    parser.add_argument("--square", type=float, default=10.0, help="offboard square side, metres")
    parser.add_argument("--connect-timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    configure_logging(LoggingConfig(level="WARNING"))
    return asyncio.run(_main(args))

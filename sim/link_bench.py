"""`aerie bench link`: is the 20 Hz setpoint stream steady while the computer is busy?

Flies the simulated PX4 over real UDP with real MAVSDK, starts offboard, and
for ``--duration`` seconds keeps an agent-like loop submitting intents while
other threads run ONNX Runtime and numpy flat out. It reports the streamer's
own tick periods and the periods between setpoints as they arrived at the
vehicle, gaps over 500 ms, the round-trip time of acknowledged commands, and
the simulated vehicle's own CPU use (CPU seconds per wall second).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.intents import VelocityNed
from firmware_bridge.load_generator import InferenceLoad, period_stats
from firmware_bridge.maneuvers import land_and_wait, takeoff_and_wait
from firmware_bridge.settings import BridgeConfig, LinkConfig, StreamerConfig


async def _command_rtt(bridge: FlightBridge, n: int) -> list[float]:
    """Round trips of an acknowledged COMMAND_LONG (DO_SET_MODE Hold) through MAVSDK."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await bridge.commands.hold()
        out.append((time.perf_counter() - t) * 1000.0)
        await asyncio.sleep(0.05)
    return out


async def _stream_phase(bridge: FlightBridge, seconds: float, load: bool) -> tuple[list[float], dict]:
    """Circle at 2 m/s for ``seconds``; returns the streamer tick times of this phase."""
    first = len(bridge.streamer.tick_times)
    info: dict = {}
    t0 = time.monotonic()

    async def agent() -> None:
        while (t := time.monotonic() - t0) < seconds:
            w = 2 * math.pi / 20.0
            bridge.submit(VelocityNed(2.0 * math.cos(w * t), 2.0 * math.sin(w * t), 0.0))
            await asyncio.sleep(0.2)

    if load:
        with InferenceLoad(onnx_threads=1, numpy_threads=1) as generator:
            await agent()
        info = {"onnx_runs_per_s": generator.onnx_runs / seconds, "numpy_runs_per_s": generator.numpy_runs / seconds}
    else:
        await agent()
    ticks = list(bridge.streamer.tick_times)[first:]
    return ticks, info


def _wire_times(log_path: Path, t_from: float, t_to: float) -> list[float]:
    """Arrival times of setpoints at the vehicle's socket, from kernel timestamps where logged."""
    out = []
    for line in log_path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("msg", "").startswith("SET_POSITION_TARGET") and t_from <= rec["mono"] <= t_to:
            out.append(rec["kt"] if rec.get("kt") is not None else rec["mono"])
    return out


async def run_bench(duration_s: float, baseline_s: float, rtt_n: int) -> dict:
    from sim.vehicle import SimVehicleProcess  # the benchmark flies the simulator, never a real vehicle

    workdir = Path(tempfile.mkdtemp(prefix="aerie-link-bench-"))
    sp_log = workdir / "setpoints.jsonl"
    sim = SimVehicleProcess(seed=1, params={"MPC_TKO_SPEED": 4.0, "MPC_LAND_SPEED": 3.0}, setpoint_log=sp_log,
                            prearm_delay_s=0.5)
    sim.start()
    cfg = BridgeConfig(link=LinkConfig(url=sim.mavsdk_url, connect_timeout_s=10, health_timeout_s=20),
                       streamer=StreamerConfig(rate_hz=20.0, intent_timeout_s=1.0))
    result: dict = {}
    try:
        async with await FlightBridge.connect(cfg) as bridge:
            await takeoff_and_wait(bridge, 8.0)
            rtt = await _command_rtt(bridge, rtt_n)
            await bridge.streamer.start_offboard(VelocityNed(0.0, 0.0, 0.0))
            phases = {}
            for name, seconds, load in (("baseline", baseline_s, False), ("loaded", duration_s, True)):
                if seconds <= 0:
                    continue
                t_from = time.monotonic()
                ticks, info = await _stream_phase(bridge, seconds, load)
                t_to = time.monotonic()
                phases[name] = {"ticks": period_stats(ticks), "wire": period_stats(_wire_times(sp_log, t_from, t_to)), **info}
                print(f"  {name:8s} {seconds:5.0f} s: streamer p50 {phases[name]['ticks']['p50_ms']:.1f} ms "
                      f"p99 {phases[name]['ticks']['p99_ms']:.1f} ms max {phases[name]['ticks']['max_ms']:.1f} ms; "
                      f"at vehicle p99 {phases[name]['wire']['p99_ms']:.1f} ms", file=sys.stderr)
            priority = bridge.streamer.priority
            await bridge.streamer.stop_offboard()
            await land_and_wait(bridge)
        sim_stats = sim.stats()  # the simulator's own cost over the whole run (PX4 stream rates, 100 Hz physics)
        loaded = phases.get("loaded") or phases["baseline"]
        result = {
            "period_p50_ms": loaded["ticks"]["p50_ms"],
            "period_p99_ms": loaded["ticks"]["p99_ms"],
            "period_max_ms": loaded["ticks"]["max_ms"],
            "gaps_over_500ms": loaded["ticks"]["gaps"],
            "vehicle_period_p50_ms": loaded["wire"]["p50_ms"],
            "vehicle_period_p99_ms": loaded["wire"]["p99_ms"],
            "vehicle_period_max_ms": loaded["wire"]["max_ms"],
            "vehicle_gaps_over_500ms": loaded["wire"]["gaps"],
            "command_rtt_p50_ms": float(np.percentile(rtt, 50)),
            "command_rtt_p99_ms": float(np.percentile(rtt, 99)),
            "command_rtt_n": len(rtt),
            "sim_cpu_fraction": sim_stats["cpu_s"] / sim_stats["wall_s"],
            "rate_hz": cfg.streamer.rate_hz,
            "streamer_priority": priority,
            "duration_s": duration_s,
            "phases": phases,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "load": "1 thread ONNX Runtime MLP 3x512 (batch 64) + 1 thread numpy 384x384 matmul, flat out",
        }
    finally:
        sim.stop()
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie bench link", description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of streaming under load")
    parser.add_argument("--baseline", type=float, default=15.0, help="seconds of streaming without load first")
    parser.add_argument("--rtt-samples", type=int, default=30)
    args = parser.parse_args(argv)
    result = asyncio.run(run_bench(args.duration, args.baseline, args.rtt_samples))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    keys = ("period_p50_ms", "period_p99_ms", "period_max_ms", "gaps_over_500ms", "vehicle_period_p99_ms", "command_rtt_p50_ms",
            "sim_cpu_fraction")
    print(json.dumps({k: round(result[k], 2) if isinstance(result[k], float) else result[k] for k in keys}))
    return 0

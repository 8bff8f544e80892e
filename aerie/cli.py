"""The `aerie` command: a thin dispatcher to each package's own command module.

Each subcommand lives next to the code it drives and exposes
``main(argv: list[str]) -> int``. Modules are imported only when their
command runs, so `aerie sim vehicle` does not pay for ONNX Runtime and a
missing optional part breaks only its own command.
"""

from __future__ import annotations

import importlib
import sys

# command -> module with main(argv). Two-word commands are looked up first.
COMMANDS: dict[str, tuple[str, str]] = {
    "sim vehicle": ("sim.vehicle.cli", "Run the PX4-like MAVLink vehicle simulator"),
    "sim camera": ("sim.camera_stream_cli", "Serve the simulated vehicle's camera as an MJPEG stream, and its calibration"),
    "bench link": ("sim.link_bench", "Setpoint-stream and command-latency benchmark"),
    "bench memory": ("sim.memory_bench", "sqlite-vec / numpy / faiss retrieval benchmark"),
    "bench perception": ("sim.perception_bench", "Per-model latency and wrapper overhead"),
    "bench nav": ("sim.nav_bench", "Navigation benchmark on the Helsinki tasks"),
    "bench compare": ("sim.nav_compare", "Two navigation result files task by task: what changed"),
    "bench reading": ("sim.reading_bench", "Reading shop signs on the world's rendered views, per camera setting"),
    "bench instructions": ("sim.instructions_bench", "Reading descriptions: accuracy per phrasing family and reader"),
    "bench telemetry": ("sim.telemetry_bench", "ZeroMQ telemetry throughput and latency"),
    "bench ground": ("sim.ground_bench", "The ground under a simulated fleet, one ingest process killed: loss, takeover, msg/s, latency"),
    "bench explore": ("sim.explore_bench", "Exploration coverage: lock-step pairs, or N vehicle processes in real time (--processes)"),
    "bench fly": ("sim.fly_bench", "The supervisor (aerie fly) on Helsinki tasks: step time, peak memory, SR/SPL"),
    "bench fleet-channel": ("sim.fleet_channel_bench", "The fleet channel peer to peer vs through a relay: latency, delivery, CPU"),
    "bench team-search": ("sim.team_search", "N vehicles after one goal from different starts: sharing findings vs not"),
    "bench fleet": ("sim.fleet_bench", "N supervisors at once: missions, true separation, telemetry loss, setpoint p99"),
    "flight-check": ("sim.flight_check", "Connect, arm, take off, offboard square, goto, land"),
    "sitl-check": ("sim.flight_check", "The flight check against a real PX4 SITL"),
    "memory": ("onboard.memory.cli", "Inspect, search, export and import experience memory"),
    "models": ("onboard.inference.models_cli", "List, verify, prepare, quantize models; build TensorRT engines"),
    "world": ("sim.world.cli", "Build and render the Helsinki world"),
    "map": ("onboard.map.cli", "Build, describe and draw the onboard map (an OpenStreetMap extract)"),
    "fly": ("onboard.supervisor", "Run the onboard supervisor"),
    "ground": ("ground_station.service", "Run the ground station (ingest, dashboard, post-flight lessons delivered to every vehicle); also show|sync|dashboard|analyse|migrate"),
    "keys": ("onboard.telemetry.keys", "Generate CurveZMQ key files"),
    "demo": ("aerie.demo", "Fly a full simulated mission on the embedded defaults"),
    "fleet configs": ("aerie.fleet_configs", "Write member configs, keys, missions and homes for N PX4 SITL instances"),
    "fleet": ("aerie.fleet", "Fly N simulated vehicles with N supervisors, a fleet channel and one ground station"),
    "config": ("onboard.config_cli", "Print or check the configuration"),
    "status": ("onboard.status", "Health of this install and its supervisor (config, models, memory, live socket)"),
}


def _usage() -> str:
    width = max(len(k) for k in COMMANDS)
    lines = ["usage: aerie COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if len(argv) >= 2 and f"{argv[0]} {argv[1]}" in COMMANDS:
        name, rest = f"{argv[0]} {argv[1]}", argv[2:]
    elif argv[0] in COMMANDS:
        name, rest = argv[0], argv[1:]
    else:
        print(f"aerie: unknown command {' '.join(argv[:2])!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name = COMMANDS[name][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            print(f"aerie: '{name}' is not built yet ({module_name} is missing)", file=sys.stderr)
            return 2
        raise
    if name == "sitl-check":
        rest = ["--sitl", *rest]
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())

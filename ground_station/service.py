"""`aerie ground --config FILE`: run the ground station until SIGINT/SIGTERM (or --duration).

`aerie ground sync --config FILE --vehicle ID BUNDLE`: deliver a memory export bundle to a vehicle.
`aerie ground show --config FILE`: what the flight log holds (cursors, flights, rejected frames) as JSON.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys


def sync_main(argv: list[str]) -> int:
    from ground_station.memory_sync import SyncError, push_bundle
    from ground_station.settings import load_ground_config
    from onboard.memory.bundle import BundleError
    from onboard.typed_config import ConfigError

    parser = argparse.ArgumentParser(prog="aerie ground sync", description="Send a memory bundle to a vehicle")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("--vehicle", default=None, help="vehicle_id (default: the only configured vehicle)")
    parser.add_argument("bundle", help="bundle file from `aerie memory export`")
    args = parser.parse_args(argv)
    try:
        cfg, base_dir = load_ground_config(args.config)
    except ConfigError as exc:
        print(f"aerie ground sync: {exc}", file=sys.stderr)
        return 1
    links = [v for v in cfg.vehicles if args.vehicle in (None, v.vehicle_id)]
    if len(links) != 1:
        print("aerie ground sync: name one configured vehicle with --vehicle", file=sys.stderr)
        return 2
    try:
        ack = push_bundle(args.bundle, links[0], cfg, base_dir=base_dir)
    except (SyncError, BundleError, OSError) as exc:
        print(f"aerie ground sync: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(ack, sort_keys=True))
    return 0


def show_main(argv: list[str]) -> int:
    from ground_station.flight_log import FlightLog
    from ground_station.settings import load_ground_config, resolve
    from onboard.typed_config import ConfigError

    parser = argparse.ArgumentParser(prog="aerie ground show", description="Summarise the flight log")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    args = parser.parse_args(argv)
    try:
        cfg, base_dir = load_ground_config(args.config)
    except ConfigError as exc:
        print(f"aerie ground show: {exc}", file=sys.stderr)
        return 1
    path = resolve(base_dir, cfg.db_path)
    if not path.exists():
        print(f"aerie ground show: {path}: no flight log yet", file=sys.stderr)
        return 1
    with FlightLog.open(path) as fl:
        print(json.dumps({"db": str(path), "vehicles": fl.summary()}, indent=2, sort_keys=True))
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "sync":
        return sync_main(argv[1:])
    if argv and argv[0] == "show":
        return show_main(argv[1:])
    from ground_station.ingest import GroundStation, IngestError
    from ground_station.settings import load_ground_config
    from onboard.log_setup import LoggingConfig, configure_logging
    from onboard.typed_config import ConfigError

    parser = argparse.ArgumentParser(prog="aerie ground", description="Run the ground station")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    configure_logging(LoggingConfig(level=args.log_level.upper()), stream=sys.stderr)
    try:
        cfg, base_dir = load_ground_config(args.config)
    except ConfigError as exc:
        print(f"aerie ground: {exc}", file=sys.stderr)
        return 1
    station = GroundStation(cfg, base_dir=base_dir)

    def _stop(signum: int, frame: object) -> None:
        station.stop()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        counters = station.run(duration_s=args.duration)
    except IngestError as exc:
        print(f"aerie ground: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"counters": counters}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

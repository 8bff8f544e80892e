"""`aerie ground --config FILE`: run the ground station until SIGINT/SIGTERM (or --duration)."""

from __future__ import annotations

import argparse
import json
import signal
import sys


def main(argv: list[str]) -> int:
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

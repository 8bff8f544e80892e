"""`aerie ground --config FILE`: run the ground station until SIGINT/SIGTERM (or --duration).

`aerie ground sync --config FILE --vehicle ID BUNDLE`: deliver a memory export bundle to a vehicle.
`aerie ground show --config FILE`: what the flight log holds (cursors, flights, rejected frames) as JSON.
`aerie ground dashboard --config FILE`: serve the web dashboard on the flight log without ingesting.
`aerie ground migrate --config FILE`: create or upgrade the PostgreSQL database named by ``database``
(numbered SQL migrations; a SQLite flight log upgrades itself when opened).
`aerie ground analyse --config FILE`: write the post-flight lesson bundles of ended flights that have none.
`aerie ground export-rrd --config FILE VEHICLE_ID START_SEQ --out PATH`: one flight as a Rerun recording
(VEHICLE_ID and START_SEQ as `show` lists them; exit 2 when there is no such flight).

`aerie ground` also serves the dashboard (unless `dashboard_enabled: false`) and prints its URL
on stderr (stdout stays the final JSON counters), analyses each flight once it has ended
(unless `post_flight_enabled: false`) and delivers every lesson bundle to every vehicle
(unless `lesson_delivery_enabled: false`; its per-vehicle counters are the JSON's `lesson_delivery`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ground_station.dashboard.server import DashboardServer
    from ground_station.post_flight import PostFlightWatcher
    from ground_station.settings import GroundConfig


def _load_config(prog: str, path: str) -> "tuple[GroundConfig, Path] | None":
    """The ground config and its base directory, or None after saying why on stderr."""
    from ground_station.settings import load_ground_config
    from common.typed_config import ConfigError

    try:
        return load_ground_config(path)
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None


def sync_main(argv: list[str]) -> int:
    from ground_station.memory_sync import SyncError, push_bundle
    from contract.bundle import BundleError

    parser = argparse.ArgumentParser(prog="aerie ground sync", description="Send a memory bundle to a vehicle")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("--vehicle", default=None, help="vehicle_id (default: the only configured vehicle)")
    parser.add_argument("bundle", help="bundle file from `aerie memory export`")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground sync", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    links = [v for v in cfg.vehicles if args.vehicle in (None, v.vehicle_id)]
    if len(links) != 1:
        print("aerie ground sync: name one configured vehicle with --vehicle", file=sys.stderr)
        return 2
    try:
        ack = push_bundle(args.bundle, links[0], cfg, base_dir=base_dir)
    except (SyncError, BundleError, OSError) as exc:
        print(f"aerie ground sync: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(ack.body(), sort_keys=True))
    return 0


def migrate_main(argv: list[str]) -> int:
    from ground_station import migrations
    from ground_station.flight_log import FlightLog, FlightLogError
    from ground_station.log_db import DatabaseError, open_postgres
    from ground_station.settings import log_target

    parser = argparse.ArgumentParser(prog="aerie ground migrate",
                                     description="Create or upgrade the ground database's schema")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground migrate", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    target = log_target(cfg, base_dir)
    try:
        if not cfg.database:   # a SQLite file is upgraded by opening it
            with FlightLog.open(target) as fl:
                print(json.dumps({"db": fl.path, "engine": "sqlite"}))
            return 0
        db = open_postgres(cfg.database)
        try:
            applied = migrations.migrate(db)
            version = migrations.current_version(db)
        finally:
            db.close()
    except (DatabaseError, FlightLogError) as exc:
        print(f"aerie ground migrate: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"db": db.where, "engine": "postgresql", "version": version,
                      "applied": [f"{m.version:04d}_{m.name}" for m in applied]}))
    return 0


def show_main(argv: list[str]) -> int:
    from ground_station.flight_log import FlightLog, FlightLogError
    from ground_station.settings import log_target

    parser = argparse.ArgumentParser(prog="aerie ground show", description="Summarise the flight log")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground show", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    path = log_target(cfg, base_dir)
    if not cfg.database and not path.exists():
        print(f"aerie ground show: {path}: no flight log yet", file=sys.stderr)
        return 1
    try:
        with FlightLog.open(path) as fl:
            print(json.dumps({"db": str(fl.path), "vehicles": fl.summary()}, indent=2, sort_keys=True))
    except FlightLogError as exc:
        print(f"aerie ground show: {exc}", file=sys.stderr)
        return 1
    return 0


def _start_dashboard(cfg: "GroundConfig", base_dir: "Path", prog: str) -> "DashboardServer | None":
    """Start the dashboard and print its URL; a taken port is reported, not fatal to ingest.

    A dashboard that would be open beyond loopback without a token raises
    :class:`DashboardAuthError`: the caller refuses to start at all.
    """
    from ground_station.dashboard.server import DashboardAuthError, DashboardError, DashboardServer

    server = DashboardServer.from_config(cfg, base_dir)
    try:
        url = server.start()
    except DashboardAuthError:
        raise
    except DashboardError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None
    gated = " (every request needs the dashboard token)" if server.ctx.token_digest is not None else ""
    print(f"{prog}: dashboard at {url}{gated}", file=sys.stderr, flush=True)
    return server


def dashboard_main(argv: list[str]) -> int:
    import threading


    parser = argparse.ArgumentParser(prog="aerie ground dashboard",
                                     description="Serve the web dashboard on the flight log (no ingest)")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground dashboard", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    from ground_station.dashboard.server import DashboardAuthError

    try:
        server = _start_dashboard(cfg, base_dir, "aerie ground dashboard")
    except DashboardAuthError as exc:
        print(f"aerie ground dashboard: {exc}", file=sys.stderr)
        return 1
    if server is None:
        return 1
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda s, f: done.set())
    signal.signal(signal.SIGTERM, lambda s, f: done.set())
    done.wait(args.duration)
    server.stop()
    return 0


def _watcher(cfg: "GroundConfig", base_dir: "Path") -> "PostFlightWatcher":
    from ground_station.post_flight import PostFlightWatcher
    from ground_station.settings import log_target, resolve

    return PostFlightWatcher(log_target(cfg, base_dir), resolve(base_dir, cfg.post_flight_dir),
                             resolve(base_dir, cfg.post_flight_memory),
                             success_radius_m=cfg.post_flight_success_radius_m)


def analyse_main(argv: list[str]) -> int:

    parser = argparse.ArgumentParser(prog="aerie ground analyse",
                                     description="Write post-flight lesson bundles for ended flights")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground analyse", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    watcher = _watcher(cfg, base_dir)
    if not cfg.database and not watcher.db_path.exists():
        print(f"aerie ground analyse: {watcher.db_path}: no flight log yet", file=sys.stderr)
        return 1
    try:
        written = watcher.poll()
    finally:
        watcher.stop()
    print(json.dumps({"bundles": [str(p) for p in written]}))
    return 0


def export_rrd_main(argv: list[str]) -> int:
    from ground_station.rerun_export import ExportError, FlightNotFound, export_flight
    from ground_station.settings import log_target

    parser = argparse.ArgumentParser(prog="aerie ground export-rrd",
                                     description="Export one flight to a Rerun recording (.rrd) for the Rerun viewer")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("vehicle_id", help="vehicle of the flight (as `aerie ground show` lists it)")
    parser.add_argument("start_seq", type=int, help="seq of the flight's flight_start (its start_seq in `show`)")
    parser.add_argument("--out", required=True, help="the .rrd file to write (open it with `rerun FILE`)")
    args = parser.parse_args(argv)
    loaded = _load_config("aerie ground export-rrd", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    try:
        summary = export_flight(log_target(cfg, base_dir), args.vehicle_id, args.start_seq, args.out)
    except FlightNotFound as exc:
        print(f"aerie ground export-rrd: {exc}", file=sys.stderr)
        return 2
    except ExportError as exc:
        print(f"aerie ground export-rrd: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary.to_dict(), sort_keys=True))
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "sync":
        return sync_main(argv[1:])
    if argv and argv[0] == "migrate":
        return migrate_main(argv[1:])
    if argv and argv[0] == "show":
        return show_main(argv[1:])
    if argv and argv[0] == "dashboard":
        return dashboard_main(argv[1:])
    if argv and argv[0] == "analyse":
        return analyse_main(argv[1:])
    if argv and argv[0] == "export-rrd":
        return export_rrd_main(argv[1:])
    from ground_station.ingest import GroundStation, IngestError
    from ground_station.lesson_courier import LessonCourier
    from common.log_setup import LoggingConfig, configure_logging

    parser = argparse.ArgumentParser(prog="aerie ground", description="Run the ground station")
    parser.add_argument("--config", required=True, help="ground-station YAML file")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    configure_logging(LoggingConfig(level=args.log_level.upper()), stream=sys.stderr)
    loaded = _load_config("aerie ground", args.config)
    if loaded is None:
        return 1
    cfg, base_dir = loaded
    from ground_station.dashboard.server import DashboardAuthError

    try:   # before anything else starts, so a refused dashboard leaves nothing running
        dashboard = _start_dashboard(cfg, base_dir, "aerie ground") if cfg.dashboard_enabled else None
    except DashboardAuthError as exc:
        print(f"aerie ground: {exc}", file=sys.stderr)
        return 1
    station = GroundStation(cfg, base_dir=base_dir)
    watcher = _watcher(cfg, base_dir).start() if cfg.post_flight_enabled else None
    # With leases, each process's courier serves the vehicles its ingest holds.
    serving = (lambda: set(station.links)) if cfg.ingest_lease_s > 0 else None
    courier = LessonCourier(cfg, base_dir, serving=serving).start() if cfg.lesson_delivery_enabled else None

    def _stop(signum: int, frame: object) -> None:
        station.stop()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        counters = station.run(duration_s=args.duration)
    except IngestError as exc:
        print(f"aerie ground: {exc}", file=sys.stderr)
        return 1
    finally:
        if dashboard is not None:
            dashboard.stop()
        if watcher is not None:
            watcher.stop()
        if courier is not None:
            courier.stop()
    summary = {"counters": counters}
    if courier is not None:
        summary["lesson_delivery"] = courier.counters()
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

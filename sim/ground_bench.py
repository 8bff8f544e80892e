"""`aerie bench ground --vehicles 64 --ingest 2 --backend postgresql --json PATH`: the ground under a fleet, one ingest killed.

N simulated vehicles (real telemetry publishers in a few child processes,
sim/ground_bench_fleet.py) fly for the run at ``--rate-hz`` state plus an event
a second; K real ground processes (`python -m ground_station.service`) ingest
them into one flight log. Halfway, the first ground process is killed with -9:
with several processes on PostgreSQL its vehicles are taken over by the others
once their leases run out (``--lease-s``); with one process it is started again
at once and resumes from the cursors in the log. Then every vehicle ends its
flight and the bench waits until each has been acknowledged to its last seq.

Measured from the log itself: messages lost (seqs missing from 1 to each
vehicle's last), flights not closed, takeover time (from the kill until every
vehicle has a message stored after it), messages stored per second over the
run, and publish-to-store latency (the ground's ``received_ns``, taken as its
store transaction starts, minus the envelope's ``t_ns``; one host, one clock):
p50/p99 over all messages, and p99 outside the outage (messages published
between the kill and the takeover wait for the takeover by design).

The PostgreSQL server is a throwaway one from the distribution's binaries
(sim/pg_server.py) with fsync on and ``synchronous_commit=off``, the same
durability as the SQLite log's WAL with ``synchronous=NORMAL``; ``--database URL``
runs against an existing server instead (an empty database).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
_PER_CHILD = 16   # vehicles per publisher process


def _spawn_fleet(n: int, folder: Path, rate_hz: float, duration_s: float, ack_timeout_s: float
                 ) -> tuple[list[subprocess.Popen], dict[str, list[str]]]:
    ids = [f"bench-{i:03d}" for i in range(n)]
    children, endpoints = [], {}
    for k in range(math.ceil(n / _PER_CHILD)):
        spec = {"vehicles": ids[k * _PER_CHILD:(k + 1) * _PER_CHILD], "dir": str(folder / "vehicles"),
                "rate_hz": rate_hz, "duration_s": duration_s, "ack_timeout_s": ack_timeout_s}
        child = subprocess.Popen([sys.executable, "-m", "sim.ground_bench_fleet", json.dumps(spec)], cwd=REPO,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 stderr=open(folder / f"fleet-{k}.log", "ab"))
        children.append(child)
    for child in children:
        line = child.stdout.readline()
        if not line:
            raise RuntimeError(f"a publisher process failed to start (see {folder}/fleet-*.log)")
        endpoints.update(json.loads(line)["endpoints"])
    return children, endpoints


def _ground_yaml(folder: Path, endpoints: dict[str, list[str]], target: str, lease_s: float) -> Path:
    cfg: dict[str, Any] = {
        "vehicles": [{"vehicle_id": v, "pub_endpoint": e[0], "replay_endpoint": e[1]} for v, e in endpoints.items()],
        "curve": False, "dashboard_enabled": False, "post_flight_enabled": False, "lesson_delivery_enabled": False,
        "stats_interval_s": 0.0, "ingest_lease_s": lease_s}
    cfg.update({"database": target} if target.startswith("postgresql://") else {"db_path": target})
    path = folder / "ground.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def _start_ground(cfg_path: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ground_station.service", "--config", str(cfg_path),
                             "--log-level", "WARNING"], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=open(log, "ab"))


def _wait(pred: Any, timeout: float, what: str, children: list[subprocess.Popen] = (),
          logs: list[Path] = ()) -> float:
    """Seconds until ``pred()``; a child that died, or the timeout, raises with the logs' last lines."""
    start = time.monotonic()
    while not pred():
        dead = [c for c in children if c.poll() not in (None, 0)]
        late = time.monotonic() - start > timeout
        if dead or late:
            tails = "".join(f"\n--- {p.name}:\n" + "\n".join(p.read_text(errors="replace").splitlines()[-15:])
                            for p in logs if p.exists())
            why = f"a process died (rc {dead[0].returncode})" if dead else "timed out"
            raise RuntimeError(f"{why} waiting for {what}{tails}")
        time.sleep(0.05)
    return time.monotonic() - start


def _holders(target: str) -> dict[str, str]:
    from ground_station.log_db import open_postgres

    db = open_postgres(target)
    try:
        return dict(db.execute("SELECT vehicle_id, holder FROM vehicle_leases "
                               "WHERE expires_at > EXTRACT(EPOCH FROM clock_timestamp())").fetchall())
    finally:
        db.close()


def _vehicles_stored_since(target: str | Path, t_ns: int) -> int:
    from ground_station.log_db import open_db

    try:
        db = open_db(target, readonly=True)
    except Exception:  # noqa: BLE001 - a file not there yet
        return 0
    try:
        return int(db.execute("SELECT COUNT(DISTINCT vehicle_id) FROM messages WHERE received_ns > ?",
                              (t_ns,)).fetchone()[0])
    finally:
        db.close()


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Set up the flight log (a throwaway server unless --database), fly, measure; the server always stopped."""
    if args.backend != "postgresql":
        return _fly(args, folder, str(folder / "flight_log.sqlite"))
    if args.database:
        from ground_station import migrations
        from ground_station.log_db import open_postgres

        db = open_postgres(args.database)
        try:
            migrations.migrate(db)
        finally:
            db.close()
        return _fly(args, folder, args.database)
    from sim.pg_server import PgCluster

    cluster = PgCluster.start_new(durable=True)
    try:
        return _fly(args, folder, cluster.new_database())
    finally:
        cluster.stop()


def _fly(args: argparse.Namespace, folder: Path, target: str) -> dict[str, Any]:
    import numpy as np

    from ground_station.flight_log import FlightLog

    lease_s = args.lease_s if args.backend == "postgresql" else 0.0
    children, grounds = [], []
    try:
        children, endpoints = _spawn_fleet(args.vehicles, folder, args.rate_hz, args.duration, args.ack_timeout)
        cfg_path = _ground_yaml(folder, endpoints, target, lease_s)
        for k in range(args.ingest):
            grounds.append(_start_ground(cfg_path, folder / f"ground-{k}.log"))
            if lease_s:  # a process's start (imports, its embedder) takes a minute on a saturated machine
                _wait(lambda: len(_holders(target)) == args.vehicles and len(set(_holders(target).values())) == k + 1,
                      240, f"ingest process {k} to hold its share", grounds,
                      [folder / f"ground-{j}.log" for j in range(k + 1)])
        served = {}
        if lease_s:
            holders = _holders(target)
            served = {h: sum(1 for x in holders.values() if x == h) for h in set(holders.values())}
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        t0 = time.monotonic()
        time.sleep(args.duration * args.kill_at)
        victim = grounds[0]
        victim_vehicles = sum(1 for h in _holders(target).values() if f":{victim.pid}:" in h) if lease_s \
            else args.vehicles
        t_kill_ns = time.time_ns()
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        if args.ingest == 1:
            grounds.append(_start_ground(cfg_path, folder / "ground-0-restarted.log"))
        takeover_s = _wait(lambda: _vehicles_stored_since(target, t_kill_ns) == args.vehicles, 120,
                           "every vehicle to be stored again after the kill", children)
        published: dict[str, int] = {}
        acked: dict[str, int] = {}
        for child in children:
            published.update(json.loads(child.stdout.readline())["published"])
        run_s = time.monotonic() - t0
        for child in children:
            acked.update(json.loads(child.stdout.readline())["acked"])
            child.wait(30)
    finally:
        for g in grounds:
            if g.poll() is None:
                g.send_signal(signal.SIGTERM)
        for g in grounds:
            try:
                g.wait(30)
            except subprocess.TimeoutExpired:
                g.kill()
        for child in children:
            if child.poll() is None:
                child.kill()
    with FlightLog.open(target) as fl:
        lost = sum(b - a + 1 for v, last in published.items()
                   for a, b in fl.missing(v, fl.current_stream(v) or "", 1, last, limit=10 ** 6))
        flights = [f for v in published for f in fl.flights(v)]
        rows = fl.db.execute("SELECT received_ns - t_ns, t_ns FROM messages").fetchall()
        server = fl.db.execute("SELECT version()").fetchone()[0] if fl.db.kind == "postgresql" else None
    lat = np.array([r[0] for r in rows], dtype=np.float64) / 1e6
    t_pub = np.array([r[1] for r in rows], dtype=np.int64)
    outage = (t_pub >= t_kill_ns) & (t_pub <= t_kill_ns + int(takeover_s * 1e9))
    return {
        "backend": args.backend, "vehicles": args.vehicles, "ingest_processes": args.ingest,
        "rate_hz": args.rate_hz, "duration_s": args.duration, "lease_s": lease_s or None,
        "vehicles_per_process_before_kill": sorted(served.values()) if served else [args.vehicles],
        "killed_at_s": round(args.duration * args.kill_at, 2), "killed_process_vehicles": victim_vehicles,
        "takeover_s": round(takeover_s, 3),
        "published": sum(published.values()), "stored": len(rows),
        "acknowledged_to_last": sum(1 for v, last in published.items() if acked.get(v) == last),
        "lost": lost, "flights": len(flights), "flights_ended": sum(1 for f in flights if f.status == "ended"),
        "messages_per_s": round(len(rows) / run_s, 1),
        "publish_to_store_ms": {"p50": round(float(np.percentile(lat, 50)), 2),
                                "p99": round(float(np.percentile(lat, 99)), 2),
                                "p99_outside_outage": round(float(np.percentile(lat[~outage], 99)), 2),
                                "max": round(float(lat.max()), 1)},
        "server": server, "cpus": os.cpu_count(), "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie bench ground", description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=64)
    parser.add_argument("--ingest", type=int, default=1, help="ground ingest processes (>1 needs postgresql)")
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--database", default="", help="an existing server's empty database (postgresql://...)")
    parser.add_argument("--rate-hz", type=float, default=20.0, help="state messages per vehicle per second")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of flight")
    parser.add_argument("--kill-at", type=float, default=0.5, help="kill the first ingest at this fraction of it")
    parser.add_argument("--lease-s", type=float, default=2.0, help="ingest_lease_s (postgresql)")
    parser.add_argument("--ack-timeout", type=float, default=120.0)
    parser.add_argument("--json", default=None, help="write the result here")
    parser.add_argument("--workdir", default="", help="keep the run's logs and journals here (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.ingest > 1 and args.backend != "postgresql":
        parser.error("several ingest processes share a PostgreSQL database (--backend postgresql)")
    if not (args.vehicles >= 1 and args.ingest >= 1 and args.rate_hz > 0 and args.duration > 0
            and 0 < args.kill_at < 1):
        parser.error("--vehicles, --ingest, --rate-hz, --duration must be positive and --kill-at within (0, 1)")
    if args.workdir:   # kept: the ground processes' and publishers' logs
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        result = run(args, Path(args.workdir))
    else:
        with tempfile.TemporaryDirectory(prefix="aerie-bench-ground-") as tmp:
            result = run(args, Path(tmp))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0 if result["lost"] == 0 and result["flights_ended"] == result["flights"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Fault: an ingest process killed with -9 while it serves half the fleet (PostgreSQL ground, two processes).

Its leases run out, the other process takes its vehicles over and replays from the
cursors in the database; every vehicle's log ends complete, its flights closed.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from ground_station.flight_log import FlightLog
from ground_station.log_db import open_postgres
from onboard.telemetry.publisher import TelemetryPublisher
from tests.ground_station.pgkit import PgCluster
from tests.telemetry.linkkit import REPO, fly, ground_cfg, python, vehicle_cfg, wait_until, write_ground_yaml

FLEET = ["v1", "v2", "v3", "v4"]


def _start(cfg_path: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([python(), "-m", "ground_station.service", "--config", str(cfg_path),
                             "--log-level", "INFO"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=open(log, "ab"))


def _serving(url: str) -> dict[str, str]:
    db = open_postgres(url)
    try:
        return {v: h for v, h in db.execute("SELECT vehicle_id, holder FROM vehicle_leases WHERE expires_at > "
                                            "EXTRACT(EPOCH FROM clock_timestamp())")}
    finally:
        db.close()


def test_ingest_killed_minus_9_has_its_vehicles_taken_over_and_loses_nothing(tmp_path: Path,
                                                                             pg_cluster: PgCluster) -> None:
    url = pg_cluster.new_database()
    pubs = []
    procs: list[subprocess.Popen] = []
    try:
        for vid in FLEET:
            (tmp_path / vid).mkdir()
            pubs.append(TelemetryPublisher(vehicle_cfg(tmp_path / vid, curve=False), vid).start())
        cfg = ground_cfg(tmp_path, pubs, curve=False, database=url, ingest_lease_s=1.0, dashboard_enabled=False,
                         lesson_delivery_enabled=False)
        cfg_path = write_ground_yaml(tmp_path / "ground.yaml", cfg)
        procs.append(_start(cfg_path, tmp_path / "a.log"))
        assert wait_until(lambda: len(_serving(url)) == 4, 30), (tmp_path / "a.log").read_text()[-2000:]
        procs.append(_start(cfg_path, tmp_path / "b.log"))
        # The second process gets half the fleet once the first hands it on.
        assert wait_until(lambda: len(set(_serving(url).values())) == 2, 30), _serving(url)
        lasts = {p.vehicle_id: fly(p, 100, rate_hz=0, events_every=10) for p in pubs[:2]}
        victim_holder = _serving(url)["v1"]
        victim = next(p for p in procs if f":{p.pid}:" in victim_holder)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        lasts.update({p.vehicle_id: fly(p, 100, rate_hz=0, events_every=10) for p in pubs[2:]})
        more = {p.vehicle_id: fly(p, 50, rate_hz=0, events_every=10) for p in pubs[:2]}   # after the kill
        lasts.update(more)
        for p in pubs:
            assert p.flush(5)
        assert wait_until(lambda: all(p.counters["acked_seq"] == lasts[p.vehicle_id] for p in pubs), 60), \
            ({p.vehicle_id: p.counters["acked_seq"] for p in pubs}, lasts, _serving(url))
        assert victim_holder not in _serving(url).values()
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(15)
        for p in pubs:
            p.close()
    with FlightLog.open(url) as fl:
        for vid, last in lasts.items():
            assert fl.seqs(vid) == list(range(1, last + 1)), vid
            assert all(f.status == "ended" for f in fl.flights(vid)) and fl.flights(vid)

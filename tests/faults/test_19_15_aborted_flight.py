"""Issue 19.15: a vehicle killed mid-flight left its flight "open" at the ground forever, with no
lessons. Now a flight whose vehicle has been silent for `flight_abort_timeout_s` is closed as
`aborted` with the reason, and post-flight reflection still runs on what arrived: the lesson
bundle for sync is written. (A vehicle that starts a new flight or stream closes the old one at
once: tests/faults/test_19_16_reset_vehicle.py.)"""

from __future__ import annotations

import signal
from pathlib import Path

from contract.bundle import read_bundle
from ground_station.flight_log import FlightLog
from ground_station.post_flight import bundle_name
from ground_station.settings import GroundConfig, VehicleLinkConfig
from tests.faults.wirekit import Child, vehicle_child
from tests.telemetry.linkkit import wait_until, write_ground_yaml


def _flights(db: Path) -> list:
    if not db.exists():
        return []
    with FlightLog.open(db) as fl:
        return fl.flights("uav-x")


def test_a_killed_vehicles_flight_is_aborted_and_still_reflected_on(tmp_path: Path) -> None:
    child, pub_ep, replay_ep, _ = vehicle_child(tmp_path / "vehicle", "fly")
    db, out = tmp_path / "fl.sqlite", tmp_path / "post_flight"
    cfg = GroundConfig(db_path=str(db), vehicles=[VehicleLinkConfig(vehicle_id="uav-x", pub_endpoint=pub_ep,
                                                                    replay_endpoint=replay_ep)],
                       curve=False, dashboard_enabled=False, stats_interval_s=0.0, status_interval_s=0.2,
                       post_flight_dir=str(out), post_flight_memory=str(tmp_path / "ground_memory.sqlite"),
                       flight_abort_timeout_s=2.0)
    yaml_path = write_ground_yaml(tmp_path / "ground.yaml", cfg)
    with Child(["-m", "ground_station.service", "--config", str(yaml_path), "--log-level", "WARNING"]) as ground:
        with child:
            # A few agent steps in (one every five messages), then the vehicle dies mid-flight.
            last = 0
            while last < 40:
                last = int(child.read_until("flushed ").split()[1])
            assert wait_until(lambda: len(_flights(db)) == 1 and _count(db) >= last, 60), _flights(db)
            child.kill(signal.SIGKILL)
        assert wait_until(lambda: _flights(db)[0].status == "aborted", 60), _flights(db)
        (flight,) = _flights(db)
        assert "no message from the vehicle" in (flight.end_reason or ""), flight
        assert flight.end_seq is not None and flight.end_seq >= last
        bundle = out / bundle_name("uav-x", flight.start_seq, flight.stream_id)
        assert wait_until(bundle.exists, 120), sorted(p.name for p in out.glob("*")) if out.exists() else "no dir"
        assert ground.alive()
    doc = read_bundle(bundle)
    assert doc["vehicle_id"] == "uav-x" and doc["experiences"], doc
    assert any("find the red door" in str(e) for e in doc["experiences"]), doc["experiences"][0]


def _count(db: Path) -> int:
    with FlightLog.open(db) as fl:
        return fl.count("uav-x")

"""Fleet memory on a PostgreSQL ground: one host's lessons are searchable and delivered from every other host."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.bundle import read_bundle
from contract.records import NAVIGATE_EXPERIENCE, STRATEGIC_PLAN
from ground_station.fleet_memory import FleetMemory
from ground_station.flight_log import FlightLog
from ground_station.post_flight import PostFlightWatcher, bundle_name
from tests.ground_station.pgkit import PgCluster
from tests.ground_station.test_post_flight import STREAM, _store, flight


def test_a_lesson_analysed_on_one_host_is_searched_and_kept_by_another(tmp_path: Path, pg_cluster: PgCluster) -> None:
    from onboard.memory.embedder import MiniLMEmbedder

    url = pg_cluster.new_database()
    with FlightLog.open(url) as fl:
        _store(fl, flight(1), vid="uav-a")
    host_a = PostFlightWatcher(url, tmp_path / "a" / "post_flight", tmp_path / "a" / "memory.sqlite")
    try:
        [path] = host_a.poll()
    finally:
        host_a.stop()
    assert path.name == bundle_name("uav-a", 1, STREAM)
    # Host B (its own folder, its own memory file) analyses nothing: the flight's bundle comes from the database.
    host_b = PostFlightWatcher(url, tmp_path / "b" / "post_flight", tmp_path / "b" / "memory.sqlite")
    try:
        assert host_b.poll() == []
    finally:
        host_b.stop()
    assert (tmp_path / "b" / "post_flight" / path.name).read_bytes() == path.read_bytes()
    mem = FleetMemory.open(url, MiniLMEmbedder.load())
    try:
        assert mem.bundles()[0][0] == path.name
        [lesson] = [e for e in read_bundle(path)["experiences"] if e["collection"] == NAVIGATE_EXPERIENCE]
        [hit] = mem.search(lesson["fields"]["current_state"], NAVIGATE_EXPERIENCE, k=3)
        assert (hit.uid, hit.vehicle_id, hit.fields) == (lesson["uid"], "uav-a", lesson["fields"])
        assert hit.score > 0.99                                   # its own text: cosine 1 up to int8 rounding
        assert mem.search("over block 4", NAVIGATE_EXPERIENCE, vehicle_id="uav-b") == []   # filtered before ranking
        assert [h.collection for h in mem.search("find the kiosk", STRATEGIC_PLAN)] == [STRATEGIC_PLAN]
        assert mem.add_bundle(path) == 0                                                  # idempotent
        with pytest.raises(ValueError, match="unknown collection"):
            mem.search("x", "no_such_memory")
    finally:
        mem.close()

"""A lesson from a flight one ground process analysed reaches a vehicle another process serves, once (PostgreSQL ground)."""

from __future__ import annotations

from pathlib import Path

from contract.bundle import read_bundle
from contract.records import NAVIGATE_EXPERIENCE
from ground_station.flight_log import FlightLog
from ground_station.lesson_courier import LessonCourier
from ground_station.post_flight import PostFlightWatcher
from tests.ground_station.pgkit import PgCluster
from tests.ground_station.test_lesson_courier import embedder, rig  # noqa: F401 - fixtures
from tests.ground_station.test_post_flight import _store, flight


def test_lesson_from_process_a_is_delivered_by_process_b_and_retrieved_on_its_vehicle(
        tmp_path: Path, rig, pg_cluster: PgCluster) -> None:  # noqa: F811 - the imported fixture
    vehicle, ground, _ = rig
    url = pg_cluster.new_database()
    with FlightLog.open(url) as fl:
        _store(fl, flight(1), vid="aerie-1")                 # ingested by process A (it serves aerie-1)
    host_a = PostFlightWatcher(url, tmp_path / "A" / "post_flight", tmp_path / "A" / "memory.sqlite")
    try:
        [bundle] = host_a.poll()
    finally:
        host_a.stop()
    v1, v2 = vehicle("aerie-1").start(), vehicle("aerie-2").start()
    serving_a, serving_b = {"aerie-1"}, {"aerie-2"}

    def courier(host: str, serving: set[str]) -> LessonCourier:
        return LessonCourier(ground([v1.link, v2.link], database=url,
                                    post_flight_dir=str(tmp_path / host / "post_flight")), serving=lambda: serving)

    a, b = courier("A", serving_a), courier("B", serving_b)
    try:
        assert b.run_pass() == 1                             # B's folder had nothing: the bundle came from the database
        assert (v1.count(), v2.count()) == (0, 3)
        assert a.run_pass() == 1 and v1.count() == 3
        serving_a.add("aerie-2")                             # A takes aerie-2 over: the shared ledger says it is settled
        assert a.run_pass() == 0 and b.run_pass() == 0
        assert v2.server.counters["received"] == 1           # once per vehicle across the processes
    finally:
        a.stop()
        b.stop()
    [lesson] = [e for e in read_bundle(bundle)["experiences"] if e["collection"] == NAVIGATE_EXPERIENCE]
    with v2.store() as memory:                               # the vehicle's own retrieval finds it
        [hit] = memory.search(lesson["fields"]["current_state"], NAVIGATE_EXPERIENCE, k=1)
        assert hit.record.current_state == lesson["fields"]["current_state"]

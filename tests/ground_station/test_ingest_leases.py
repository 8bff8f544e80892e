"""Vehicle leases: two ingest processes split the fleet, the survivor of one that died takes it all."""

from __future__ import annotations

from ground_station.leases import LeaseBook
from ground_station.log_db import open_postgres
from tests.ground_station.pgkit import PgCluster

FLEET = ["v1", "v2", "v3", "v4"]


def _expire(url: str, holder: str) -> None:
    """What lease_s of silence does to a holder that died: its heartbeat and leases run out (the server's clock)."""
    db = open_postgres(url)
    try:
        db.execute("UPDATE vehicle_leases SET expires_at = 0 WHERE holder = ?", (holder,))
        db.execute("UPDATE ingest_processes SET seen_at = 0 WHERE holder = ?", (holder,))
    finally:
        db.close()


def test_two_books_split_the_fleet_and_the_survivor_takes_all(pg_cluster: PgCluster) -> None:
    url = pg_cluster.new_database()
    a_db, b_db = open_postgres(url), open_postgres(url)
    try:
        a, b = LeaseBook(a_db, FLEET, 60.0, "A"), LeaseBook(b_db, FLEET, 60.0, "B")
        assert a.turn().claimed == FLEET                 # alone: the whole fleet
        first_b = b.turn()
        assert (first_b.claimed, first_b.excess) == ([], [])   # nothing free yet
        turn = a.turn()                                  # B heartbeats now: A's share is half
        assert turn.excess == ["v3", "v4"] and turn.claimed == []
        for vid in turn.excess:
            a.release(vid)
        assert b.turn().claimed == ["v3", "v4"]
        assert (a.held, b.held) == ({"v1", "v2"}, {"v3", "v4"})
        assert a.turn().claimed == [] and b.turn().claimed == []   # stable
        _expire(url, "A")                                # A was killed: nothing renewed for lease_s
        assert b.turn().claimed == ["v1", "v2"] and b.held == set(FLEET)
        assert a.turn().lost == ["v1", "v2"] and a.held == set()   # A, if only stalled, learns it lost them
        b.close()
        assert b_db.execute("SELECT COUNT(*) FROM vehicle_leases WHERE expires_at > "
                            "EXTRACT(EPOCH FROM clock_timestamp())").fetchone()[0] == 0
    finally:
        a_db.close()
        b_db.close()


def test_an_ingest_whose_server_connection_dies_stops_with_a_clear_error(pg_cluster: PgCluster) -> None:
    import threading

    from ground_station.ingest import GroundStation, IngestError
    from ground_station.settings import GroundConfig, VehicleLinkConfig

    url = pg_cluster.new_database()
    cfg = GroundConfig(database=url, ingest_lease_s=0.3, curve=False, stats_interval_s=0.0,
                       vehicles=[VehicleLinkConfig("v1", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2")])
    station = GroundStation(cfg)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            station.run(duration_s=120.0)
        except BaseException as exc:  # noqa: BLE001 - inspected below
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert station.started.wait(30)
    admin = open_postgres(url)
    try:
        assert admin.execute("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                             "current_database() AND pid <> pg_backend_pid()").fetchone()[0] >= 1
    finally:
        admin.close()
    thread.join(60)
    assert not thread.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], IngestError) and "flight log failed" in str(errors[0])

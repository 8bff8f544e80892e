"""Issue 19.16 (and 19.15's new-flight case): a vehicle whose data folder was reset starts its seqs
at 1 again. Before, the ground took the new flight's messages for duplicates of the old one (0
stored, 170 errors) and showed the old flight as live. Now every journal has a random stream id in
every envelope: the reset vehicle is a new stream, stored in full, and the flight it left open
(killed mid-flight) is closed as aborted with the reason. This test also found that the ground's
acks did not name a stream: one meant for the old journal (upto 13) pruned the new journal's first
messages before they were replayed; acks now carry the stream and the vehicle refuses others."""

from __future__ import annotations

import socket
from pathlib import Path

from ground_station.flight_log import FlightLog
from ground_station.settings import GroundConfig, VehicleLinkConfig
from tests.faults.wirekit import vehicle_child
from tests.telemetry.linkkit import GroundThread, wait_until


def _free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def _stored(db: Path, stream: str) -> list[int]:
    with FlightLog.open(db) as fl:
        return fl.seqs("uav-x", stream)


def test_a_reset_vehicle_is_a_new_stream_and_its_old_flight_is_aborted(tmp_path: Path) -> None:
    pub_ep, replay_ep = _free_endpoint(), _free_endpoint()
    db = tmp_path / "fl.sqlite"
    link = VehicleLinkConfig(vehicle_id="uav-x", pub_endpoint=pub_ep, replay_endpoint=replay_ep)
    gcfg = GroundConfig(db_path=str(db), vehicles=[link], curve=False, dashboard_enabled=False,
                        post_flight_enabled=False, stats_interval_s=0.0, status_interval_s=0.2,
                        replay_timeout_s=0.5, flight_abort_timeout_s=0.0)
    with GroundThread(gcfg, duration_s=300.0) as ground:
        first_data = tmp_path / "vehicle-1"
        child, *_ = vehicle_child(first_data, "fly", pub_ep, replay_ep)
        with child:
            last_1 = int(child.read_until("flushed ").split()[1])
            assert wait_until(lambda: ground.station.cursors().get("uav-x", 0) >= last_1, 60)
        # Killed mid-flight (no flight_end); the data folder is gone: a fresh one, seqs from 1.
        with FlightLog.open(db) as fl:
            (old,) = fl.flights("uav-x")
        assert old.status == "open"
        child, *_ = vehicle_child(tmp_path / "vehicle-2", "fly", pub_ep, replay_ep)
        with child:
            last_2 = int(child.read_until("flushed ").split()[1])
            while last_2 < last_1 + 10:   # the new stream outgrows the old one: no seq is "new" by luck
                last_2 = int(child.read_until("flushed ").split()[1])

            def new_stream_complete() -> bool:
                with FlightLog.open(db) as fl:
                    flights = fl.flights("uav-x")
                return (len(flights) == 2 and flights[1].stream_id != old.stream_id
                        and _stored(db, flights[1].stream_id)[:last_2] == list(range(1, last_2 + 1)))

            if not wait_until(new_stream_complete, 60):
                with FlightLog.open(db) as fl:
                    flights = fl.flights("uav-x")
                    cur = fl.current_stream("uav-x")
                    seqs = {f.stream_id: fl.seqs("uav-x", f.stream_id)[:20] for f in flights}
                    seqs[f"current {cur}"] = (fl.seqs("uav-x", cur)[:20], fl.cursor("uav-x", cur))
                raise AssertionError(f"the reset vehicle's flight was not stored in full (last {last_2}): "
                                     f"{flights} {seqs} {ground.station.counters()}")
        with FlightLog.open(db) as fl:
            old_now, new = fl.flights("uav-x")
            assert fl.current_stream("uav-x") == new.stream_id
        # Nothing of the first flight was lost or overwritten by the second.
        assert _stored(db, old.stream_id)[:last_1] == list(range(1, last_1 + 1))
        assert old_now.status == "aborted" and "new stream" in (old_now.end_reason or ""), old_now
        assert new.status == "open" and new.start_seq == 1
        counters = ground.station.links["uav-x"].counters
    assert ground.error is None
    assert counters["flights_aborted"] == 1 and counters["stream_changed"] == 1, counters
    # No reject, error or seq conflict of any kind: only the counters of a healthy link (a dead
    # vehicle's sockets are dropped and re-created, and gaps are replayed).
    healthy = {"received_live", "received_replay", "stored", "replay_requests", "replay_empty", "sub_dropped",
               "dealer_dropped", "sub_reopened", "dealer_reopened", "stream_changed", "flights_aborted",
               "handshake_failed",   # the killed vehicle's half-made connection
               "ack_refused"}   # an ack of the old stream that reached the new journal, which kept its messages
    assert {k for k, v in counters.items() if v} <= healthy, counters
    with FlightLog.open(db) as fl:
        assert counters["stored"] == fl.count("uav-x")

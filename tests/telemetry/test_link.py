"""A flight's messages arrive in order and complete, over real CurveZMQ sockets on loopback."""

from __future__ import annotations

from contract.messages import FlightStart

import json
from pathlib import Path

from ground_station.flight_log import FlightLog
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import GroundThread, fly, ground_cfg, log_place, make_keys, vehicle_cfg, wait_until


def test_flight_arrives_in_order_and_complete_with_curve(tmp_path: Path, capsys, log_target: str | Path) -> None:
    keys = make_keys(tmp_path)
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=True, keys=keys), "uav-1") as pub:
        gcfg = ground_cfg(tmp_path, [pub], curve=True, keys=keys, **log_place(log_target))
        with GroundThread(gcfg) as ground:
            # Wait for the subscription to be live so the live path (not only replay) is exercised.
            assert wait_until(lambda: ground.station.cursors().get("uav-1", -1) == 0, 5)
            pub.event("mission_start", {"task": "t"})
            assert wait_until(lambda: ground.station.cursors()["uav-1"] >= 1, 5)
            last = fly(pub, 300, rate_hz=500)
            assert pub.flush(5)
            assert wait_until(lambda: ground.station.cursors()["uav-1"] == last, 10)
            assert wait_until(lambda: pub.counters["acked_seq"] == last, 5)
            counters = ground.station.counters()["uav-1"]
        assert counters.get("received_live", 0) > 0.8 * last
    with FlightLog.open(log_target) as fl:
        assert fl.seqs("uav-1") == list(range(1, last + 1))
        flights = fl.flights("uav-1")
        assert len(flights) == 1 and flights[0].end_seq == last and flights[0].info == FlightStart(mission="test").body()
        msgs = list(fl.flight_messages(flights[0]))
        assert [m["seq"] for m in msgs] == list(range(2, last + 1))
        states = [m["payload"]["i"] for m in msgs if m["type"] == "state"]
        assert states == list(range(300))
        assert fl.events("uav-1")[0][1] == "mission_start"
    # `aerie ground show` summarises the log.
    from ground_station import service
    from tests.telemetry.linkkit import write_ground_yaml

    capsys.readouterr()
    assert service.main(["show", "--config", str(write_ground_yaml(tmp_path / "g.yaml", gcfg))]) == 0
    shown = json.loads(capsys.readouterr().out)["vehicles"]["uav-1"]
    assert (shown["contiguous_seq"], shown["messages"], shown["unrecoverable"]) == (last, last, 0)
    assert shown["flights"][0]["end_seq"] == last
    # Everything acknowledged was pruned from the journal.
    from onboard.telemetry.journal import Journal
    with Journal.open(tmp_path / "journal.sqlite") as j:
        assert j.pending_count() == 0 and j.last_seq() == last


def test_one_ground_station_logs_two_vehicles(tmp_path: Path, log_target: str | Path) -> None:
    keys = make_keys(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with TelemetryPublisher(vehicle_cfg(tmp_path / "a", curve=True, keys=keys), "uav-a") as a, \
            TelemetryPublisher(vehicle_cfg(tmp_path / "b", curve=True, keys=keys), "uav-b") as b:
        gcfg = ground_cfg(tmp_path, [a, b], curve=True, keys=keys, **log_place(log_target))
        with GroundThread(gcfg) as ground:
            last_a = fly(a, 200, rate_hz=0)
            last_b = fly(b, 120, rate_hz=0)
            assert wait_until(lambda: ground.station.cursors() == {"uav-a": last_a, "uav-b": last_b}, 15)
    with FlightLog.open(log_target) as fl:
        assert fl.seqs("uav-a") == list(range(1, last_a + 1))
        assert fl.seqs("uav-b") == list(range(1, last_b + 1))
        assert {f.vehicle_id for f in fl.flights()} == {"uav-a", "uav-b"}

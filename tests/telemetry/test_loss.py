"""With 10 % of PUB frames dropped (and the flight's last frame always), the log ends complete."""

from __future__ import annotations

from pathlib import Path

from ground_station.flight_log import FlightLog
from onboard.telemetry.faults import RandomDrop
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import GroundThread, fly, ground_cfg, log_place, make_keys, vehicle_cfg, wait_until


def test_ten_percent_drop_is_replayed_to_a_complete_log(tmp_path: Path, log_target: str | Path) -> None:
    keys = make_keys(tmp_path)
    drop = RandomDrop(0.10, seed=7, always_drop_types=frozenset({"flight_end"}))
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=True, keys=keys), "uav-7", send_filter=drop) as pub:
        gcfg = ground_cfg(tmp_path, [pub], curve=True, keys=keys, **log_place(log_target))
        with GroundThread(gcfg) as ground:
            assert wait_until(lambda: "uav-7" in ground.station.cursors(), 5)
            last = fly(pub, 1500, rate_hz=1000, events_every=100)
            assert pub.flush(5)
            assert wait_until(lambda: ground.station.cursors()["uav-7"] == last, 20), ground.station.counters()
            counters = ground.station.counters()["uav-7"]
    assert drop.dropped > 0.05 * last
    assert counters["received_replay"] >= drop.dropped  # every dropped frame came by replay
    assert counters["replay_requests"] >= 1
    with FlightLog.open(log_target) as fl:
        assert fl.seqs("uav-7") == list(range(1, last + 1))
        [flight] = fl.flights("uav-7")
        assert flight.end_seq == last  # the dropped tail (flight_end) came by replay
        assert [m["payload"]["i"] for m in fl.flight_messages(flight) if m["type"] == "state"] == list(range(1500))


def test_a_publisher_closing_right_after_its_last_message_lets_the_ground_fetch_it(tmp_path: Path) -> None:
    # flight_end never makes it onto the wire, and the vehicle shuts down at once: close() waits
    # for the listening ground station to replay and acknowledge it (telemetry.close_ack_wait_s).
    drop = RandomDrop(0.0, seed=1, always_drop_types=frozenset({"flight_end"}))
    pub = TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav-8", send_filter=drop).start()
    gcfg = ground_cfg(tmp_path, [pub], curve=False)
    with GroundThread(gcfg) as ground:
        assert wait_until(lambda: "uav-8" in ground.station.cursors(), 5)
        last = fly(pub, 50, rate_hz=500, events_every=0)
        pub.close()
        assert drop.dropped == 1 and pub.counters["acked_seq"] == last
        assert ground.station.cursors()["uav-8"] == last
    with FlightLog.open(gcfg.db_path) as fl:
        [flight] = fl.flights("uav-8")
        assert flight.end_seq == last


def test_without_a_listening_ground_close_does_not_wait(tmp_path: Path) -> None:
    """With nobody asking for status, close must not sit out ``close_ack_wait_s`` (here 10 minutes):
    it returns well inside a deadline a tenth of that, however slow the machine."""
    import threading

    pub = TelemetryPublisher(vehicle_cfg(tmp_path, curve=False, close_ack_wait_s=600.0), "uav-9").start()
    fly(pub, 20, rate_hz=500, events_every=0)
    closer = threading.Thread(target=pub.close, daemon=True)
    closer.start()
    closer.join(60.0)
    assert not closer.is_alive(), "close waited for acks nobody will send"

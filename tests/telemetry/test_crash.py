"""Processes killed with SIGKILL: the vehicle keeps its journal, the ground station loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ground_station.flight_log import FlightLog
from contract.envelope import decode
from onboard.telemetry.journal import Journal
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import (REPO, GroundThread, ground_cfg, log_place, make_keys, python, vehicle_cfg,
                                     wait_until, write_ground_yaml)


def _publish_for(pub: TelemetryPublisher, seconds: float, rate_hz: float, start_i: int) -> int:
    period, i = 1.0 / rate_hz, start_i
    next_t = time.monotonic()
    end = next_t + seconds
    while time.monotonic() < end:
        pub.publish("state", {"i": i})
        i += 1
        next_t += period
        time.sleep(max(0.0, next_t - time.monotonic()))
    return i


def _start_ground(cfg_path: Path, log_path: Path) -> subprocess.Popen:
    return subprocess.Popen([python(), "-m", "ground_station.service", "--config", str(cfg_path)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=open(log_path, "ab"))


def _ground_killed_mid_flight(tmp_path: Path, outage_s: float, target: str | Path) -> None:
    keys = make_keys(tmp_path)
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=True, keys=keys), "uav-g") as pub:
        cfg_path = write_ground_yaml(tmp_path / "ground.yaml", ground_cfg(tmp_path, [pub], curve=True, keys=keys,
                                                                          **log_place(target)))
        ground = _start_ground(cfg_path, tmp_path / "ground.log")
        try:
            pub.flight_start({"mission": "kill-ground"})
            assert wait_until(lambda: pub.counters["acked_seq"] >= 1, 20), "ground station never acknowledged"
            i = _publish_for(pub, 1.0, 200, 0)
            last_seq_before_kill = pub.publish("state", {"i": i})
            i += 1
            ground.send_signal(signal.SIGKILL)
            ground.wait(10)
            i = _publish_for(pub, outage_s, 200, i)   # nobody listening: the journal keeps it all
            # acks the ground sent just before it died may still arrive, but none can cover a message
            # published after the kill (no waiting for in-flight acks to settle: an order, not a time)
            assert pub.counters["acked_seq"] <= last_seq_before_kill
            ground = _start_ground(cfg_path, tmp_path / "ground.log")
            i = _publish_for(pub, 1.0, 200, i)
            last = pub.flight_end({"reason": "landed"})
            assert pub.flush(5)
            assert wait_until(lambda: pub.counters["acked_seq"] == last, 30 + outage_s), \
                (tmp_path / "ground.log").read_text()[-2000:]
        finally:
            ground.send_signal(signal.SIGTERM)
            try:
                ground.wait(10)
            except subprocess.TimeoutExpired:
                ground.kill()
                ground.wait(5)
    with FlightLog.open(target) as fl:
        assert fl.seqs("uav-g") == list(range(1, last + 1))
        [flight] = fl.flights("uav-g")
        assert (flight.start_seq, flight.end_seq) == (1, last)
        assert [m["payload"]["i"] for m in fl.messages("uav-g", msg_type="state")] == list(range(i))
    with Journal.open(tmp_path / "journal.sqlite") as j:
        assert j.pending_count() == 0 and j.acked_seq() == last


def test_ground_station_killed_mid_flight_loses_nothing(tmp_path: Path, log_target: str | Path) -> None:
    _ground_killed_mid_flight(tmp_path, outage_s=1.5, target=log_target)


@pytest.mark.slow
def test_ground_station_down_for_60_s_loses_nothing(tmp_path: Path) -> None:
    _ground_killed_mid_flight(tmp_path, outage_s=60.0, target=tmp_path / "flight_log.sqlite")


def test_vehicle_killed_keeps_its_journal_and_continues_the_seq(tmp_path: Path) -> None:
    """Runs WITHOUT CurveZMQ on purpose: the subject is the journal, the link is covered elsewhere."""
    journal_path = tmp_path / "journal.sqlite"
    child = subprocess.Popen([python(), "-m", "tests.telemetry.crash_publisher", str(journal_path)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flushed = 0
    try:
        assert child.stdout.readline().startswith("start 1")
        for line in child.stdout:
            flushed = int(line.split()[1])
            if flushed >= 600:
                break
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL and flushed >= 600
    with Journal.open(journal_path) as j:
        last = j.last_seq()
        assert last >= flushed
        frames = j.frames(1, last, max_count=10 ** 6, max_bytes=1 << 30)
    assert [s for s, _ in frames] == list(range(1, last + 1))
    assert all(decode(f, max_bytes=1 << 20).seq == s for s, f in frames)
    # A restarted vehicle continues after the journal's last seq, and a ground station gets all of it.
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav-crash") as pub:
        assert pub.last_seq == last
        end = pub.flight_end({"reason": "after restart"})
        assert end == last + 1
        with GroundThread(ground_cfg(tmp_path, [pub], curve=False)):
            assert wait_until(lambda: pub.counters["acked_seq"] == end, 20)
    with FlightLog.open(tmp_path / "flight_log.sqlite") as fl:
        assert fl.seqs("uav-crash") == list(range(1, end + 1))
        [flight] = fl.flights("uav-crash")
        assert (flight.start_seq, flight.end_seq) == (1, end)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ground_station_rides_through_a_vehicle_restart(tmp_path: Path) -> None:
    keys = make_keys(tmp_path)
    cfg = vehicle_cfg(tmp_path, curve=True, keys=keys, pub_endpoint=f"tcp://127.0.0.1:{_free_port()}",
                      replay_endpoint=f"tcp://127.0.0.1:{_free_port()}")
    pub = TelemetryPublisher(cfg, "uav-r").start()
    try:
        gcfg = ground_cfg(tmp_path, [pub], curve=True, keys=keys)
        with GroundThread(gcfg) as ground:
            pub.flight_start({"mission": "restart"})
            i = _publish_for(pub, 0.5, 200, 0)
            pub.close()                                  # the onboard process goes away ...
            pub = TelemetryPublisher(cfg, "uav-r").start()  # ... and comes back on the same ports
            i = _publish_for(pub, 0.5, 200, i)
            last = pub.flight_end({"reason": "landed"})
            assert wait_until(lambda: ground.station.cursors()["uav-r"] == last, 20), ground.station.counters()
    finally:
        pub.close()
    with FlightLog.open(gcfg.db_path) as fl:
        assert fl.seqs("uav-r") == list(range(1, last + 1))
        assert [m["payload"]["i"] for m in fl.messages("uav-r", msg_type="state")] == list(range(i))

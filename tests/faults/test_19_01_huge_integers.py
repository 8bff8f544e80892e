"""Issue 19.1: an envelope whose seq or t_ns is 2^64-1 once stopped `aerie ground` (OverflowError
in SQLite). Now decode range-checks every integer: the frame is counted `out_of_range`, the
process lives and stores what comes next."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import msgpack
import zmq

from contract.envelope import ENVELOPE_VERSION, encode
from ground_station.settings import GroundConfig, VehicleLinkConfig
from tests.faults.wirekit import STREAM, Child, hostile_vehicle, stored_seqs
from tests.telemetry.linkkit import wait_until, write_ground_yaml


def test_seq_and_time_of_2_64_are_refused_and_aerie_ground_lives(tmp_path: Path) -> None:
    ctx = zmq.Context()
    pub, router = hostile_vehicle(ctx)
    try:
        link = VehicleLinkConfig(vehicle_id="uav-h", pub_endpoint=pub.getsockopt_string(zmq.LAST_ENDPOINT),
                                 replay_endpoint=router.getsockopt_string(zmq.LAST_ENDPOINT))
        db = tmp_path / "fl.sqlite"
        cfg = GroundConfig(db_path=str(db), vehicles=[link], curve=False, dashboard_enabled=False,
                           post_flight_enabled=False, stats_interval_s=0.0)
        yaml_path = write_ground_yaml(tmp_path / "ground.yaml", cfg)
        with Child(["-m", "ground_station.service", "--config", str(yaml_path), "--log-level", "WARNING"]) as ground:
            first = encode("uav-h", 1, "flight_start", {}, stream=STREAM)
            assert wait_until(lambda: pub.send(first) or 1 in stored_seqs(db), 30), "ground never subscribed"
            hostile = [dict(seq=2 ** 64 - 1, t_ns=1), dict(seq=2, t_ns=2 ** 64 - 1), dict(seq=2 ** 63, t_ns=1)]
            for over in hostile:
                doc = {"v": ENVELOPE_VERSION, "type": "state", "vehicle_id": "uav-h", "stream": STREAM,
                       "payload": {}, **over}
                pub.send(msgpack.packb(doc))
            pub.send(encode("uav-h", 2, "state", {"after": True}, stream=STREAM))
            assert wait_until(lambda: stored_seqs(db) == [1, 2], 30), stored_seqs(db)
            assert ground.alive()
            ground.proc.send_signal(signal.SIGTERM)
            out, _ = ground.proc.communicate(timeout=30)
            assert ground.proc.returncode == 0
        counters = json.loads(out)["counters"]["uav-h"]
        assert counters["out_of_range"] == len(hostile)
        assert counters["stored"] == 2
    finally:
        pub.close(0)
        router.close(0)
        ctx.term()

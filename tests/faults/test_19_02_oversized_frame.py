"""Issue 19.2: one frame above `hard_frame_limit_bytes` made ZeroMQ drop the SUB connection for
good (a protocol error is never reconnected), and live telemetry ended for the rest of the flight.
Now the ground sees the drop on the socket's monitor, counts it and re-creates the socket: live
frames come back, and replay fills what passed meanwhile, the big frame included."""

from __future__ import annotations

import time
from pathlib import Path

from ground_station.flight_log import FlightLog
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import GroundThread, ground_cfg, vehicle_cfg, wait_until


def test_live_frames_come_back_after_an_oversized_frame(tmp_path: Path) -> None:
    vcfg = vehicle_cfg(tmp_path, curve=False, max_message_bytes=1 << 20)
    with TelemetryPublisher(vcfg, "uav-o") as pub:
        gcfg = ground_cfg(tmp_path, [pub], curve=False, hard_frame_limit_bytes=64 * 1024)
        with GroundThread(gcfg) as ground:
            counters = lambda: ground.station.counters()["uav-o"]   # noqa: E731
            pub.flight_start({"mission": "big map"})
            i = 0
            while not counters().get("received_live"):       # PUB/SUB joins late
                assert i < 3000, "subscription never joined"
                pub.publish("state", {"i": i})
                i += 1
                time.sleep(0.01)
            pub.publish("map", {"png": b"\x89PNG" + bytes(200_000)})   # 3x the hard limit
            assert wait_until(lambda: counters().get("sub_dropped", 0) >= 1, 30), counters()
            dropped_at, live_before = time.monotonic(), counters().get("received_live", 0)
            back_at = None
            for j in range(3000):                              # a 50 Hz stream until live frames return
                pub.publish("state", {"i": i + j})
                if counters().get("received_live", 0) > live_before:
                    back_at = time.monotonic()
                    break
                time.sleep(0.02)
            assert back_at is not None, counters()
            print(f"live again {back_at - dropped_at:.3f} s after the drop was seen")
            last = pub.flight_end({"reason": "landed"})
            assert wait_until(lambda: ground.station.cursors()["uav-o"] == last, 30), counters()
            assert counters()["sub_reopened"] >= 1
    with FlightLog.open(gcfg.db_path) as fl:
        assert fl.seqs("uav-o") == list(range(1, last + 1))   # nothing accepted is lost
        assert [m["type"] for m in fl.messages("uav-o", msg_type="map")] == ["map"]

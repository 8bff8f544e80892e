"""The simulated vehicles of `aerie bench ground`: one child process flying a group of telemetry publishers.

Each vehicle is a real :class:`TelemetryPublisher` (journal, PUB and replay
sockets) on loopback. The process prints its endpoints as one JSON line, waits
for ``go`` on stdin, flies every vehicle for the run (flight_start, state at the
rate asked, an event every second, flight_end), prints the last seq of each, then
waits until the ground has acknowledged them all (or the timeout) and prints what
was acknowledged. Several such processes share the fleet, so publishing is not
bound by one interpreter.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _say(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def main(argv: list[str]) -> int:
    from onboard.telemetry.publisher import TelemetryPublisher
    from onboard.telemetry.settings import TelemetryConfig

    spec = json.loads(argv[0])
    folder = Path(spec["dir"])
    pubs = []
    for vid in spec["vehicles"]:
        (folder / vid).mkdir(parents=True, exist_ok=True)
        cfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                              journal_path=str(folder / vid / "journal.sqlite"), state_rate_hz=0.0,
                              map_min_interval_s=0.0, curve=False, close_ack_wait_s=0.0)
        pubs.append(TelemetryPublisher(cfg, vid).start())
    try:
        _say({"endpoints": {p.vehicle_id: [p.pub_endpoint, p.replay_endpoint] for p in pubs}})
        if sys.stdin.readline().strip() != "go":
            return 1
        for p in pubs:
            p.flight_start({"mission": "bench-ground"})
        period = 1.0 / spec["rate_hz"]
        start = next_t = time.monotonic()
        ticks = 0
        while next_t - start < spec["duration_s"]:
            for p in pubs:
                p.publish("state", {"i": ticks, "lat": 60.17 + ticks * 1e-6, "lon": 24.94, "rel_alt_m": 20.0})
                if ticks % max(1, round(spec["rate_hz"])) == 0:
                    p.event("mode_change", {"i": ticks})   # a registered kind; the ground indexes every event
            ticks += 1
            next_t += period
            time.sleep(max(0.0, next_t - time.monotonic()))
        last = {p.vehicle_id: p.flight_end({"reason": "landed"}) for p in pubs}
        _say({"published": last, "late_ticks": ticks - int(spec["duration_s"] * spec["rate_hz"])})
        deadline = time.monotonic() + spec["ack_timeout_s"]
        while time.monotonic() < deadline and any(p.counters["acked_seq"] < last[p.vehicle_id] for p in pubs):
            time.sleep(0.05)
        _say({"acked": {p.vehicle_id: p.counters["acked_seq"] for p in pubs}})
    finally:
        for p in pubs:
            p.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

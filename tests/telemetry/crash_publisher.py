"""Child process for the crash test: publishes flat out and reports flushed seqs until killed.

Runs without CurveZMQ: the test is about the journal surviving SIGKILL, not the link.
"""

from __future__ import annotations

import sys
import time

from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig


def main(journal: str) -> None:
    cfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                          journal_path=journal, state_rate_hz=0.0, curve=False)
    pub = TelemetryPublisher(cfg, "uav-crash").start()
    print(f"start {pub.last_seq + 1}", flush=True)
    pub.flight_start({"mission": "crash"})
    deadline = time.monotonic() + 60.0  # bounded: the parent kills it long before
    i = 0
    while time.monotonic() < deadline:
        pub.publish("state", {"i": i, "pad": b"x" * 200})
        i += 1
        if i % 50 == 0:
            pub.flush(5.0)
            print(f"flushed {pub.last_seq}", flush=True)
    pub.close()


if __name__ == "__main__":
    main(sys.argv[1])

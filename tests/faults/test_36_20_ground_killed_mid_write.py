"""Fault: a ground process killed with -9 inside a flight-log write transaction, on each engine.

The child stores one batch (committed), then opens the next write transaction,
inserts into it, takes the stream's lock and says so; it is killed there. Nothing
committed is lost, nothing of the open transaction is visible, and the next process
writes the same stream at once: the dead writer's lock (SQLite's file lock,
PostgreSQL's advisory lock) went with it, and it stores the interrupted messages
again as new.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from contract.envelope import decode, encode
from ground_station.flight_log import FlightLog
from tests.telemetry.linkkit import REPO

STREAM = "dead0000beef0001"

_CHILD = textwrap.dedent("""
    import sys, time
    from contract.envelope import decode, encode
    from ground_station.flight_log import FlightLog

    def env(seq):
        frame = encode("uav-k", seq, "state", {"i": seq}, t_ns=seq, stream="dead0000beef0001")
        return decode(frame, max_bytes=1 << 20), frame

    fl = FlightLog.open(sys.argv[1])
    fl.store([env(s) for s in range(1, 101)])
    fl.advance("uav-k", "dead0000beef0001")
    db = fl.db
    db.begin()
    db.lock_stream("uav-k", "dead0000beef0001")
    for seq in range(101, 151):
        e, f = env(seq)
        db.execute("INSERT INTO messages (vehicle_id, stream_id, seq, type, t_ns, received_ns, frame) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", (e.vehicle_id, e.stream, e.seq, e.type, e.t_ns, 0, f))
    print("in transaction", flush=True)
    time.sleep(600)
""")


def _env(seq: int):
    frame = encode("uav-k", seq, "state", {"i": seq}, t_ns=seq, stream=STREAM)
    return decode(frame, max_bytes=1 << 20), frame


def test_killed_inside_a_write_loses_no_commit_and_blocks_no_one(log_target: str | Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(log_target)], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.strip() == "in transaction", child.stderr.read()[-2000:] if child.poll() is not None else line
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        child.stdout.close()
        child.stderr.close()
    with FlightLog.open(log_target) as fl:
        assert fl.seqs("uav-k") == list(range(1, 101))            # the commit, whole; the open transaction, none
        assert fl.cursor("uav-k", STREAM)[0] == 100               # the restart resumes from here
        assert fl.missing("uav-k", STREAM, 101, 150) == [(101, 150)]
        assert fl.store([_env(s) for s in range(101, 151)]) == 50  # not blocked by the dead writer's lock
        assert fl.advance("uav-k", STREAM) == 150
        assert fl.seqs("uav-k") == list(range(1, 151))

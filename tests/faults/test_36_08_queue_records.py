"""Issue 36.8: a mission file deleted while it flew ended the service; a name queued twice lost a record.

After landing `queue.finish` moved the file with `Path.replace`, which raised
FileNotFoundError when the operator had deleted it: the service exited and
the outcome was never written. And `done/<name>` with its outcome was
overwritten by the next flight of a file with the same name. Now records are
kept as `<flight id>[-n]_<name>` (never an existing name), a file gone at the
end still gets its outcome (saying so), and a new file queued under the name
meanwhile stays queued and is flown next. The loop and the queue are the real
`_standby` and `MissionQueue` (tests/faults/standbykit.py fakes the flight).
"""

from __future__ import annotations

import asyncio
import json

from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from tests.faults.standbykit import outcome, run_standby, standby_config


def _queue(queue: MissionQueue, file_name: str, mission_name: str) -> None:
    staged = queue.dir / f".{file_name}"
    staged.write_text(f"instruction: find the cafe\nname: {mission_name}\n")
    staged.rename(queue.dir / file_name)


def test_file_deleted_mid_flight_still_gets_its_outcome_and_a_requeued_name_flies_next(tmp_path, monkeypatch):
    cfg = standby_config(tmp_path / "vehicle")
    queue = MissionQueue(tmp_path / "vehicle" / "missions")
    _queue(queue, "a.yaml", "first")

    async def first(mission, stop: asyncio.Event):
        (queue.dir / "a.yaml").unlink()      # the operator deletes the file while it flies ...
        _queue(queue, "a.yaml", "second")    # ... and queues another under the same name
        return outcome(mission, "20261128T110000Z")

    async def second(mission, stop: asyncio.Event):
        stop.set()
        return outcome(mission, "20261128T110500Z")

    rc, flown = run_standby(monkeypatch, cfg, [first, second])
    assert rc == 0 and flown == ["first", "second"]  # the service lived, and the re-queued file flew
    kept = queue.records("a.yaml", ok=True)
    assert [p.name for p in kept] == ["20261128T110000Z_a.yaml", "20261128T110500Z_a.yaml"]
    one, two = (json.loads(outcome_path(p).read_text()) for p in kept)
    assert one["mission"] == "first" and "was gone" in one["mission_file"]
    assert not kept[0].exists()  # nothing else was kept under the first flight's name
    assert two["mission"] == "second" and "mission_file" not in two
    assert "name: second" in kept[1].read_text()
    assert queue.pending() == []


def test_same_name_and_same_flight_id_twice_keeps_both(tmp_path):
    queue = MissionQueue(tmp_path / "missions")
    records = []
    for n in range(3):
        _queue(queue, "a.yaml", f"m{n}")
        path, mission = queue.next()
        records.append(queue.finish(path, {"n": n}, ok=True, flight_id="20261128T110000Z"))
    assert [p.name for p in records] == ["20261128T110000Z_a.yaml", "20261128T110000Z-2_a.yaml",
                                         "20261128T110000Z-3_a.yaml"]
    assert queue.records("a.yaml", ok=True) == records
    assert [json.loads(outcome_path(p).read_text())["n"] for p in records] == [0, 1, 2]


def test_refused_files_of_one_name_keep_every_reason(tmp_path):
    queue = MissionQueue(tmp_path / "missions")
    for reason in ("speed", "altitude"):
        (queue.dir / "bad.yaml").write_text(f"instruction: x\n{reason}: 1\n")
        assert queue.next() is None
    reasons = [json.loads(outcome_path(p).read_text())["error"] for p in queue.records("bad.yaml", ok=False)]
    assert len(reasons) == 2 and "speed" in reasons[0] and "altitude" in reasons[1]

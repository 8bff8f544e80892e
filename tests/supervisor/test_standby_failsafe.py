"""Issue 18.2: the standby service flies again after a battery failsafe, once the battery is swapped.

`aerie fly --standby` keeps one bridge for every mission. A real standby
process flies mission 1 on the simulated PX4; in the air its battery drops
below the return level, the bridge's battery failsafe ends the mission and
the vehicle lands. While the battery is still low a queued mission is refused
at once ("still holds"); after the swap (a fresh pack, on the ground and
disarmed) the failsafe is cleared (logged, ``failsafe_cleared``) and mission
2 flies.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

import msgpack
import yaml

from common.log_setup import LoggingConfig
from onboard.config import AerieConfig
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world, write_config

ROOT = Path(__file__).resolve().parents[2]


def _until(pred, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _bridge_battery(journal: Path) -> float:
    """The battery percent in the newest `state` message the vehicle published (its bridge's reading)."""
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        row = db.execute("SELECT frame FROM messages WHERE type = 'state' ORDER BY seq DESC LIMIT 1").fetchone()
    return float(msgpack.unpackb(row[0], raw=False)["payload"]["battery_percent"]) if row else float("nan")


def _queue(queue: Path, name: str, instruction: str, step_limit: int) -> Callable[[], str]:
    staged = queue / f".{name}.yaml"
    staged.write_text(yaml.safe_dump({"instruction": instruction, "name": name, "step_limit": step_limit}))
    staged.rename(queue / f"{name}.yaml")
    return lambda: _outcome_text(queue, f"{name}.yaml")


def _outcome_text(queue: Path, file_name: str) -> str:
    """The outcome kept in done/ for queued file ``file_name``, "" until there is one."""
    kept = MissionQueue(queue).records(file_name, ok=True)
    return outcome_path(kept[-1]).read_text() if kept and outcome_path(kept[-1]).exists() else ""


def test_standby_flies_again_after_battery_failsafe_and_swap(tmp_path):
    rig = start_rig("t019", world=world())
    try:
        cfg = rig.config(AerieConfig(), tmp_path / "vehicle")
        cfg = replace(cfg, logging=LoggingConfig(level="INFO", file=str(tmp_path / "log.jsonl")),
                      supervisor=replace(cfg.supervisor, use_memory=False, status_socket=False))
        config_file = write_config(cfg, tmp_path / "config.yaml")
        out = (tmp_path / "supervisor.out").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--standby"],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
        queue = tmp_path / "vehicle" / "missions"
        instruction = rig.task.task.description
        try:
            _until(lambda: queue.exists(), 60, "the mission queue")
            # Mission 1: in the air, the battery falls below the return level (20 %).
            done1 = _queue(queue, "1-drained", instruction, 20)
            _until(lambda: (t := rig.vehicle.truth())["armed"] and t["rel_alt"] > 10, 120, "mission 1 airborne")
            rig.vehicle.set_battery(18.0)
            outcome1 = json.loads(_until(done1, 240, "mission 1's end"))
            assert outcome1["reason"] == "aborted: bridge failsafe: battery_return", outcome1
            assert outcome1["landed"] in ("landed", "on ground"), outcome1

            # Still on the old pack: the next mission is refused at once, nothing flies.
            done_low = _queue(queue, "2-still-low", instruction, 1)
            outcome_low = json.loads(_until(done_low, 120, "refusal"))
            assert outcome_low["reason"].startswith("aborted: bridge failsafe battery_return still holds"), outcome_low
            assert "battery" in outcome_low["reason"] and outcome_low["steps"] == 0
            assert not rig.vehicle.truth()["armed"]

            # The swap: a fresh pack on the ground; mission 3 flies.
            rig.vehicle.set_battery(100.0)
            journal = tmp_path / "vehicle" / cfg.telemetry.journal_path
            _until(lambda: _bridge_battery(journal) > 99, 60, "the bridge to read the fresh pack")
            done2 = _queue(queue, "3-fresh", instruction, 1)
            outcome2 = json.loads(_until(done2, 240, "mission 3"))
            assert outcome2["reason"] == "step_limit" and outcome2["steps"] == 1, outcome2
            assert outcome2["landed"] == "landed", outcome2
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            out.close()
        text = (tmp_path / "supervisor.out").read_text()
        print(text)
        assert proc.returncode == 0, text
        logs = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines() if line.strip()]
        cleared = [r for r in logs if r.get("event") == "failsafe_cleared" or "failsafe battery_return cleared"
                   in r.get("msg", "")]
        assert cleared, "the clearing was not logged"
    finally:
        rig.close()

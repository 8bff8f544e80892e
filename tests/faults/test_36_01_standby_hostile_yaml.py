"""Issue 36.1: a mission file nested 5,000 deep, or mixing key types, crash-looped the standby service.

`MissionQueue.next()` caught only ConfigError/ValueError; a RecursionError
(5,000 nested lists or mappings) or a TypeError (``1: a`` beside ``typo: b``,
which sorting the unknown keys tripped on) reached `_standby`, the service
exited and, the file still queued, did so again on every restart, so the
valid mission behind it never flew. Now the one YAML parser refuses depth
and non-string keys as ConfigErrors, and the queue refuses any file whose
taking raises anything at all. The standby loop here is the real one over a
real queue folder, with the flight faked (tests/faults/standbykit.py), and
then the real service process on the simulated vehicle with the hostile
files of rows 1, 2 and 11 queued before a mission, its watchdog watched.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from common.typed_config import ConfigError
from onboard.config import AerieConfig
from onboard.supervisor.mission import load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from sim.flight_rig import SIM_PARAMS
from sim.vehicle import SimVehicleProcess
from sim.vehicle.process import free_ports
from tests.faults.standbykit import outcome, run_standby, standby_config
from tests.faults.test_36_02_yaml_bombs import MISSION_BOMB
from tests.supervisor.flightkit import write_config

ROOT = Path(__file__).resolve().parents[2]

HOSTILE = {
    "1-deep-lists.yaml": "instruction: find it\ngeofence: " + "[" * 5000 + "]" * 5000 + "\n",
    "2-deep-maps.yaml": "instruction: find it\ngeofence: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    "3-mixed-keys.yaml": "1: a\ntypo: b\ninstruction: find it\n",
    "4-bool-key.yaml": "instruction: find it\nyes: 1\n",
    "5-not-utf8.yaml": b"instruction: \xff\xfe find it\n",
    "6-bad-date.yaml": "instruction: 2026-13-45\n",
}
REASONS = {"1-deep-lists.yaml": "nested deeper", "2-deep-maps.yaml": "nested deeper",
           "3-mixed-keys.yaml": "not a string", "4-bool-key.yaml": "not a string",
           "5-not-utf8.yaml": "not UTF-8", "6-bad-date.yaml": "not valid YAML"}


def _write(queue: MissionQueue) -> None:
    for name, text in HOSTILE.items():
        (queue.dir / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    (queue.dir / "9-good.yaml").write_text("instruction: find the cafe\nname: good\nstep_limit: 3\n")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_file_is_a_config_error(tmp_path, name):
    f = tmp_path / name
    text = HOSTILE[name]
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError, match=REASONS[name]) as err:
        load_mission(f)
    assert len(str(err.value)) < 1024


def test_standby_refuses_each_hostile_file_and_flies_the_valid_one_behind_them(tmp_path, monkeypatch):
    cfg = standby_config(tmp_path / "vehicle")
    queue = MissionQueue(tmp_path / "vehicle" / "missions")
    _write(queue)

    async def good(mission, stop: asyncio.Event):
        stop.set()
        return outcome(mission, "20261128T110000Z")

    rc, flown = run_standby(monkeypatch, cfg, [good])
    assert rc == 0 and flown == ["good"]  # the service went on to the valid mission and stopped only on stop
    assert queue.pending() == []
    for name, reason in REASONS.items():
        [kept] = queue.records(name, ok=False)
        text = outcome_path(kept).read_text()
        assert reason in json.loads(text)["error"], (name, text)
        assert len(text) < 1024 and kept.exists()
    [done] = queue.records("9-good.yaml", ok=True)
    assert json.loads(outcome_path(done).read_text())["reason"] == "arrived"


def test_any_exception_while_taking_a_file_refuses_that_file_only(tmp_path, monkeypatch):
    """Whatever the parser (or a later check) raises, not only the errors it is known to raise today."""
    cfg = standby_config(tmp_path / "vehicle")
    queue = MissionQueue(tmp_path / "vehicle" / "missions")
    (queue.dir / "1-odd.yaml").write_text("instruction: find it\nname: odd\n")
    (queue.dir / "2-good.yaml").write_text("instruction: find the cafe\nname: good\n")
    real = load_mission

    def load(path):
        if path.name == "1-odd.yaml":
            raise KeyError("an error of a kind nobody listed")
        return real(path)

    monkeypatch.setattr("onboard.supervisor.mission_queue.load_mission", load)

    async def good(mission, stop: asyncio.Event):
        stop.set()
        return outcome(mission, "20261128T110000Z")

    rc, flown = run_standby(monkeypatch, cfg, [good])
    assert rc == 0 and flown == ["good"]
    [kept] = queue.records("1-odd.yaml", ok=False)
    assert "KeyError" in json.loads(outcome_path(kept).read_text())["error"]


def test_standby_process_refuses_hostile_files_keeps_its_watchdog_fed_and_stops_on_sigterm(tmp_path):
    """The real service on the simulated vehicle: rows 1, 2, 11 and 15 queued together.

    No flight is needed to show the service lives: the valid mission's world feed never answers, so its
    flight ends in an exception before take-off, which the queue records with the flight's outcome.
    systemd's part is played by a real notify socket, as in tests/supervisor/test_standby.py.
    """
    notes = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notes.bind(str(tmp_path / "notify.sock"))
    notes.settimeout(0.2)
    received: list[tuple[float, str]] = []
    done = threading.Event()

    def listen() -> None:
        while not done.is_set():
            try:
                received.append((time.monotonic(), notes.recv(4096).decode()))
            except socket.timeout:
                pass

    def until(pred, what: str, timeout_s: float = 60.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if pred():
                return
            if proc.poll() is not None:
                raise AssertionError(f"the service exited ({proc.returncode}) waiting for {what}:\n"
                                     + (tmp_path / "standby.out").read_text())
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    vehicle = SimVehicleProcess(home=(60.17, 24.94, 10.0), seed=0, params=dict(SIM_PARAMS), prearm_delay_s=0.5).start()
    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    try:
        base = AerieConfig()
        [dead] = free_ports(1)
        cfg = replace(base, data_dir=str(tmp_path / "vehicle"), link=replace(base.link, url=vehicle.mavsdk_url),
                      telemetry=replace(base.telemetry, enabled=False),
                      supervisor=replace(base.supervisor, use_memory=False, status_socket=False, mission_poll_s=0.05,
                                         world_endpoint=f"tcp://127.0.0.1:{dead}", world_timeout_s=0.2))
        config_file = write_config(cfg, tmp_path / "config.yaml")
        env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify.sock"), WATCHDOG_USEC="1000000")
        with (tmp_path / "standby.out").open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--standby"],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            until(lambda: any(m == "READY=1" for _, m in received), "READY=1")
            ready = next(t for t, m in received if m == "READY=1")
            queue = MissionQueue(tmp_path / "vehicle" / "missions")
            secret = tmp_path / "secret.yaml"
            secret.write_text("api_token: hunter2-do-not-echo\n")
            staged = {**{k: v for k, v in HOSTILE.items() if k in ("1-deep-lists.yaml", "3-mixed-keys.yaml")},
                      "4-laughs.yaml": MISSION_BOMB, "9-good.yaml": "instruction: find the cafe\nname: good\n"}
            for name, text in staged.items():
                (queue.dir / f".{name}").write_text(text)
            with (queue.dir / ".5-huge.yaml").open("wb") as fh:
                fh.truncate(100 * 2**20)
            (queue.dir / "6-link.yaml").symlink_to(secret)
            for name in [*staged, "5-huge.yaml"]:
                (queue.dir / f".{name}").rename(queue.dir / name)
            names = ["1-deep-lists.yaml", "3-mixed-keys.yaml", "4-laughs.yaml", "5-huge.yaml", "6-link.yaml",
                     "9-good.yaml"]
            until(lambda: all(queue.records(n, ok=False) for n in names), "every file's record", 90.0)
            refused_at = time.monotonic()
            # A few watchdog periods past the refusals, so the gaps below span them.
            until(lambda: sum(m == "WATCHDOG=1" and t > refused_at for t, m in received) >= 3, "the watchdog")
            assert proc.poll() is None  # refused them all, and still running
            watched_to = time.monotonic()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        log = (tmp_path / "standby.out").read_text()
        assert proc.returncode == 0, log
    finally:
        done.set()
        listener.join(5)
        notes.close()
        vehicle.stop()
    records = {n: json.loads(outcome_path(queue.records(n, ok=False)[0]).read_text()) for n in names}
    assert "nested deeper" in records["1-deep-lists.yaml"]["error"]
    assert "not a string" in records["3-mixed-keys.yaml"]["error"]
    assert "expands to more than" in records["4-laughs.yaml"]["error"]
    assert "larger than" in records["5-huge.yaml"]["error"]
    assert "symbolic link" in records["6-link.yaml"]["error"] and "hunter2" not in json.dumps(records)
    good = records["9-good.yaml"]  # ended in an exception: the flight's outcome is still the record
    assert good["mission"] == "good" and good["error"].startswith("WorldLinkError") and good["landed"] == "on ground"
    assert all(os.path.getsize(outcome_path(queue.records(n, ok=False)[0])) < 4096 for n in names)
    beats = [ready] + [t for t, m in received if m == "WATCHDOG=1" and ready <= t <= watched_to]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    print(f"watchdog: {len(beats) - 1} beats from READY past the last refusal, largest gap {max(gaps):.2f} s")
    assert max(gaps) < 5.0  # half of the unit's WatchdogSec=10: systemd never steps in

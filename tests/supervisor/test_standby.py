"""`aerie fly --standby`, the service: systemd's notify protocol, the status socket, missions from files, SIGTERM.

systemd itself is not here, so the test plays its part with a real Unix
datagram socket in NOTIFY_SOCKET and WATCHDOG_USEC set, as systemd would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from onboard.config import AerieConfig
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from onboard.status import STATUS_SOCKET_NAME, read_supervisor
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


def test_standby_service_notifies_reports_flies_queued_missions_and_stops(tmp_path):
    rig = start_rig("t019", world=world())
    notify_path = tmp_path / "notify.sock"
    notes = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notes.bind(str(notify_path))
    notes.settimeout(0.2)
    received: list[str] = []

    def drain() -> list[str]:
        while True:
            try:
                received.append(notes.recv(4096).decode())
            except (socket.timeout, BlockingIOError):
                return received

    try:
        cfg = rig.config(AerieConfig(), tmp_path / "vehicle")
        config_file = write_config(cfg, tmp_path / "config.yaml")
        env = dict(os.environ, NOTIFY_SOCKET=str(notify_path), WATCHDOG_USEC="1000000")
        log = (tmp_path / "supervisor.out").open("w")  # a file, not a pipe nobody drains while it flies
        proc = subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--standby"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            _until(lambda: "READY=1" in drain(), 60, "READY=1")
            checks = {c.name: c for c in read_supervisor(tmp_path / "vehicle" / STATUS_SOCKET_NAME)}
            assert all(checks[n].ok for n in ("bridge (live)", "models (live)", "memory (live)")), checks

            queue = tmp_path / "vehicle" / "missions"
            (queue / "0-broken.yaml").write_text("instruction: find it\nspeed: 99\n")  # unknown key
            # Words that name no landmark: refused before arming (issue 34), and the next mission flies.
            (queue / "0b-unread.yaml").write_text("instruction: take some pictures of the harbour please\n"
                                                  "name: unread\n")
            staged = queue / ".1-short.yaml"
            staged.write_text(yaml.safe_dump({"instruction": rig.task.task.description, "name": "short",
                                              "step_limit": 1}))
            staged.rename(queue / "1-short.yaml")
            records = MissionQueue(queue)
            done = _until(lambda: drain() and records.records("1-short.yaml", ok=True)
                          and outcome_path(records.records("1-short.yaml", ok=True)[0]).exists()
                          and outcome_path(records.records("1-short.yaml", ok=True)[0]), 150, "the queued mission")
            outcome = json.loads(done.read_text())
            assert outcome["reason"] == "step_limit" and outcome["steps"] == 1 and outcome["landed"] == "landed"
            failed = json.loads(outcome_path(records.records("0-broken.yaml", ok=False)[0]).read_text())
            assert "speed" in failed["error"]
            unread = json.loads(outcome_path(records.records("0b-unread.yaml", ok=False)[0]).read_text())
            assert unread["reason"].startswith("refused: instruction not understood") and unread["steps"] == 0
            assert unread["refused_before_arming"] and unread["landed"] == "on ground", unread
            assert "relative to a landmark" in unread["reason"] and unread["understood"].startswith("understood:")
            assert received.count("WATCHDOG=1") >= 3  # fed all along, through the flight
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            log.close()
        out = (tmp_path / "supervisor.out").read_text()
        print(out)
        assert proc.returncode == 0, out
        assert "STOPPING=1" in drain()
        assert not (tmp_path / "vehicle" / STATUS_SOCKET_NAME).exists()
    finally:
        notes.close()
        rig.close()

"""Issue 36, "must show": the standby service with the hostile inputs of rows 1-12 before one valid mission.

The real service (`aerie fly --standby`, its own process, memory and telemetry on) on the
simulated vehicle and the real world feed; systemd's part played by a real Unix datagram
socket in NOTIFY_SOCKET with WATCHDOG_USEC=1 s (a notification every 0.5 s, fine enough to
see a loop blocked for a second). Each input is the shape that row's fault was found with,
sent the way it reaches a standby vehicle:

* into the mission queue: 1a 5,000-deep lists, 1b mixed key types, 2a billion laughs,
  2b a 100 MB file (sparse on disk, refused unread), 7 a zero geofence and 7b a negative
  step budget (the mission's numbers; the config's zeros stop the start, row 7's own test),
  8a one file name queued twice, 10 a zip bomb (a 256 MiB map member deflated) dropped as a
  mission, 11 a symbolic link to a secret, and 8b the valid mission's own file deleted while
  it flies;
* at its memory-sync socket: 3 a bundle of 65 lessons whose 65th is invalid, 9 a lesson with
  a 50 MB reflection note, 12 900 junk requests;
* at the world feed the mission then needs: 6 multipart junk.

Rows 4 and 5 are the fleet channel's (a fleet member's flood and far findings), which a
vehicle flying alone does not open: their own tests cover them. Judged: the valid mission
flies and lands with its outcome kept, every hostile file is in failed/ with its reason, each
sync input is answered with a refusal, and the service never exits until SIGTERM (rc 0). The
largest gap between watchdog notifications is measured and printed (and written to the JSON
named by AERIE_STANDBY_TWELVE_JSON); it is asserted only against the unit's WatchdogSec, 10 s,
which a loop blocked as in row 2 (13.9 s) exceeds — the issue's 2 s is the measured figure's.
"""

from __future__ import annotations

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

import msgpack
import pytest
import yaml
import zmq

from contract.bundle import write_bundle
from contract.memory_sync import SyncRefusal
from contract.memory_sync import answers as sync_answers_channel
from contract.world_feed import REPLIES, FeedError
from ground_station.memory_sync import SyncRefused, push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.config import AerieConfig
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from sim.flight_rig import start_rig
from tests.faults.test_36_01_standby_hostile_yaml import HOSTILE
from tests.faults.test_36_02_yaml_bombs import MISSION_BOMB
from tests.faults.test_36_03_bundle_whole import _item
from tests.faults.test_36_06_world_feed_multipart import JUNK as WORLD_JUNK
from tests.faults.test_36_09_lesson_text import _bundle
from tests.faults.test_36_10_map_nan_and_bomb import _bomb
from tests.supervisor.flightkit import world, write_config

ROOT = Path(__file__).resolve().parents[2]
WATCHDOG_SEC = 10.0          # deploy/aerie.service.in
GUARD_S = 240.0              # a hang guard, not a timing claim

# Queue file -> what its refusal must say.
QUEUED = {
    "01a-deep-lists.yaml": ("nested deeper", HOSTILE["1-deep-lists.yaml"]),
    "01b-mixed-keys.yaml": ("not a string", HOSTILE["3-mixed-keys.yaml"]),
    "02a-laughs.yaml": ("expands to more than", MISSION_BOMB),
    "07a-zero-geofence.yaml": ("max_distance_from_home_m",
                               "instruction: find the cafe\ngeofence:\n  max_distance_from_home_m: 0\n"),
    "07b-negative-steps.yaml": ("step_limit", "instruction: find the cafe\nstep_limit: -1\n"),
    "08-same-name.yaml": ("speed", "instruction: find the cafe\nspeed: 99\n"),
}
LARGE = {"02b-huge.yaml": "larger than", "10-zip-bomb.json": "larger than"}
LINK = "11-link.yaml"
GOOD = "99-good.yaml"


class Watchdog:
    """Every notification the service sends, with the time it arrived."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.got: list[tuple[float, str]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._done.is_set():
            try:
                self.got.append((time.monotonic(), self.sock.recv(4096).decode()))
            except socket.timeout:
                pass

    def first(self, message: str) -> float | None:
        return next((t for t, m in list(self.got) if m == message), None)

    def gaps(self, start: float, end: float) -> list[float]:
        beats = [start] + [t for t, m in list(self.got) if m == "WATCHDOG=1" and start < t <= end]
        return [b - a for a, b in zip(beats, beats[1:])]

    def close(self) -> None:
        self._done.set()
        self._thread.join(5)
        self.sock.close()


def _ask_all(endpoint: str, requests: list[list[bytes]]) -> list[bytes]:
    """Send each multipart request on a raw DEALER and read its answer's frame (every one must be answered)."""
    ctx = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.linger = 0
    answers = []
    try:
        dealer.connect(endpoint)
        for parts in requests:
            dealer.send_multipart(parts)
            assert dealer.poll(30_000), f"no answer to {parts[:2]!r} at {endpoint}"
            answers.append(dealer.recv_multipart()[-1])
    finally:
        dealer.close(0)
        ctx.term()
    return answers


def _stage(queue: MissionQueue, files: dict[str, bytes]) -> None:
    """Write each under a dot name, then rename them all into place (as an operator's tool would)."""
    for name, data in files.items():
        (queue.dir / f".{name}").write_bytes(data)
    for name in files:
        (queue.dir / f".{name}").rename(queue.dir / name)


def _rss_peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def test_standby_takes_the_hostile_inputs_of_rows_1_to_12_then_flies_and_lands_the_valid_mission(tmp_path: Path) -> None:
    rig = start_rig("t019", world=world())
    dog = Watchdog(tmp_path / "notify.sock")
    base = AerieConfig()
    cfg = rig.config(replace(base, supervisor=replace(base.supervisor, mission_poll_s=0.2)), tmp_path / "vehicle")
    config_file = write_config(cfg, tmp_path / "config.yaml")
    out_file = tmp_path / "standby.out"
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify.sock"), WATCHDOG_USEC="1000000")
    proc = None

    def until(pred, what: str):
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            value = pred()
            if value:
                return value
            if proc.poll() is not None:   # the service must never end on its own
                raise AssertionError(f"the service exited ({proc.returncode}) waiting for {what}:\n"
                                     + out_file.read_text()[-4000:])
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n" + out_file.read_text()[-4000:])

    sync_answers: dict[str, str] = {}
    try:
        with out_file.open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--standby"],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        ready = until(lambda: dog.first("READY=1"), "READY=1")
        queue = MissionQueue(tmp_path / "vehicle" / "missions")
        secret = tmp_path / "secret.yaml"
        secret.write_text("api_token: hunter2-do-not-echo\n")

        # Round one: every queue input at once, then the socket inputs while the queue refuses them.
        _stage(queue, {n: text.encode() for n, (_, text) in QUEUED.items()}
               | {"10-zip-bomb.json": _bomb(256 << 20)})
        with (queue.dir / ".02b-huge.yaml").open("wb") as fh:
            fh.truncate(100 * 2**20)
        (queue.dir / ".02b-huge.yaml").rename(queue.dir / "02b-huge.yaml")
        (queue.dir / LINK).symlink_to(secret)

        link = VehicleLinkConfig(vehicle_id=cfg.vehicle_id, sync_endpoint=cfg.telemetry.sync_endpoint)
        gcfg = GroundConfig(curve=False, sync_timeout_s=120.0, sync_attempts=1)
        bad65 = tmp_path / "bad65.msgpack"
        write_bundle(bad65, [_item(i, "success") for i in range(64)] + [_item(64, "maybe")], vehicle_id="ground",
                     embedding_model="x")
        for row, bundle in (("3", bad65), ("9", _bundle(tmp_path / "note50mb.msgpack", "x" * 50_000_000))):
            with pytest.raises(SyncRefused) as refused:
                push_bundle(bundle, link, gcfg)
            sync_answers[row] = str(refused.value)
            bundle.unlink()
        junk = [[b"", b"\xc1 not msgpack"], [b"no delimiter"], [b"", msgpack.packb({"op": "hello"})]]
        answers = _ask_all(cfg.telemetry.sync_endpoint, [junk[i % 3] for i in range(900)])
        assert all(isinstance(sync_answers_channel(1 << 20).unpack(a), SyncRefusal) for a in answers)
        answers = _ask_all(cfg.supervisor.world_endpoint, WORLD_JUNK)
        assert all(isinstance(r := REPLIES.unpack(a), FeedError) and r.error for a in answers)

        first_round = [*QUEUED, *LARGE, LINK]
        until(lambda: all(queue.records(n, ok=False) for n in first_round), "every hostile file refused")
        # Round two: the same name again, and the valid mission behind it.
        _stage(queue, {"08-same-name.yaml": QUEUED["08-same-name.yaml"][1].encode(),
                       GOOD: yaml.safe_dump({"instruction": rig.task.task.description, "name": "good",
                                             "step_limit": 2}).encode()})
        until(lambda: not rig.vehicle.truth()["on_ground"], "the valid mission's take-off")
        (queue.dir / GOOD).unlink()  # 8b: the operator deletes its file while it flies
        until(lambda: queue.records(GOOD, ok=True) and outcome_path(queue.records(GOOD, ok=True)[0]).exists(),
              "the valid mission's outcome")
        landed_at = time.monotonic()
        until(lambda: sum(m == "WATCHDOG=1" and t > landed_at for t, m in list(dog.got)) >= 3, "the watchdog after")
        assert proc.poll() is None
        watched_to = time.monotonic()
        rss_peak_kb = _rss_peak_kb(proc.pid)
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        dog.close()
        rig.close()
    log = out_file.read_text()
    assert proc.returncode == 0, log[-4000:]

    good = json.loads(outcome_path(queue.records(GOOD, ok=True)[0]).read_text())
    assert good["mission"] == "good" and good["landed"] == "landed" and good["steps"] >= 1, good
    assert good["reason"] in ("arrived", "step_limit") and "was gone" in good["mission_file"], good
    reasons = {n: r for n, (r, _) in QUEUED.items()} | LARGE | {LINK: "symbolic link"}
    refused = {n: [json.loads(outcome_path(p).read_text()) for p in queue.records(n, ok=False)] for n in reasons}
    for name, reason in reasons.items():
        assert refused[name] and all(reason in r["error"] for r in refused[name]), (name, refused[name])
    assert len(refused["08-same-name.yaml"]) == 2  # queued twice: two records, neither overwritten
    assert "hunter2" not in json.dumps(refused)
    assert queue.pending() == []
    assert "experience #64 is malformed" in sync_answers["3"], sync_answers
    assert "more than 16384" in sync_answers["9"] and len(sync_answers["9"]) < 1000, sync_answers
    assert (tmp_path / "vehicle" / "incoming_bundles" / "refused").is_dir()

    intake = dog.gaps(ready, landed_at)
    whole = dog.gaps(ready, watched_to)
    figures = {"what": "aerie fly --standby: 14 hostile inputs (rows 1-3 and 6-12) then one valid mission, t019, "
                       "2 steps; WATCHDOG_USEC=1000000 (a notification every 0.5 s)",
               "watchdog_notifications": len(whole), "watchdog_gap_max_s": round(max(whole), 3),
               "watchdog_gap_p50_s": round(sorted(whole)[len(whole) // 2], 3),
               "watchdog_gap_max_until_landed_s": round(max(intake), 3),
               "seconds_ready_to_landed": round(landed_at - ready, 1), "service_rss_peak_mb": round(rss_peak_kb / 1024),
               "valid_mission": {k: good[k] for k in ("reason", "steps", "landed", "seconds")},
               "refused_files": sorted(reasons) + ["08-same-name.yaml (second)"], "cpu_count": os.cpu_count(),
               "load_avg_1m": round(os.getloadavg()[0], 2)}
    print(json.dumps(figures, indent=1))
    if os.environ.get("AERIE_STANDBY_TWELVE_JSON"):
        path = Path(os.environ["AERIE_STANDBY_TWELVE_JSON"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(figures, indent=1) + "\n")
    assert max(whole) < WATCHDOG_SEC, figures  # systemd would have killed a loop blocked this long

"""Issue 19, item 11: a missing model manifest must not let `aerie fly` fly blind and silent.

(a) Configured for perception (a camera, a detector every step) with
``inference.manifest`` naming a file that is not there: `aerie fly` refuses
to start, says why naming the manifest, exits non-zero, and no command ever
reaches the vehicle (so it is never armed).

(b) Configured without perception (no camera): it starts and flies, and says
that perception is off in its start-up line, in `aerie status` (the status
socket) and as a telemetry ``perception`` event.

Real processes throughout: the simulated vehicle, the world server, `aerie fly`.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace

from onboard.status import STATUS_SOCKET_NAME, read_supervisor
from sim.flight_rig import start_rig
from tests.faults.flykit import fly_config, start_fly, stop_process
from tests.supervisor.flightkit import world
from tests.supervisor.test_faults import journal_messages

DEADLINE_S = 300.0


def _commands_received(rig) -> int:
    return int(rig.vehicle.stats()["stats"]["rx_by_name"].get("COMMAND_LONG", 0))


def test_perception_asked_for_with_a_missing_manifest_refuses_to_start(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, camera="world", detect_every_steps=1, status_socket=False)
        missing = tmp_path / "models" / "inference.manifest"
        cfg = replace(cfg, inference=replace(cfg.inference, manifest=str(missing)))
        commands_before = _commands_received(rig)
        proc = start_fly(rig, cfg, tmp_path)
        try:
            rc = proc.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            raise AssertionError("aerie fly did not refuse: " + (tmp_path / "fly.log").read_text()[-3000:])
        log = (tmp_path / "fly.log").read_text(errors="replace")
        assert rc != 0, log
        assert "PerceptionUnavailable" in log and "inference.manifest" in log and str(missing) in log, log
        assert "Traceback" not in log, "a refusal is a clear message, not a stack"
        truth = rig.vehicle.truth()
        assert not truth["armed"] and truth["on_ground"], truth
        assert _commands_received(rig) == commands_before, "the refused supervisor sent the vehicle commands"
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()


def test_without_perception_it_flies_and_says_perception_is_off(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, camera="")
        proc = start_fly(rig, cfg, tmp_path, step_limit=1)  # take-off and one move say enough
        sock = tmp_path / "vehicle" / STATUS_SOCKET_NAME
        models = None
        deadline = time.monotonic() + DEADLINE_S
        while models is None and proc.poll() is None:
            assert time.monotonic() < deadline, "the status socket never reported the models"
            if sock.exists():
                checks = {c.name: c for c in read_supervisor(sock)}
                if "models (live)" in checks and checks["models (live)"].detail != "not reported":
                    models = checks["models (live)"]
            time.sleep(0.2)
        assert models is not None, (tmp_path / "fly.log").read_text(errors="replace")[-3000:]
        assert "perception off" in models.detail, models

        rc = proc.wait(DEADLINE_S)
        log = (tmp_path / "fly.log").read_text(errors="replace")
        assert rc == 3 and "step_limit" in log and "vehicle landed" in log, log  # 3: not arrived, landed
        lines = log.splitlines()
        said_at = [i for i, line in enumerate(lines) if line.startswith("perception off: ")]
        took_off = [i for i, line in enumerate(lines) if line.startswith("taking off")]
        assert said_at and took_off and said_at[0] < took_off[0], log[:3000]  # said at start, before take-off

        events = [m["payload"] for m in journal_messages(cfg) if m["type"] == "event"]
        said = [e for e in events if e["kind"] == "perception"]
        assert len(said) == 1, said
        assert said[0]["detail"]["enabled"] is False and "perception off" in said[0]["detail"]["note"], said
        assert not rig.vehicle.truth()["armed"]
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()

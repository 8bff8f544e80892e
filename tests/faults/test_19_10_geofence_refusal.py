"""Issue 19.10: a geofence refusal is an event the agent plans around, never a traceback.

A real `aerie fly` process flies a Helsinki task on the simulated PX4 with a
mission geofence far tighter than the way to the goal. Every waypoint the
envelope refuses is published as a ``command_refused`` event and taken off
the agent's options; the mission ends cleanly with a result (the vehicle
landed, the outcome written, exit status 3 = "ended without arrival, vehicle
down"), not with an exception out of the supervisor.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import yaml

from common.log_setup import LoggingConfig
from onboard.config import AerieConfig
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world, write_config

ROOT = Path(__file__).resolve().parents[2]
FENCE_M = 30.0


def test_mission_with_goal_outside_a_tight_fence_ends_cleanly(tmp_path):
    rig = start_rig("t019", world=world())
    try:
        base = AerieConfig()
        cfg = rig.config(base, tmp_path / "vehicle")
        cfg = replace(cfg, logging=LoggingConfig(level="INFO", file=str(tmp_path / "log.jsonl")),
                      supervisor=replace(cfg.supervisor, use_memory=False, status_socket=False))
        config_file = write_config(cfg, tmp_path / "config.yaml")
        mission = tmp_path / "mission.yaml"
        mission.write_text(yaml.safe_dump({"instruction": rig.task.task.description, "name": "fenced",
                                           "step_limit": 6,
                                           "geofence": {"max_distance_from_home_m": FENCE_M, "action": "refuse"}}))
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(config_file),
                               "--mission", str(mission), "--json", str(tmp_path / "outcome.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=280)
        out = proc.stdout + proc.stderr
        print(out)
        assert proc.returncode == 3, out  # ended without arrival, vehicle down: a normal end
        assert "Traceback" not in out and "mission failed" not in out
        outcome = json.loads((tmp_path / "outcome.json").read_text())
        assert outcome["landed"] == "landed", outcome
        assert outcome["reason"].startswith("refused") or outcome["reason"] == "step_limit", outcome
        log_lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines() if line.strip()]
        refused = [r for r in log_lines if "event command_refused" in r.get("msg", r.get("message", ""))]
        assert refused, "no command_refused event was published"
        truth = rig.vehicle.truth()
        assert not truth["armed"], truth
        north, east = truth["ned"][0], truth["ned"][1]
        assert math.hypot(north, east) <= FENCE_M + 5.0, truth  # it never left the fence
    finally:
        rig.close()

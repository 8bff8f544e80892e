"""Issue 36.15: a mission that ended in an exception left no `--json` outcome file.

`aerie fly` printed "mission failed" and exited 1 without writing the file
its caller waits for. Now the supervisor keeps the flight's outcome when the
flight raises (reason ``error: ...``, the vehicle's landed state, the results
folder), and `aerie fly --json` writes it whatever ended the mission; one that
failed before a flight began (no vehicle) gets an outcome saying so. Both are
real `aerie fly` processes: one against the simulated vehicle with a world
feed that never answers (the exception comes from inside the flight), one
with no vehicle at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from onboard.config import AerieConfig
from sim.flight_rig import SIM_PARAMS
from sim.vehicle import SimVehicleProcess
from sim.vehicle.process import free_ports
from tests.supervisor.flightkit import write_config

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp: Path, vehicle_url: str, connect_timeout_s: float = 10.0) -> Path:
    base = AerieConfig()
    [dead] = free_ports(1)  # nothing serves it: every observation request times out
    cfg = replace(base, data_dir=str(tmp / "vehicle"), link=replace(base.link, url=vehicle_url,
                                                                    connect_timeout_s=connect_timeout_s),
                  telemetry=replace(base.telemetry, enabled=False),
                  supervisor=replace(base.supervisor, use_memory=False, status_socket=False,
                                     world_endpoint=f"tcp://127.0.0.1:{dead}", world_timeout_s=0.2))
    return write_config(cfg, tmp / "config.yaml")


def _fly(tmp: Path, config: Path) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp / "outcome.json"
    proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(config), "--instruction",
                           "find the cafe", "--name", "broken", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    return proc, out


def test_exception_inside_the_flight_still_writes_the_outcome(tmp_path):
    vehicle = SimVehicleProcess(home=(60.17, 24.94, 10.0), seed=0, params=dict(SIM_PARAMS), prearm_delay_s=0.5).start()
    try:
        proc, out = _fly(tmp_path, _config(tmp_path, vehicle.mavsdk_url))
    finally:
        vehicle.stop()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "mission failed: WorldLinkError" in proc.stderr
    outcome = json.loads(out.read_text())
    assert outcome["reason"].startswith("error: WorldLinkError") and outcome["error"].startswith("WorldLinkError")
    assert outcome["mission"] == "broken" and outcome["landed"] == "on ground" and not outcome["agent_success"]
    assert Path(outcome["results_dir"]).is_dir()


def test_exception_before_any_flight_still_writes_an_outcome(tmp_path):
    [port] = free_ports(1)  # no vehicle there: connecting times out
    proc, out = _fly(tmp_path, _config(tmp_path, f"udpin://127.0.0.1:{port}", 0.5))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "mission failed" in proc.stderr
    outcome = json.loads(out.read_text())
    assert outcome["mission"] == "broken" and outcome["landed"] == "not flown"
    assert outcome["reason"].startswith("error: ") and outcome["error"] in outcome["reason"]

"""`aerie fly` with a vision-language model configured: the tests' random-weight VLM asked on the flight path.

A real supervisor process flies public task t019 on the MAVLink sim vehicle with rendered frames
(`supervisor.camera: world`) and `inference.vlm_model: tiny-vlm` (built by sim/tiny_vlm.py). The
model is asked between steps on each step's frame, never in one: the flight arrives as it does
without it, every FrameLog after the first carries the answer that came in before its step (which
step's frame, how long, what it said), a caption that said something leads the next
`scene_description`, the episode summary counts the calls, and each answer travels on telemetry to a
real ground station, whose dashboard counts them and shows the latest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from common.typed_config import to_dict
from contract.messages import Event, VlmAnswerReport
from ground_station.dashboard.app import DashboardContext
from ground_station.dashboard.server import DashboardServer
from ground_station.flight_log import FlightLog
from onboard.config import AerieConfig
from onboard.inference.manifest import model_dir
from sim.flight_rig import start_rig
from sim.tiny_vlm import build_tiny_vlm
from tests.supervisor.flightkit import ground_for, world

ROOT = Path(__file__).resolve().parents[2]


def _dashboard_once_ended(db: Path, vehicle_id: str) -> dict:
    """The dashboard's /api/vehicles entry of the vehicle, once its flight's end is in the ground's flight log
    (the vehicle sends before it exits; the ground may still be storing the last messages)."""
    with DashboardServer(DashboardContext(db_path=db), port=0) as dash:
        deadline = time.monotonic() + 60.0
        while True:
            with urllib.request.urlopen(dash.url + "api/flights", timeout=10) as r:
                ended = [f for f in json.loads(r.read()) if f["vehicle_id"] == vehicle_id and f["end_seq"] is not None]
            if ended:
                with urllib.request.urlopen(dash.url + "api/vehicles", timeout=10) as r:
                    return json.loads(r.read())[vehicle_id]
            assert time.monotonic() < deadline, "the flight's end never reached the ground's flight log"
            time.sleep(0.1)


def _write_vlm_flight(rig, base, models, tmp_path, agent, step_limit):
    """The rig's config with the test VLM (and ``agent``) and its mission, written for `aerie fly`."""
    cfg = rig.config(replace(base, supervisor=replace(base.supervisor, camera="world"), agent=agent,
                             inference=replace(base.inference, model_dir=str(models), vlm_model="tiny-vlm",
                                               vlm_chat_handler="MTMDChatHandler", n_threads=1)),
                     tmp_path / "vehicle")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    m = rig.mission()
    (tmp_path / "mission.yaml").write_text(yaml.safe_dump({"instruction": m.instruction, "name": m.name,
                                                            "step_limit": step_limit}, allow_unicode=True))
    return cfg


@pytest.mark.slow  # a whole flight of t019 (about 90 s); make test-all runs it, make test the VLM's own tests
def test_aerie_fly_asks_the_vlm_between_steps_and_arrives(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    base = AerieConfig()
    models = model_dir(os.environ.get("AERIE_MODEL_DIR") or base.inference.model_dir)
    build_tiny_vlm(models)
    with start_rig("t019", world=world()) as rig:
        cfg = _write_vlm_flight(rig, base, models, tmp_path, base.agent, rig.mission().step_limit)
        with ground_for(cfg, tmp_path):  # a real ground station ingests the flight's telemetry
            proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(tmp_path / "config.yaml"),
                                   "--mission", str(tmp_path / "mission.yaml"), "--json", str(tmp_path / "out.json")],
                                  cwd=ROOT, capture_output=True, text=True, timeout=400)
            shown = _dashboard_once_ended(tmp_path / "flight_log.sqlite", cfg.vehicle_id) if proc.returncode == 0 else {}
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        outcome = json.loads((tmp_path / "out.json").read_text())
        assert rig.judge(SimpleNamespace(**outcome))["success"], outcome
    results = Path(outcome["results_dir"])
    summary = json.loads((results / "episode_summary.json").read_text())
    frames = json.loads((results / "trajectory.json").read_text())
    frames = frames if isinstance(frames, list) else frames["frames"]
    vlm = summary["vlm"]
    assert vlm["asked"] >= len(frames) - 1 and vlm["answered"] + vlm["failed"] == vlm["asked"], vlm
    logged = [(f["timestep"], a) for f in frames for a in f["vlm"]]
    assert logged and all(a["step"] < step and a["seconds"] >= 0 and a["kind"] in ("caption", "confirm")
                          for step, a in logged), logged
    said = [(step, a) for step, a in logged if a["kind"] == "caption" and a["text"]]
    for step, a in said:  # a caption that said something leads the scene description once the agent perceives
        assert any(f"camera (step {a['step']}): " in f["current_state"] for f in frames if f["timestep"] >= step), a
    assert "vlm_answer" in proc.stderr + proc.stdout
    # Telemetry says it too: one typed vlm_answer event per answer in the ground's flight log, with the step it
    # was handed in before ...
    with FlightLog.open(tmp_path / "flight_log.sqlite") as fl:
        sent = [VlmAnswerReport.from_event(Event.decode(m["payload"])) for m in fl.messages(cfg.vehicle_id)
                if m["type"] == "event" and m["payload"]["kind"] == "vlm_answer"]
    assert [(r.delivered_step, r.kind, r.step, r.text) for r in sent if r.delivered_step is not None] == \
        [(step, a["kind"], a["step"], a["text"]) for step, a in logged]
    # ... and the ground's dashboard shows them: how many, and the latest.
    shown = shown["vlm"]
    assert shown["count"] == len(sent) and shown["refused"] == 0 and shown["latest"] == sent[-1].body(), shown


@pytest.mark.slow  # eight steps of t019 flown by a real supervisor (about a minute)
def test_aerie_fly_with_the_vlm_planner_flies_its_answers_and_never_waits(tmp_path):
    """`agent.planner: vlm`: the frame goes to the agent, whose navigate and search steps ask the VLM; answers
    arrive between steps and are flown where they fit, each FrameLog saying which came in."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    base = AerieConfig()
    models = model_dir(os.environ.get("AERIE_MODEL_DIR") or base.inference.model_dir)
    build_tiny_vlm(models)
    with start_rig("t019", world=world()) as rig:
        _write_vlm_flight(rig, base, models, tmp_path, replace(base.agent, planner="vlm"), 8)
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(tmp_path / "config.yaml"),
                               "--mission", str(tmp_path / "mission.yaml"), "--json", str(tmp_path / "out.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=400)
        assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
        outcome = json.loads((tmp_path / "out.json").read_text())
    results = Path(outcome["results_dir"])
    summary = json.loads((results / "episode_summary.json").read_text())
    frames = json.loads((results / "trajectory.json").read_text())
    frames = frames if isinstance(frames, list) else frames["frames"]
    planner = summary["vlm_planner"]
    assert planner["asked"] >= 2 and planner.get("no_frame", 0) == 0, planner
    assert planner["answered"] == sum(planner.get(k, 0) for k in ("adopted", "kept", "stale", "fallbacks")), planner
    sources = planner["step_sources"]
    assert sources.get("vlm-pending", 0) + sources.get("geometric", 0) >= 1  # steps flown while a call was out
    decided = [a for f in frames for a in f["vlm"] if a["kind"] in ("navigate", "search")]
    assert len(decided) == planner["answered"] and all(a["step"] < f["timestep"] for f in frames for a in f["vlm"])
    assert not any(a["kind"] == "caption" for f in frames for a in f["vlm"])  # the worker is the planner's

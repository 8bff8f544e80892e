"""`aerie fly` with a vision-language model configured: the tests' random-weight VLM asked on the flight path.

A real supervisor process flies public task t019 on the MAVLink sim vehicle with rendered frames
(`supervisor.camera: world`) and `inference.vlm_model: tiny-vlm` (built by sim/tiny_vlm.py). The
model is asked between steps on each step's frame, never in one: the flight arrives as it does
without it, every FrameLog after the first carries the answer that came in before its step (which
step's frame, how long, what it said), a caption that said something leads the next
`scene_description`, and the episode summary counts the calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from common.typed_config import to_dict
from onboard.config import AerieConfig
from onboard.inference.manifest import model_dir
from sim.flight_rig import start_rig
from sim.tiny_vlm import build_tiny_vlm
from tests.supervisor.flightkit import world

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a whole flight of t019 (about 90 s); make test-all runs it, make test the VLM's own tests
def test_aerie_fly_asks_the_vlm_between_steps_and_arrives(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    base = AerieConfig()
    models = model_dir(os.environ.get("AERIE_MODEL_DIR") or base.inference.model_dir)
    build_tiny_vlm(models)
    with start_rig("t019", world=world()) as rig:
        cfg = rig.config(replace(base, supervisor=replace(base.supervisor, camera="world"),
                                 inference=replace(base.inference, model_dir=str(models), vlm_model="tiny-vlm",
                                                   vlm_chat_handler="MTMDChatHandler", n_threads=1)),
                         tmp_path / "vehicle")
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
        m = rig.mission()
        (tmp_path / "mission.yaml").write_text(yaml.safe_dump({"instruction": m.instruction, "name": m.name,
                                                                "step_limit": m.step_limit}, allow_unicode=True))
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(tmp_path / "config.yaml"),
                               "--mission", str(tmp_path / "mission.yaml"), "--json", str(tmp_path / "out.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=400)
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


@pytest.mark.slow  # eight steps of t019 flown by a real supervisor (about a minute)
def test_aerie_fly_with_the_vlm_planner_flies_its_answers_and_never_waits(tmp_path):
    """`agent.planner: vlm`: the frame goes to the agent, whose navigate and search steps ask the VLM; answers
    arrive between steps and are flown where they fit, each FrameLog saying which came in."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    base = AerieConfig()
    models = model_dir(os.environ.get("AERIE_MODEL_DIR") or base.inference.model_dir)
    build_tiny_vlm(models)
    with start_rig("t019", world=world()) as rig:
        cfg = rig.config(replace(base, supervisor=replace(base.supervisor, camera="world"),
                                 agent=replace(base.agent, planner="vlm"),
                                 inference=replace(base.inference, model_dir=str(models), vlm_model="tiny-vlm",
                                                   vlm_chat_handler="MTMDChatHandler", n_threads=1)),
                         tmp_path / "vehicle")
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
        m = rig.mission()
        (tmp_path / "mission.yaml").write_text(yaml.safe_dump({"instruction": m.instruction, "name": m.name,
                                                                "step_limit": 8}, allow_unicode=True))
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

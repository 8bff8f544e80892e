"""Two missions in a row through `aerie fly` with the real SmolLM2 planner (issue 20's test).

Two real supervisor processes, one after the other, share one data directory (so one memory
file), each flying public task t019 on a fresh simulated vehicle at its start (a battery swap, as
`make demo` does), with `agent.planner: llm`. The second mission's plan prompts must carry the
first mission's reflections (its end-of-mission analysis included), and a plan must be asked again
mid-mission on a trigger; both are read from what the processes wrote (the results folders'
FrameLogs and summaries, the memory file), not from inside them. tests/agent/test_reflections_across_flights.py
shows the same with the agent alone, prompt text included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from onboard.config import AerieConfig
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world, write_config

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # two real flights with model calls: minutes, in `make test-all`


def _fly(tmp: Path, data_dir: Path, name: str) -> tuple[dict, list[dict], dict]:
    """One mission by an `aerie fly` process on a fresh rig: (outcome, FrameLogs, episode summary)."""
    rig = start_rig("t019", world=world())
    try:
        base = AerieConfig()
        base = replace(base, agent=replace(base.agent, planner="llm"),
                       inference=replace(base.inference, call_deadline_s=120.0))
        cfg = rig.config(base, data_dir)
        config_file = write_config(cfg, tmp / f"{name}.yaml")
        mission = tmp / f"{name}_mission.yaml"
        mission.write_text(yaml.safe_dump({"instruction": rig.task.task.description, "name": name,
                                           "step_limit": rig.task.step_limit}))
        out_json = tmp / f"{name}_outcome.json"
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(config_file),
                               "--mission", str(mission), "--json", str(out_json)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-4000:]
        outcome = json.loads(out_json.read_text())
        assert outcome["landed"] == "landed", outcome
        folder = Path(outcome["results_dir"])
        frames = json.loads((folder / "trajectory.json").read_text())
        summary = json.loads((folder / "episode_summary.json").read_text())
        return outcome, frames, summary
    finally:
        rig.close()


def test_second_aerie_fly_mission_plans_with_the_first_ones_reflections(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from tests.inference.conftest import _prepared

    _prepared("smollm2-135m-instruct")
    data_dir = tmp_path / "vehicle"
    first, frames1, summary1 = _fly(tmp_path, data_dir, "first")
    assert summary1["reflections_inherited"] == 0  # a fresh memory file: nothing to inherit
    # the plan was asked again mid-mission, on a trigger, and a model plan was flown
    replans = [f for f in frames1[1:] if f["replan_triggers"]]
    second, frames2, summary2 = _fly(tmp_path, data_dir, "second")
    replans += [f for f in frames2[1:] if f["replan_triggers"]]
    assert replans, "no plan was asked mid-mission in either flight"
    assert max(f["plan_version"] for f in frames1 + frames2) >= 1

    # what flight 1 reflected is in the memory file both processes used
    import sqlite3

    memory = next(data_dir.rglob("memory.sqlite"), None)  # memory.path, under the data directory
    assert memory is not None, sorted(p.name for p in data_dir.rglob("*"))
    conn = sqlite3.connect(memory)
    try:
        written = [t for f, t in conn.execute("SELECT flight_id, text FROM reflections") if f == first["flight_id"]]
    finally:
        conn.close()
    assert written, "flight 1 left no reflection in the memory file"

    # ... and flight 2 started with them and put them in its plan prompts
    assert summary2["reflections_inherited"] == min(3, len(written))
    prompted = [item for f in frames2 if f["prompt"] for item in f["prompt"].get("reflections", [])]
    assert prompted, "no plan prompt of flight 2 carried reflections"
    assert any(w.startswith(item) for item in prompted for w in written), (prompted, written)

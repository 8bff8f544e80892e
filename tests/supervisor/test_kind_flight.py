"""In flight: a goal that is a kind of thing has the shipped detector run on every look-around frame.

One step of t019 on the simulated vehicle with camera perception and the detector configured
(``supervisor.camera: world``, the shipped SSDLite person detector), the instruction asking for a person.
The reading log lists each view's detections (the simulated city has no people; what the detector makes
of its facades is not judged here: placing and fusing boxes is tests/perception/test_kind_sightings.py).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from onboard.config import AerieConfig
from tests.supervisor.flightkit import journal_messages
from tests.supervisor.test_camera_look_around import Recording, _camera_rig


@pytest.mark.slow
def test_a_kind_in_the_instruction_has_the_detector_look_in_every_view(tmp_path):
    from onboard.supervisor.supervisor import Supervisor
    from tests.perception.conftest import _prepared

    _prepared(AerieConfig().inference.ssdlite_model)
    rig, cfg = _camera_rig(tmp_path, True)
    try:
        cfg = replace(cfg, supervisor=replace(cfg.supervisor, camera="world", detect_every_steps=1))
        mission = rig.mission()
        mission = replace(mission, instruction=f"Look for a person there. {mission.instruction}", step_limit=1)
        sup = Supervisor(cfg, mission, agent_factory=Recording)
        outcome = asyncio.run(sup.run())
        assert outcome.landed == "landed" and outcome.perception == "camera", outcome
        reading = json.loads((Path(outcome.results_dir) / "reading_timestep_0000.json").read_text())
        assert reading["views"] and all(isinstance(v["detections"], list) for v in reading["views"])
        assert len(sup._look.spotter.detect_ms) >= len(reading["views"])
        events = [m["payload"] for m in journal_messages(cfg) if m["type"] == "event"]
        started = [e for e in events if e["kind"] == "camera_perception"]
        assert started and all(json.dumps(e).count('"goal_kind": "person"') == 1 for e in started), started
        print(f"detector per view: {[round(x) for x in sup._look.spotter.detect_ms]} ms")
    finally:
        rig.close()

import dataclasses
import json
import re
from pathlib import Path

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from common.typed_config import ConfigError, build, to_dict
from tests.agent.toy_city import ToyCity


def test_every_setting_has_a_default_and_a_comment():
    src = Path("onboard/agent/settings.py").read_text().splitlines()
    for f in dataclasses.fields(AgentConfig):
        assert f.default is not dataclasses.MISSING, f.name
        i = next(i for i, line in enumerate(src) if re.match(rf"\s+{f.name}:", line))
        assert src[i - 1].strip().startswith("#"), f"{f.name} has no comment"


def test_builds_from_a_config_section():
    cfg = build(AgentConfig, {"perceive_every_steps": 2, "use_reflection": False}, where="agent")
    assert cfg.perceive_every_steps == 2 and not cfg.use_reflection
    assert build(AgentConfig, to_dict(AgentConfig())) == AgentConfig()
    with pytest.raises(ConfigError, match="unknown key"):
        build(AgentConfig, {"no_such_key": 1}, where="agent")
    with pytest.raises(ConfigError):
        build(AgentConfig, {"planner": "gpt"}, where="agent")


def test_results_on_disk(tmp_path):
    agent = GraphAgent(AgentConfig(), ["Tower"])
    agent.reset("Cafe Aalto is about 140 m north-east of Tower.")
    assert ToyCity().fly(agent, start=0)[0]
    out = agent.write_results(tmp_path / "run_t1")
    frames = json.loads((out / "trajectory.json").read_text())
    summary = json.loads((out / "episode_summary.json").read_text())
    assert len(frames) == agent.state.dynamic.timestep
    assert {"current_state", "movement", "reason", "pose", "distance_to_target", "timestep"} <= set(frames[0])
    assert summary["mission_success"] is True and summary["final_reason"] == "success"
    assert len(summary["episodic_memory"]) == len(frames) - 1

"""The llm backend's fault paths: garbage, nothing, a hang or a crash -> geometric plan, mission continues."""

import json
import time
from dataclasses import replace

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.inference_worker import ThreadWorker
from onboard.inference.planner_model import PlannerModel
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
GOOD = {"sub_goals": [{"goal": "fly NE of Tower", "strategy": "navigate", "desired_state": "near the area"},
                      {"goal": "look for the cafe", "strategy": "search", "desired_state": "name read"},
                      {"goal": "arrive at the cafe", "strategy": "locate", "desired_state": "arrived"}],
        "reason": "get close, look around, then arrive"}
NO_LOCATE = {"sub_goals": [GOOD["sub_goals"][0]], "reason": "just fly there"}


def _answer(kind):
    def generate(messages, schema):
        if kind == "garbage":
            return "Sure! The drone should fly north-east {{{"
        if kind == "nothing":
            return ""
        if kind == "hang":
            time.sleep(1.0)
            return json.dumps(GOOD)
        if kind == "crash":
            raise RuntimeError("llama.cpp died")
        return json.dumps(GOOD if kind == "good" else NO_LOCATE)
    return generate


def _model(kind):
    worker = ThreadWorker(f"fake-{kind}", deadline_s=0.2)
    fn = _answer(kind)
    return PlannerModel(lambda messages, schema: worker.call(fn, messages, schema), worker, deadline_s=0.2, retries=1)


@pytest.mark.parametrize("kind, source", [
    ("good", "llm"), ("no-locate", "llm-repaired"),
    ("garbage", "llm-fallback"), ("nothing", "llm-fallback"), ("hang", "llm-fallback"), ("crash", "llm-fallback"),
])
def test_llm_plan_or_fallback_and_the_mission_continues(kind, source):
    model = _model(kind)
    try:
        agent = GraphAgent(replace(AgentConfig(), planner="llm"), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        arrived, _, _ = ToyCity().fly(agent, start=0)
        d = agent.state.dynamic
        assert d.plan_source == source, d.plan_errors
        assert arrived, kind
        assert d.plan.sub_goals[-1].strategy == "locate"
        if source == "llm-fallback":
            assert d.plan_errors  # why it fell back is kept
    finally:
        model.close()


def test_llm_backend_without_a_model_plans_geometrically():
    agent = GraphAgent(replace(AgentConfig(), planner="llm"), ["Tower"])
    agent.reset(DESCRIPTION)
    assert ToyCity().fly(agent, start=0)[0]
    assert agent.state.dynamic.plan_source == "geometric"

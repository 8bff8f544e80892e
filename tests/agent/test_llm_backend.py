"""The llm backend's fault paths: garbage, nothing, a hang or a crash -> geometric plan, mission continues.

Waiting for the plan in the step (`llm_plan_wait`, as the benchmark does) and
the default, where the steps fly the geometric plan until the model's answer
arrives and the next step adopts it. The model writes sub-goals here
(`use_place_anchor_plan` false) and plans once (`use_replan` false); the
Place–Anchor answer and re-planning are in test_llm_replan.py.
"""

import json
import threading
import time
from dataclasses import replace

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.graph import continue_index
from onboard.agent.settings import AgentConfig
from onboard.inference.contracts import PlanOutput, SubGoal
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


def _cfg(**kw):
    return replace(AgentConfig(), planner="llm", use_place_anchor_plan=False, use_replan=False, **kw)


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
        agent = GraphAgent(_cfg(llm_plan_wait=True), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        arrived, _, _ = ToyCity().fly(agent, start=0)
        d = agent.state.dynamic
        assert d.plan_source == source, d.plan_errors
        assert arrived, kind
        assert d.plan.sub_goals[-1].strategy == "locate"
        if source == "llm-fallback":
            assert d.plan_errors  # why it fell back is kept
        report = agent.summary()["llm_plan"]
        assert report["wait"] and report["requested_step"] == 0 and report["answered_step"] == 0
        assert report["adopted_step"] == (None if source == "llm-fallback" else 0)
        assert report["source"] == source and report["call_s"] >= 0.0
    finally:
        model.close()


def test_llm_backend_without_a_model_plans_geometrically():
    agent = GraphAgent(_cfg(), ["Tower"])
    agent.reset(DESCRIPTION)
    assert ToyCity().fly(agent, start=0)[0]
    assert agent.state.dynamic.plan_source == "geometric"


class GatedPlanModel:
    """Test double for timing: a `PlanModel` whose answer arrives only when the test opens the gate.

    Behind the gate is the real `PlannerModel` (contract validation, retry,
    fallback) around one of the canned answers above.
    """

    def __init__(self, kind: str):
        self.gate = threading.Event()
        self.asked = threading.Event()
        self.model = _model(kind)
        self.model.worker.deadline_s = self.model.deadline_s = 5.0  # the gate, not the deadline, sets the pace

    def ask_sync(self, messages, contract, fallback):
        self.asked.set()
        assert self.gate.wait(30.0), "the test never opened the gate"
        return self.model.ask_sync(messages, contract, fallback)

    def close(self):
        self.model.close()


def _fly_steps(agent, city, node, first, n, limit=60):
    """`n` agent steps from `node`; returns (node, the steps' wall times in seconds, arrived)."""
    times = []
    for step in range(first, first + n):
        t0 = time.perf_counter()
        action = agent.act(city.observe(node, step, limit - step))
        times.append(time.perf_counter() - t0)
        if action.kind == "arrive":
            return node, times, True
        node = action.node
    return node, times, False


def test_a_late_plan_is_adopted_at_a_step_boundary_and_no_step_waited():
    model, city = GatedPlanModel("good"), ToyCity()
    try:
        agent = GraphAgent(_cfg(), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        node, times, arrived = _fly_steps(agent, city, 0, 0, 3)
        d = agent.state.dynamic
        assert model.asked.is_set() and not arrived
        assert max(times) < 1.0, times  # the gate is shut: a step that waited would take 30 s and fail
        assert d.plan_source == "geometric" and d.llm_plan["source"] == "pending"
        assert [e.strategy for e in d.trajectory_history] == ["navigate"] * 3
        geometric = d.plan
        model.gate.set()
        d.plan_request.result(timeout=10.0)  # the answer is in; the next step boundary takes it
        assert d.plan is geometric  # not between steps
        node, _, _ = _fly_steps(agent, city, node, 3, 1)
        assert d.plan_source == "llm" and d.plan.sub_goals[0].goal == "fly NE of Tower"
        assert d.llm_plan["requested_step"] == 0 and d.llm_plan["answered_step"] == d.llm_plan["adopted_step"] == 3
        assert d.llm_plan["call_s"] >= 0.0 and not d.llm_plan["wait"]
        assert d.plan_request is None
        arrived = city.fly_on(agent, node, first=4)
        assert arrived
        summary = agent.summary()
        assert summary["plan_source"] == "llm" and summary["llm_plan"]["adopted_step"] == 3
    finally:
        model.close()


@pytest.mark.parametrize("kind", ["garbage", "crash"])
def test_a_plan_that_fails_late_leaves_the_geometric_plan(kind):
    model, city = GatedPlanModel(kind), ToyCity()
    try:
        agent = GraphAgent(_cfg(), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        node, _, _ = _fly_steps(agent, city, 0, 0, 2)
        d = agent.state.dynamic
        geometric, index = d.plan, d.current_task_index
        model.gate.set()
        d.plan_request.result(timeout=10.0)
        node, _, _ = _fly_steps(agent, city, node, 2, 1)
        assert d.plan is geometric and d.current_task_index == index
        assert d.plan_source == "llm-fallback" and d.plan_errors
        assert d.llm_plan["answered_step"] == 2 and d.llm_plan["adopted_step"] is None
        assert city.fly_on(agent, node, first=3)
    finally:
        model.close()


def test_a_plan_still_pending_at_the_end_is_reported_so():
    model, city = GatedPlanModel("good"), ToyCity()
    try:
        agent = GraphAgent(_cfg(), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        assert city.fly_on(agent, 0, first=0)
        summary = agent.summary()
        assert summary["plan_source"] == "geometric"
        assert summary["llm_plan"]["source"] == "pending" and summary["llm_plan"]["adopted_step"] is None
    finally:
        model.gate.set()
        model.close()


def _plan(*strategies):
    return PlanOutput([SubGoal(s, s, "x") for s in strategies], "r")


def test_adopting_keeps_progress():
    geo = _plan("navigate", "search", "locate")
    assert continue_index(geo, 0, _plan("navigate", "search", "locate")) == 0
    assert continue_index(geo, 1, _plan("navigate", "search", "locate")) == 1  # never back to navigate
    assert continue_index(geo, 1, _plan("navigate", "locate")) == 1  # no search: on to locate
    assert continue_index(geo, 0, _plan("search", "locate")) == 0
    assert continue_index(geo, 2, _plan("search", "search", "locate")) == 2

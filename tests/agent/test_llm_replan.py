"""The living plan: PlaceAnchorPlan answers, re-plans on triggers without holding a step, versions in the FrameLog.

The model here is the real `PlannerModel` (contract validation, retry,
fallback) around canned answers, behind an event gate where the test needs
to say when an answer arrives; the last test runs the real SmolLM2.
"""

import json
import threading
import time
from dataclasses import replace

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.inference_worker import ThreadWorker
from onboard.inference.planner_model import PlannerModel
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
PLACE = {"goal_flag": False, "angle": 90.0,
         "discovered_context": {"goal_scene_type": "street to the west", "why": "the tower is that way"}}


def _model(answers):
    """A real PlannerModel whose generate returns `answers` in turn (the last one repeats)."""
    worker = ThreadWorker("canned", deadline_s=5.0)
    said = list(answers)

    def generate(messages, schema):
        return said.pop(0) if len(said) > 1 else said[0]
    return PlannerModel(lambda m, s: worker.call(generate, m, s), worker, deadline_s=5.0, retries=1)


class GatedModel:
    """A `PlanModel` whose each answer waits for the test to open the gate; it records every prompt."""

    def __init__(self, answers):
        self.model = _model(answers)
        self.gate = threading.Event()
        self.asked = threading.Semaphore(0)
        self.prompts: list[str] = []

    def ask_sync(self, messages, contract, fallback):
        self.prompts.append(messages[-1]["content"])
        self.asked.release()
        assert self.gate.wait(30.0), "the test never opened the gate"
        return self.model.ask_sync(messages, contract, fallback)

    def close(self):
        self.gate.set()
        self.model.close()


def _cfg(**kw):
    return replace(AgentConfig(), planner="llm", **kw)


def _step(agent, city, node, step, limit=60):
    t0 = time.perf_counter()
    action = agent.act(city.observe(node, step, limit - step))
    return action, time.perf_counter() - t0


def test_triggers_coalesce_while_a_plan_is_in_flight_and_the_replan_is_adopted_at_a_boundary():
    model, city = GatedModel([json.dumps(PLACE)]), ToyCity()
    try:
        agent = GraphAgent(_cfg(retrieval_interval=0), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        d = agent.state.dynamic
        node, times = 0, []
        for step in range(2):  # the first request is in flight, gate shut
            action, t = _step(agent, city, node, step)
            times.append(t)
            node = action.node
        assert model.asked.acquire(timeout=10.0)
        first = d.plan_request
        d.replan_triggers.append("search_timeout")  # what another node (the search timeout) appends
        d.replan_triggers.append("reflection")
        action, t = _step(agent, city, node, 2)
        times.append(t)
        node = action.node
        assert d.plan_request is first and len(d.llm_calls) == 1  # one request in flight at a time
        assert max(times) < 1.0, times  # a step that waited on the shut gate would take 30 s
        model.gate.set()
        first.result(timeout=10.0)
        model.gate.clear()
        assert d.plan_version == 0  # not between steps
        action, _ = _step(agent, city, node, 3)  # adopts v1, then asks again with both triggers queued
        node = action.node
        assert d.plan_version == 1 and d.place_intent.goal_scene_type == "street to the west"
        assert d.llm_calls[0]["adopted_step"] == 3 and d.llm_calls[0]["version"] == 1
        assert d.llm_calls[1]["triggers"] == ["search_timeout", "reflection"] and d.replan_triggers == []
        frames = d.trajectory_history
        assert [f.plan_version for f in frames] == [0, 0, 0, 1]
        assert frames[0].replan_triggers[0] == "start" and frames[3].replan_triggers == ["search_timeout", "reflection"]
        assert frames[1].replan_triggers == [] and frames[1].prompt == {}
        assert model.asked.acquire(timeout=10.0)
        second = d.plan_request
        action, t = _step(agent, city, node, 4)  # the second request is in flight: the step does not wait
        assert t < 1.0 and d.plan_version == 1
        node = action.node
        model.gate.set()
        second.result(timeout=10.0)
        action, _ = _step(agent, city, node, 5)
        assert d.plan_version == 2 and d.llm_calls[1]["adopted_step"] == 5
        assert agent.state.static.anchors.discovered.records()[-1].goal_scene_type == "street to the west"
    finally:
        model.close()


def test_place_anchor_answer_becomes_the_plan_and_biases_the_first_move():
    model, city = _model([json.dumps(PLACE)]), ToyCity()
    try:
        agent = GraphAgent(_cfg(llm_plan_wait=True, use_replan=False), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        action = agent.act(city.observe(40, 0, 60, see_landmarks=False))  # no landmark in view: exploring
        d = agent.state.dynamic
        assert d.plan_source == "llm" and d.plan_version == 1
        assert [g.strategy for g in d.plan.sub_goals] == ["navigate", "search", "locate"]
        assert d.plan.sub_goals[0].goal == "head for street to the west"
        assert d.place_intent.bearing == 270.0  # 90 deg left of the front (north before the first move)
        assert action.kind == "move" and city.xy(action.node) == (150.0, 200.0)  # west of (200, 200)
    finally:
        model.close()


@pytest.mark.parametrize("answer", [
    "I think the drone should turn left",  # not JSON
    json.dumps({**PLACE, "angle": 400.0}),  # out of range
    json.dumps({"sub_goals": [], "reason": "x"}),  # another contract
    json.dumps({**PLACE, "discovered_context": {"goal_scene_type": "x"}}),  # a field missing
])
def test_a_malformed_place_anchor_answer_is_retried_then_the_geometric_plan_is_flown(answer):
    model, city = _model([answer]), ToyCity()
    try:
        agent = GraphAgent(_cfg(llm_plan_wait=True), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        arrived, _, _ = city.fly(agent, start=0)
        d = agent.state.dynamic
        assert arrived
        assert d.plan_version == 0 and d.place_intent is None and d.plan_source == "llm-fallback"
        assert len(d.plan_errors) == 2  # the contract's retry, then the fallback
        assert all(c["adopted_step"] is None and c["source"] == "llm-fallback" for c in d.llm_calls)
        assert {f.plan_version for f in d.trajectory_history} == {0}
    finally:
        model.close()


def test_a_failed_replan_keeps_the_adopted_plan():
    model, city = _model([json.dumps(PLACE), "garbage", "garbage"]), ToyCity()
    try:
        agent = GraphAgent(_cfg(llm_plan_wait=True, retrieval_interval=2), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        node = 0
        for step in range(3):
            node = agent.act(city.observe(node, step, 60)).node
        d = agent.state.dynamic
        assert [c["source"] for c in d.llm_calls] == ["llm", "llm-fallback"]
        assert d.llm_calls[1]["triggers"] == ["interval"] and d.llm_calls[1]["requested_step"] == 2
        assert d.plan_version == 1 and d.plan_source == "llm" and d.place_intent is not None
    finally:
        model.close()


def test_sub_goal_end_landmark_and_interval_trigger_replans_and_framelog_says_so():
    """Waiting mode (the benchmark's): each trigger's re-plan lands in the step it was asked in."""
    model, city = _model([json.dumps(PLACE)]), ToyCity()
    try:
        agent = GraphAgent(_cfg(llm_plan_wait=True, retrieval_interval=6), ["Tower"], plan_model=model)
        # 40 m, not 140 m: the search starts where the name cannot be read yet (the cafe is ~100 m further)
        agent.reset("Cafe Aalto is about 40 m north-east of Tower.")
        assert city.fly(agent, start=0, see_landmarks=lambda step: step >= 2)[0]
        d = agent.state.dynamic
        triggers = [c["triggers"] for c in d.llm_calls]
        steps = [c["requested_step"] for c in d.llm_calls]
        assert triggers[0] == ["start"]
        assert triggers[1] == ["landmark:Tower"] and steps[1] == 2  # fixed in perception, asked before the move
        assert ["interval"] in triggers
        # navigate handed over to search without the goal's name (002 §6), asked at the next step
        assert ["stop_without_goal"] in triggers
        assert d.plan_version == len(d.llm_calls)  # every answer adopted
        frames = d.trajectory_history
        asked = [f for f in frames if f.replan_triggers]
        assert len(asked) == len(d.llm_calls)
        for f in asked:
            assert f.retrieval == {"mode": "none", "hits": {}}  # no experience store
            assert f.prompt["tokens"] <= agent.config.llm_prompt_tokens and "summary" in f.prompt
        versions = [f.plan_version for f in frames]
        assert versions == sorted(versions) and versions[-1] == d.plan_version
        json.dumps([f.to_json() for f in frames])  # the trajectory file still serialises
    finally:
        model.close()


def test_use_replan_false_plans_once():
    model, city = _model([json.dumps(PLACE)]), ToyCity()
    try:
        agent = GraphAgent(_cfg(llm_plan_wait=True, use_replan=False, retrieval_interval=2), ["Tower"],
                           plan_model=model)
        agent.reset(DESCRIPTION)
        assert city.fly(agent, start=0, see_landmarks=lambda step: step >= 2)[0]
        assert len(agent.state.dynamic.llm_calls) == 1 and agent.summary()["model_calls"] == 1
    finally:
        model.close()


def test_real_smollm2_replans_mid_mission_and_the_new_plan_is_adopted():
    """The real model (llama.cpp, the shipped GGUF) answers PlaceAnchorPlan at take-off and again when Tower is fixed.

    The test waits for each answer between steps (never inside one), so which step adopts does not depend on the CPU.
    """
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from onboard.inference.llama_backend import LlamaTextModel
    from tests.inference.conftest import _prepared

    llm = LlamaTextModel(_prepared("smollm2-135m-instruct"), n_ctx=2048, max_tokens=256, temperature=0.0)
    worker = ThreadWorker("smollm2", deadline_s=300.0)
    model = PlannerModel(lambda m, s: worker.call(llm.chat, m, json_schema=s), worker, deadline_s=300.0, retries=1)
    city = ToyCity()
    try:
        agent = GraphAgent(_cfg(retrieval_interval=0, llm_prompt_tokens=600), ["Tower"], plan_model=model)
        agent.reset(DESCRIPTION)
        d, node = agent.state.dynamic, 0
        for step in range(40):
            action = agent.act(city.observe(node, step, 60, see_landmarks=step >= 3))
            if d.plan_request is not None:
                d.plan_request.result(timeout=600.0)
            if action.kind == "arrive" or d.plan_version >= 2:
                break
            node = action.node
        assert [c["triggers"] for c in d.llm_calls][:2] == [["start"], ["landmark:Tower"]], d.llm_calls
        assert [c["source"] for c in d.llm_calls[:2]] == ["llm", "llm"], d.plan_errors
        replan = d.llm_calls[1]
        assert replan["requested_step"] == 3 and replan["adopted_step"] == 4 and replan["version"] == 2
        assert d.plan_version == 2 and [f.plan_version for f in d.trajectory_history][-2:] == [1, 2]
        assert -180.0 <= d.place_intent.angle <= 180.0 and d.place_intent.goal_scene_type
    finally:
        model.close()

"""The model's mission analysis is checked against what the agent knows; any failure leaves the rule's."""

from __future__ import annotations

import json

from onboard.agent.frame_log import FrameLog
from onboard.agent.mission_analysis import EXAMPLE_REASON, await_analysis, key_step, model_analysis, rule_analysis, \
    submit_analysis, trajectory_lines
from onboard.inference.inference_worker import ThreadWorker
from onboard.inference.planner_model import PlannerModel

DIST = [400, 350, 300, 260, 420, 410]
FRAMES = [FrameLog(i, "", "navigate", {"kind": "move", "bearing": 45.0}, "", (0, 0, 0, 0), float(d)) for i, d in enumerate(DIST)]
PLAN = [{"goal": "fly there", "strategy": "navigate", "desired_state": "near"},
        {"goal": "arrive", "strategy": "locate", "desired_state": "arrived"}]


def _model(answer: dict) -> PlannerModel:
    worker = ThreadWorker("scripted", deadline_s=5.0)
    return PlannerModel(lambda messages, schema: worker.call(lambda: json.dumps(answer)), worker, deadline_s=5.0)


def _ask(answer: dict):
    return model_analysis(_model(answer), "find the cafe", False, "timeout", FRAMES, ["SUCCESS"] * 5, None)


def test_key_step_is_the_decision_before_the_largest_increase() -> None:
    assert key_step(FRAMES) == 3
    assert rule_analysis(False, "timeout", FRAMES, [], None).analysis.key_timestep == 3


def test_a_sound_answer_is_kept_and_becomes_the_reflection() -> None:
    a = _ask({"status": "failure", "key_timestep": 3, "reason": "flew south-west at step 3", "refined_plan": PLAN})
    assert a.source == "model" and a.errors == []
    assert a.text == "mission failed (timeout); key step 3: flew south-west at step 3; next time: navigate -> locate"


def test_facts_overrule_the_model() -> None:
    a = _ask({"status": "success", "key_timestep": 40, "reason": "went wrong late", "refined_plan": PLAN})
    assert a.source == "model" and a.analysis.status == "failure" and a.analysis.key_timestep == 3
    assert len(a.errors) == 2 and "contradicts" in a.errors[0] and "outside the flight" in a.errors[1]


def test_the_prompts_example_is_no_analysis() -> None:
    a = _ask({"status": "failure", "key_timestep": 4, "reason": EXAMPLE_REASON, "refined_plan": PLAN})
    assert a.source == "fallback" and a.text.startswith("mission failed (timeout) after 6 moves")


def test_a_late_answer_leaves_the_rule_analysis() -> None:
    import threading

    gate = threading.Event()

    class Slow:
        def ask_sync(self, *args):
            gate.wait(5.0)
            raise RuntimeError("too late anyway")

    rule = rule_analysis(False, "timeout", FRAMES, [], None)
    got = await_analysis(submit_analysis(Slow(), "t", False, "timeout", FRAMES, [], None), 0.05, rule)
    gate.set()
    assert got.source == "fallback" and got.text == rule.text and "no analysis within" in got.errors[0]


def test_a_long_flight_is_cut_to_its_telling_steps() -> None:
    frames = [FrameLog(i, "", "search", {"kind": "move", "bearing": 0.0}, "", (0, 0, 0, 0), 100.0 + (50 if i == 20 else 0))
              for i in range(40)]
    lines = trajectory_lines(frames, limit=5)
    assert len(lines) == 5 and lines[0].startswith("0:") and lines[-1].startswith("39:")
    assert any(line.startswith("19:") for line in lines) and any(line.startswith("20:") for line in lines)

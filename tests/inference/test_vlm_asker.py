"""The VLM on the flight path (`onboard/inference/vlm_asker.py`) with the tests' random-weight model.

A step never waits for the model: the agent flies on while a call is held, and the answer is handed
in at a later step boundary, where the caption leads the scene description and the FrameLog says
when it was asked, how long it took and what it said. A confirm answer comes back under the
`GoalSeen` contract (or its fallback, counted). Without `inference.vlm_model` nothing is asked.
"""

from __future__ import annotations

import json
import threading

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.contracts import GoalSeen
from onboard.inference.settings import InferenceConfig
from onboard.inference.vlm_asker import VlmAsker
from onboard.perception.captioning import CAPTION_PROMPT
from tests.agent.toy_city import ToyCity
from tests.inference.conftest import tiny_vlm_config

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


class HeldVlm:
    """The real test VLM behind a gate: each call waits up to `hold_s` for the test to open it."""

    def __init__(self, vlm, hold_s: float = 10.0):
        self.vlm, self.hold_s = vlm, hold_s
        self.gate, self.asked, self.done = threading.Event(), threading.Event(), threading.Event()

    def chat(self, messages, schema, most):
        self.asked.set()
        self.gate.wait(self.hold_s)
        try:
            return self.vlm.chat(messages, json_schema=schema, max_tokens=most)
        finally:
            self.done.set()


def _agent() -> GraphAgent:
    agent = GraphAgent(AgentConfig(), ["Tower"])
    agent.reset(DESCRIPTION)
    return agent


def _step(agent, asker, city, node, step, frame):
    """What the supervisor's hook does before a step (hand answers in, ask on this frame), then the step."""
    for answer in asker.answers():
        agent.note_vlm(answer)
    asker.ask_caption(step, frame, CAPTION_PROMPT)
    return agent.act(city.observe(node, step, 60 - step)).node


def test_without_a_vlm_model_nothing_is_asked():
    assert InferenceConfig().vlm_model == ""
    assert VlmAsker.from_config(InferenceConfig()) is None


def test_a_step_never_waits_for_a_vlm_call_held_10_s(tiny_vlm, flight_images):
    held, city, agent = HeldVlm(tiny_vlm), ToyCity(), _agent()
    asker = VlmAsker(held.chat, deadline_s=60.0)
    try:
        node = 0
        for step in range(3):
            node = _step(agent, asker, city, node, step, flight_images[0])
        # Three steps flown while the one call asked at step 0 is still held at the gate.
        assert held.asked.wait(30.0) and not held.gate.is_set() and not held.done.is_set()
        assert asker.busy and asker.counts.asked == 1 and asker.counts.not_asked_busy == 2
        assert len(agent.state.dynamic.trajectory_history) == 3
        assert not agent.state.dynamic.current_observation["scene_description"].startswith("camera")
        held.gate.set()
        assert asker.settle(60.0)
        node = _step(agent, asker, city, node, 3, flight_images[0])  # the boundary where the answer comes in
    finally:
        held.gate.set()
        asker.close()
    d = agent.state.dynamic
    assert d.vlm_caption is not None and d.vlm_caption[0] == 0
    assert d.current_observation["scene_description"].startswith("camera (step 0): ")
    logged = d.trajectory_history[3].vlm
    assert [(e["kind"], e["step"]) for e in logged] == [("caption", 0)] and logged[0]["seconds"] > 0
    assert d.trajectory_history[2].vlm == [] and d.vlm_answers == []
    assert asker.summary()["answered"] == 1


def test_a_confirm_answer_comes_back_under_its_contract_and_is_kept(tiny_vlm_dir, flight_images):
    asker = VlmAsker.from_config(tiny_vlm_config(tiny_vlm_dir))
    agent = _agent()
    try:
        assert asker.ask_confirm(5, flight_images[0], "Cafe Aalto", "a cafe")
        assert not asker.ask_caption(5, flight_images[0], CAPTION_PROMPT)  # one call at a time
        assert asker.settle(60.0)
        [answer] = asker.answers()
    finally:
        asker.close()
    assert answer.kind == "confirm" and answer.step == 5 and isinstance(answer.goal_seen, GoalSeen)
    assert json.loads(answer.text)["confidence"] in ("low", "medium", "high")
    assert asker.counts.fallbacks == int(answer.used_fallback) and asker.counts.answered == 1
    agent.note_vlm(answer)
    seen = agent.summary()["vlm_goal_seen"]
    assert seen[0]["step"] == 5 and seen[0]["shows_goal"] == answer.goal_seen.shows_goal
    assert agent.state.dynamic.vlm_caption is None  # a confirm answer is not a caption


def test_a_call_past_its_deadline_is_given_up_and_counted(tiny_vlm, flight_images):
    held = HeldVlm(tiny_vlm, hold_s=30.0)
    asker = VlmAsker(held.chat, deadline_s=0.05)
    try:
        assert asker.ask_caption(0, flight_images[0], CAPTION_PROMPT)
        assert held.asked.wait(10.0)
        assert not held.gate.wait(0.2)  # past the 0.05 s deadline, the gate still shut
        [answer] = asker.answers()
        assert answer.errors and "no answer within" in answer.errors[0] and asker.counts.failed == 1
        assert not asker.busy
    finally:
        held.gate.set()
        held.done.wait(60.0)  # the abandoned call still holds the model: it must end before the model is closed
        asker.close()


@pytest.mark.parametrize("summary_key", ["vlm_goal_seen"])
def test_without_answers_the_agent_reports_as_before(summary_key):
    agent = _agent()
    ToyCity().fly(agent, start=0, limit=3)
    assert summary_key not in agent.summary()
    assert all(f.vlm == [] for f in agent.state.dynamic.trajectory_history)
    assert not agent.state.dynamic.current_observation["scene_description"].startswith("camera")


def _png_shape(url: str) -> tuple[int, int]:
    import base64

    import cv2
    import numpy as np

    return cv2.imdecode(np.frombuffer(base64.b64decode(url.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR).shape[:2]


def test_frames_are_scaled_down_to_the_configured_side_before_encoding():
    import numpy as np

    from onboard.inference.llama_backend import fit_longest_side, vision_messages

    frame = np.zeros((1080, 1920, 3), np.uint8)
    small = np.zeros((300, 400, 3), np.uint8)
    assert fit_longest_side(frame, 768).shape == (432, 768, 3)
    assert fit_longest_side(small, 768) is small and fit_longest_side(frame, 0) is frame  # never up; 0: as given
    content = vision_messages("what is there?", [frame, small], max_side=768)[0]["content"]
    assert [_png_shape(c["image_url"]["url"]) for c in content[:2]] == [(432, 768), (300, 400)]
    assert InferenceConfig().vlm_image_max_side == 768


def test_the_asker_sends_frames_at_the_configured_side():
    import numpy as np

    seen: list = []
    called = threading.Event()

    def chat(messages, schema, most):
        seen.append(_png_shape(messages[-1]["content"][0]["image_url"]["url"]))
        called.set()
        return "a street"

    asker = VlmAsker(chat, deadline_s=60.0, image_max_side=512)
    try:
        assert asker.ask_caption(1, np.zeros((1080, 1920, 3), np.uint8), "what is there?")
        assert called.wait(60.0)
        assert seen == [(288, 512)]
    finally:
        asker.close()

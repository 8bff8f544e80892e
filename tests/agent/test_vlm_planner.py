"""The `vlm` planner backend (onboard/agent/vlm_planner.py) with the tests' random-weight VLM.

The model's answers are noise, so these tests judge the plumbing: the camera frame and the agent's
two maps go to the model with the expert's prompt, the answer comes back under the navigate or search
contract, a valid one moves the drone only along a move on offer, an invalid one keeps the geometric
move and is counted, and no step waits for a call (one held at a gate for 10 s).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from onboard.agent import vlm_planner
from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.contracts import NavigationDecisionOutput, SearchOutput
from onboard.inference.vlm_asker import VlmAnswer, VlmAsker
from onboard.vocab.observation import NeighbourMove
from tests.agent.toy_city import ToyCity
from tests.inference.conftest import flight_images, tiny_vlm, tiny_vlm_dir  # noqa: F401 (fixtures)

from tests.inference.test_vlm_asker import HeldVlm  # the gated test VLM, one copy

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
VLM = replace(AgentConfig(), planner="vlm")




def _agent(config: AgentConfig, asker=None) -> GraphAgent:
    agent = GraphAgent(config, ["Tower"], vlm=asker)
    agent.reset(DESCRIPTION)
    return agent


def _fly(agent, city, frame, limit=60, first=0, node=0):
    """ToyCity.fly with this step's camera frame handed in before each step (what the supervisor's hook does)."""
    trail = [node]
    for step in range(first, limit + 1):
        agent.see_frame(frame)
        action = agent.act(city.observe(node, step, limit - step))
        if action.kind == "arrive" or step == limit:
            return action.kind == "arrive", trail
        assert action.node in {m.node for m in city.moves(node)}, "a move not on offer"
        node = action.node
        trail.append(node)
    return False, trail


def test_the_movement_names_the_move_on_offer_from_the_frames_heading():
    moves = (NeighbourMove(1, 0.0, 50.0), NeighbourMove(2, 90.0, 50.0), NeighbourMove(3, 200.0, 50.0))
    assert vlm_planner.move_for("forward", 0.0, moves, 60.0).node == 1
    assert vlm_planner.move_for("turn_right", 0.0, moves, 60.0).node == 2
    assert vlm_planner.move_for("backward", 0.0, moves, 60.0).node == 3  # 20 deg off the way back
    assert vlm_planner.move_for("turn_left", 0.0, moves, 60.0) is None  # no street to the west
    assert vlm_planner.move_for("turn_left", 180.0, moves, 60.0).node == 2  # facing south, east is left
    assert vlm_planner.move_for("backward", 0.0, moves, 15.0) is None
    for keep in ("stop", "ascend", "descend"):
        assert vlm_planner.move_for(keep, 0.0, moves, 60.0) is None


def test_the_vlm_backend_without_a_vlm_is_refused_by_name():
    with pytest.raises(ValueError, match="inference.vlm_model"):
        GraphAgent(VLM, ["Tower"])


def test_each_step_asks_with_the_frame_and_both_maps_and_flies_only_moves_on_offer(tiny_vlm, flight_images):
    """Waiting mode (the benchmark's): every navigate and search move is asked about and answered in its step."""
    seen: list[list] = []

    def chat(messages, schema, most):
        seen.append([c["type"] for c in messages[-1]["content"]])
        return tiny_vlm.chat(messages, json_schema=schema, max_tokens=most)

    asker = VlmAsker(chat, deadline_s=60.0)
    agent = _agent(replace(VLM, vlm_plan_wait=True), asker)
    try:
        _fly(agent, ToyCity(), flight_images[0], limit=12)
    finally:
        asker.close()
    stats = agent.summary()["vlm_planner"]
    assert stats["asked"] == stats["answered"] >= 5 and stats.get("fallbacks", 0) == 0
    assert stats["adopted"] + stats.get("kept", 0) + stats.get("stale", 0) == stats["answered"]
    assert stats["adopted"] >= 1 and stats["s_per_call"] > 0
    assert seen[0] == ["image_url", "image_url", "image_url", "text"]  # frame, landmark map, semantic map, prompt
    frames = agent.state.dynamic.trajectory_history
    adopted = [f for f in frames if f.reason.startswith("vlm ")]
    assert adopted and all(f.vlm and f.vlm[-1]["kind"] in ("navigate", "search") for f in adopted)
    assert all(f.vlm[-1]["step"] == f.timestep for f in adopted)  # answered about its own step's frame


def test_an_invalid_answer_keeps_the_geometric_move_and_is_counted(tiny_vlm, flight_images):
    """The same VLM asked without its grammar writes noise, never contract JSON: every step flies as geometric."""
    asker = VlmAsker(lambda m, schema, most: tiny_vlm.chat(m, json_schema=None, max_tokens=40), deadline_s=60.0,
                     retries=1)
    agent = _agent(replace(VLM, vlm_plan_wait=True), asker)
    plain = _agent(AgentConfig())
    try:
        arrived, trail = _fly(agent, ToyCity(), flight_images[0])
    finally:
        asker.close()
    plain_arrived, _, plain_trail = ToyCity().fly(plain, start=0)
    assert arrived == plain_arrived and trail == plain_trail
    stats = agent.summary()["vlm_planner"]
    assert stats["asked"] == stats["answered"] == stats["fallbacks"] >= 3 and "adopted" not in stats
    assert asker.counts.fallbacks == stats["fallbacks"]
    assert agent.summary()["vlm_planner"]["step_sources"]["vlm-fallback"] == stats["fallbacks"]


def test_a_step_never_waits_for_a_vlm_call_held_10_s(tiny_vlm, flight_images):
    held, city = HeldVlm(tiny_vlm), ToyCity()
    asker = VlmAsker(held.chat, deadline_s=60.0)
    agent, plain = _agent(VLM, asker), _agent(AgentConfig())
    try:
        node = 0
        for step in range(4):  # the question asked at step 0 is held at the gate all along
            agent.see_frame(flight_images[0])
            action = agent.act(city.observe(node, step, 60 - step))
            assert action == plain.act(city.observe(node, step, 60 - step))  # the geometric move meanwhile
            node = action.node
        assert held.asked.wait(30.0) and not held.gate.is_set() and not held.done.is_set()
        d = agent.state.dynamic
        assert d.vlm_request["step"] == 0 and d.vlm_plan["asked"] == 1
        assert [src for _, src in d.vlm_steps] == ["geometric", "vlm-pending", "vlm-pending", "vlm-pending"]
        held.gate.set()
        assert asker.settle(60.0)
        agent.see_frame(flight_images[0])
        agent.act(city.observe(node, 4, 56))  # the boundary where the answer comes in (and the next is asked)
    finally:
        held.gate.set()
        asker.settle(60.0)  # the model must not be closed under a call in flight
        asker.close()
    d = agent.state.dynamic
    assert d.vlm_plan["answered"] == 1 and d.vlm_steps[-1][1] in ("vlm", "vlm-kept", "vlm-stale")
    assert d.trajectory_history[4].vlm[0]["step"] == 0  # the FrameLog says which frame it answered


def test_a_decision_for_another_strategy_is_dropped_as_stale(tiny_vlm):
    """An answer about a search step that arrives while navigating is not flown; one about navigate is."""
    asker = VlmAsker(lambda m, schema, most: tiny_vlm.chat(m, json_schema=schema, max_tokens=most), deadline_s=60.0)
    agent = _agent(VLM, asker)  # no frame is handed in: nothing is asked, only the answers below come in
    city = ToyCity()
    try:
        agent.act(city.observe(0, 0, 60))
        search = SearchOutput("turn_left", "noise", "continue_search", 0.5)
        agent.note_vlm(VlmAnswer("search", 0, 0.1, "{}", decision=search))
        agent.act(city.observe(agent.state.dynamic.trail[-1], 1, 59))
        d = agent.state.dynamic
        assert d.trajectory_history[1].strategy == "navigate" and d.vlm_plan["stale"] == 1
        assert not d.trajectory_history[1].reason.startswith("vlm")
        nav = NavigationDecisionOutput("forward", "noise", "continue_navigate", 0.4)
        agent.note_vlm(VlmAnswer("navigate", 1, 0.1, "{}", decision=nav))
        agent.act(city.observe(d.trail[-1], 2, 58))
    finally:
        asker.close()
    assert d.vlm_plan["adopted"] == 1 and d.trajectory_history[2].reason.startswith("vlm forward (0.40, step 1)")
    assert d.vlm_plan["no_frame"] == 3 and asker.counts.asked == 0


def test_a_config_with_the_vlm_planner_and_no_vlm_is_refused_by_name():
    from onboard.config import AerieConfig
    from onboard.inference.settings import InferenceConfig

    with pytest.raises(ValueError, match="inference.vlm_model"):
        AerieConfig(agent=VLM)
    assert AerieConfig(agent=VLM, inference=InferenceConfig(vlm_model="tiny-vlm")).agent.planner == "vlm"

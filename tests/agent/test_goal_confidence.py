"""The VLM's confirm answers weighed by the locate expert (onboard/agent/goal_confidence.py).

A city of 100 m blocks whose goal stands in the middle of one, 71 m from every waypoint: the
agent reads the name from the corner and arrives there on the strength of the name read from
afar. A camera "no" holds that arrival for `vlm_doubt_steps` steps and asks for another look; a
"yes" adds to the confidence and changes nothing else; answers that say little, or about frames
from before the name was read, count for nothing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.contracts import GoalSeen
from onboard.inference.vlm_asker import VlmAnswer
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 350 m north-east of Tower."


def _city() -> ToyCity:
    return ToyCity(spacing=100.0, landmarks={"Tower": (400.0, 400.0)}, pois={"Cafe Aalto": (650.0, 650.0)},
                   poi_range=90.0, view_range=900.0)


def _fly(config: AgentConfig = AgentConfig(), told: dict[int, VlmAnswer] | None = None, limit: int = 60):
    """Fly the mission, handing `told[step]` in before that step; (arrival step or None, agent, trail)."""
    city, agent = _city(), GraphAgent(config, ["Tower"])
    agent.reset(DESCRIPTION)
    node, trail = 0, [0]
    for step in range(limit + 1):
        if told and step in told:
            agent.note_vlm(told[step])
        action = agent.act(city.observe(node, step, limit - step))
        if action.kind == "arrive":
            return step, agent, trail
        node = action.node
        trail.append(node)
    return None, agent, trail


def _confirm(frame_step: int, shows: bool, confidence: str = "high") -> VlmAnswer:
    return VlmAnswer("confirm", frame_step, 0.2, "{}", GoalSeen(shows, confidence, "a shop front"))


@pytest.fixture(scope="module")
def plain():
    arrived, agent, trail = _fly()
    d = agent.state.dynamic
    assert arrived is not None and d.goal_placed_at is not None and arrived > d.goal_placed_at
    assert "read 71 m away" in d.action.reason  # arrival on the name read from afar
    return arrived, d.goal_placed_at, trail


def test_a_camera_no_holds_the_arrival_from_afar_and_asks_for_another_look(plain):
    arrive, placed, _ = plain
    doubt = AgentConfig().vlm_doubt_steps
    arrived, agent, _ = _fly(told={arrive: _confirm(arrive - 1, False)})
    frames = agent.state.dynamic.trajectory_history
    assert frames[arrive].strategy == "locate" and "another look" in frames[arrive].reason
    assert arrive + doubt <= arrived <= arrive + doubt + 4  # held for the doubt, then the name read decides
    assert "goal confidence 0.50 (name read; camera does not show it, high" in agent.state.dynamic.action.reason


def test_another_look_is_asked_for_and_a_yes_then_ends_the_doubt(plain):
    arrive, placed, _ = plain
    _, doubting, _ = _fly(told={arrive: _confirm(arrive - 1, False)}, limit=arrive)
    assert doubting.state.dynamic.confirm_again  # the supervisor's hook asks the VLM again on the next frame
    doubted, _, _ = _fly(told={arrive: _confirm(arrive - 1, False)})
    arrived, agent, _ = _fly(told={arrive: _confirm(arrive - 1, False), arrive + 1: _confirm(arrive, True)})
    assert arrive < arrived < doubted  # the second look said yes: the name read from afar suffices again
    assert "goal confidence 0.80 (name read; camera shows it, high" in agent.state.dynamic.action.reason


def test_a_camera_yes_adds_confidence_and_flies_the_same_flight(plain):
    arrive, placed, trail = plain
    arrived, agent, told_trail = _fly(told={placed + 1: _confirm(placed + 1, True)})
    assert arrived == arrive and told_trail == trail
    assert agent.state.dynamic.action.reason.endswith(f"goal confidence 1.30 (name read; camera shows it, high, "
                                                      f"step {placed + 1})")


@pytest.mark.parametrize("answer", ["low", "fallback", "before the read"])
def test_answers_that_say_little_count_for_nothing(plain, answer):
    arrive, placed, trail = plain
    no = {"low": _confirm(arrive - 1, False, "low"),
          "fallback": VlmAnswer("confirm", arrive - 1, 0.2, "{}", GoalSeen.fallback(), True, ("invalid",)),
          "before the read": _confirm(placed - 1, False)}[answer]
    arrived, agent, told_trail = _fly(told={arrive: no})
    assert arrived == arrive and told_trail == trail and "camera" not in agent.state.dynamic.action.reason


def test_a_yes_never_places_the_goal():
    """Told "yes, high" at every step, the agent still arrives only where it read the name."""
    told = {s: _confirm(s, True) for s in range(61)}
    arrived, agent, _ = _fly(told=told)
    plain_arrived, plain_agent, _ = _fly()
    assert arrived == plain_arrived and agent.state.dynamic.goal_placed_at == plain_agent.state.dynamic.goal_placed_at


def test_the_doubt_is_bounded_by_its_setting(plain):
    arrive, _, _ = plain
    arrived, _, _ = _fly(replace(AgentConfig(), vlm_doubt_steps=0), told={arrive: _confirm(arrive - 1, False)})
    assert arrived == arrive

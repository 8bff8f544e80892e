"""Priors from past flights: frame alignment by common landmarks, the goal prior and what overrides it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from onboard.agent.agent import GraphAgent
from onboard.agent.experience_prior import PlanLesson, RememberedFrame, frame_shift, frames_from, lesson_from
from onboard.agent.goal_description import parse_goal_description
from onboard.vocab.observation import LandmarkSighting
from onboard.agent.settings import AgentConfig
from onboard.agent.working_memory import WorkingMemory
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


def _hit(plan_refined: dict | str, status: str = "success", similarity: float = 0.97):
    text = plan_refined if isinstance(plan_refined, str) else json.dumps(plan_refined)
    return SimpleNamespace(similarity=similarity, record=SimpleNamespace(
        plan_refined=text, status=status, reflection_note="note"))


def test_lesson_reads_goal_and_landmarks_and_ignores_old_records():
    lesson = lesson_from(_hit({"plan": {}, "goal": {"xy_m": [10, 20], "source": "name read"},
                               "landmarks": {"Tower": [1, 2]}}))
    assert lesson is not None and lesson.goal_was_read
    assert lesson.goal_xy.tolist() == [10.0, 20.0] and lesson.landmarks["Tower"].tolist() == [1.0, 2.0]
    assert lesson_from(_hit('{"goal": "kiosk", "steps": []}')) is None     # the plain plan of older records
    assert lesson_from(_hit("not json")) is None
    failed = lesson_from(_hit({"goal": {"xy_m": [5, 5], "source": "estimate"}, "landmarks": {}}, status="failure"))
    assert failed is not None and not failed.goal_was_read


def test_frame_shift_is_the_median_offset_of_common_landmarks():
    remembered = {"A": np.array([0.0, 0.0]), "B": np.array([100.0, 0.0]), "C": np.array([0.0, 100.0])}
    live = {"A": np.array([50.0, -20.0]), "B": np.array([150.0, -20.0]), "C": np.array([90.0, 60.0]),
            "D": np.array([1.0, 1.0])}
    assert frame_shift(remembered, live).tolist() == [50.0, -20.0]       # C's bad fix is outvoted
    assert frame_shift(remembered, {"D": np.array([1.0, 1.0])}) is None


def _memory() -> WorkingMemory:
    goal = parse_goal_description(DESCRIPTION, ["Tower"])
    return WorkingMemory(goal)


def _tower(wm: WorkingMemory, at=(200.0, 200.0), step: int = 0) -> None:
    """Tower seen live from the take-off point, `at` metres east/north of it."""
    wm.observe(step, np.zeros(2), (LandmarkSighting("Tower", float(np.degrees(np.arctan2(*at)) % 360),
                                                    float(np.hypot(*at))),))


def test_goal_prior_only_from_a_read_goal_of_a_very_similar_task():
    lm = {"Tower": np.array([200.0, 200.0])}
    read = PlanLesson(0.95, "success", np.array([300.0, 300.0]), "name read", lm)
    weak = PlanLesson(0.70, "success", np.array([300.0, 300.0]), "name read", lm)
    assert [f.goal_xy is not None for f in frames_from([weak, read, read], 0.9)] == [False, True, False]
    wm = _memory()
    wm.set_priors(frames_from([read], 0.9), conflict_m=250.0)
    assert wm.prior is None                                              # not placed before a common landmark
    _tower(wm, at=(150.0, 200.0))                                        # took off 50 m further east
    assert np.allclose(wm.prior, [250.0, 300.0])
    wm = _memory()
    wm.set_priors(frames_from([weak], 0.9), conflict_m=250.0)
    _tower(wm, at=(150.0, 200.0))
    assert wm.prior is None


def test_contradicting_live_fixes_override_the_prior():
    wm = _memory()
    # Remembered: Tower at (200, 200), the goal 800 m away from where this description puts it.
    wm.set_priors([RememberedFrame({"Tower": np.array([200.0, 200.0]), "Kiosk": np.array([0.0, 0.0])},
                                   np.array([-400.0, -400.0]))], conflict_m=250.0)
    wm.observe(0, np.zeros(2), (LandmarkSighting("Kiosk", 0.0, 1.0),))   # places the frame; Tower not yet seen
    assert np.allclose(wm.prior, [-400.0, -399.0]) and np.allclose(wm.target(), wm.prior)
    assert np.allclose(wm.landmark("Tower")[0], [200.0, 201.0])          # remembered until seen live
    _tower(wm, step=1)
    assert wm.prior is None and "live landmark fixes" in wm.prior_dropped
    assert np.hypot(*(wm.target() - np.array([299.0, 299.0]))) < 5.0


def test_agreeing_live_fixes_keep_the_prior_until_it_is_reached_in_vain():
    wm = _memory()
    wm.set_priors([RememberedFrame({"Tower": np.array([200.0, 200.0])}, np.array([310.0, 290.0]))], 250.0)
    _tower(wm)
    assert np.allclose(wm.target(), [310.0, 290.0])                     # the prior stands
    wm.reached_prior_in_vain(np.array([300.0, 300.0]), radius_m=45.0)
    assert wm.prior is None and "without reading" in wm.prior_dropped


class _Store:
    """Stands in for the retrieval call only; the record text is what the ground writes."""

    def __init__(self, goal_xy, landmarks):
        self.doc = {"plan": {}, "goal": {"xy_m": goal_xy, "source": "name read"}, "landmarks": landmarks}

    def retrieve_plans(self, task_instruction):
        return [_hit(self.doc)]


def test_agent_reuses_a_remembered_goal_and_flies_straight_there():
    city = ToyCity()
    plain = GraphAgent(AgentConfig(), ["Tower"])
    plain.reset(DESCRIPTION)
    _, _, trail_plain = city.fly(plain, start=0)
    # Remembered in a frame whose take-off was 100 m further west: Tower at (300, 200), goal at (400, 300).
    agent = GraphAgent(AgentConfig(use_persistent_reflections=False), ["Tower"], experience_store=_Store([400.0, 300.0], {"Tower": [300.0, 200.0]}))
    agent.reset(DESCRIPTION)
    arrived, node, trail = city.fly(agent, start=0)
    assert arrived and city.xy(node) == (300.0, 300.0)
    assert agent.summary()["goal_prior"] == [300.0, 300.0]
    assert "reused goal read on a past flight (sim 0.97)" in agent.state.dynamic.plan.reason
    assert len(trail) <= len(trail_plain)


def test_agent_drops_a_wrong_remembered_goal_and_still_arrives():
    city = ToyCity()
    agent = GraphAgent(AgentConfig(use_persistent_reflections=False), ["Tower"], experience_store=_Store([0.0, 400.0], {"Tower": [200.0, 200.0]}))
    agent.reset(DESCRIPTION)
    arrived, node, _ = city.fly(agent, start=0)
    assert arrived and city.xy(node) == (300.0, 300.0)
    assert agent.summary()["prior_dropped"]

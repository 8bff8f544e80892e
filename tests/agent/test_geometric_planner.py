"""The geometric planner's move choice: frontier routing, and the search's lookouts."""

import math

import numpy as np

from onboard.agent.geometric_planner import choose_move, lookouts
from onboard.vocab.observation import NeighbourMove
from onboard.agent.settings import AgentConfig
from onboard.agent.street_map import StreetMap


def _cross() -> tuple[StreetMap, tuple[NeighbourMove, ...]]:
    """At the origin with four unflown neighbours 50 m N, E, S, W."""
    sm = StreetMap()
    moves = tuple(NeighbourMove(i + 1, b, 50.0) for i, b in enumerate((0.0, 90.0, 180.0, 270.0)))
    sm.observe(0, moves)
    return sm, moves


def test_lookouts_are_the_frontier_waypoints_that_show_unseen_region():
    sm, _ = _cross()
    unseen = np.array([[0.0, 100.0], [20.0, 110.0]])  # only north of the drone
    assert lookouts(sm, unseen, 60.0) == frozenset({1})
    assert lookouts(sm, np.zeros((0, 2)), 60.0) == frozenset()


def test_search_goes_where_there_is_something_left_to_see():
    sm, moves = _cross()
    target = np.array([60.0, 0.0])  # the estimate lies east ...
    plain = choose_move(0, moves, target, sm, AgentConfig(), visits={}, closeness=2.0)
    assert plain.move.node == 2
    # ... but east was looked at: the part of the region still unseen is north
    worth = lookouts(sm, np.array([[0.0, 100.0]]), 60.0)
    sweep = choose_move(0, moves, target, sm, AgentConfig(), visits={}, closeness=2.0, worth_seeing=worth)
    assert sweep.move.node == 1
    assert math.isfinite(sweep.cost)


def test_the_plan_without_its_search_sub_goal_hands_navigate_to_locate():
    from onboard.agent.geometric_planner import make_plan
    from onboard.agent.goal_description import parse_goal_description

    goal = parse_goal_description("Café Engel is about 300 m north-east of Kiasma.", ["Kiasma"])
    assert [g.strategy for g in make_plan(goal).sub_goals] == ["navigate", "search", "locate"]
    assert [g.strategy for g in make_plan(goal, search=False).sub_goals] == ["navigate", "locate"]
    assert [g.strategy for g in make_plan(goal, use_plan=False, search=False).sub_goals] == ["navigate"]

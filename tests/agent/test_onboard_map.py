"""The agent with an onboard map: map landmarks seed the estimate, live fixes overrule them, the goal never
comes from the map, moves are matched to map waypoints by position."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from onboard.agent.agent import GraphAgent, variant_config
from onboard.agent.corridor_map import CorridorMap
from onboard.agent.goal_description import parse_goal_description
from onboard.agent.map_knowledge import CorridorGraph, MapKnowledge, MapKnowledgeError
from onboard.agent.working_memory import WorkingMemory
from tests.agent.test_working_memory import sighting
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


def _memory(landmarks: dict, text: str = DESCRIPTION, **over) -> WorkingMemory:
    wm = WorkingMemory(parse_goal_description(text, ["Tower"]))
    opts = dict(overrule_m=100.0, overrule_min_fixes=3, absent_within_m=50.0, overrule_spreads=2.0)
    wm.set_map({n: np.array(p, dtype=float) for n, p in landmarks.items()}, 5.0, **{**opts, **over})
    return wm


def _corridors(city: ToyCity, start: int = 0, shift=(0.0, 0.0), ids=None) -> CorridorGraph:
    """The toy city's waypoints as a map in the frame of a take-off at `start`, moved by `shift`;
    `ids` renumbers them (map ids need not be the vehicle's)."""
    n = city.size * city.size
    ids = list(range(n)) if ids is None else ids
    xy = np.zeros((n, 2))
    adj: list[tuple[int, ...]] = [()] * n
    for node in range(n):
        if divmod(node, city.size) in city.blocked:
            continue
        xy[ids[node]] = np.array(city.xy(node)) - np.array(city.xy(start)) + shift
        adj[ids[node]] = tuple(ids[m.node] for m in city.moves(node))
    return CorridorGraph(xy, tuple(adj))


def _agent(**over) -> GraphAgent:
    return GraphAgent(replace(variant_config("geometric"), **over), ["Tower"])


# ------------------------------------------------------------------------------------ working memory
def test_map_landmarks_seed_the_estimate_before_any_sighting():
    wm = _memory({"Tower": (200.0, 200.0)})
    est = wm.estimate()
    assert est is not None and est.landmarks == ("Tower",)
    assert np.allclose(wm.target(), np.array([200.0, 200.0]) + 140.0 * np.array([0.5 ** 0.5, 0.5 ** 0.5]))
    assert wm.landmark("Tower")[1] == 5.0  # the map's uncertainty is the landmark's spread
    assert wm.landmark("Tower", live_only=True) is None  # ... and it is not a live fix


def test_a_live_fix_far_from_the_map_overrules_it():
    wm = _memory({"Tower": (200.0, 200.0)})
    truth = np.array([400.0, 200.0])  # the map is 200 m off
    for step in range(2):
        pos = np.array([50.0 * step, 0.0])
        wm.observe(step, pos, (sighting("Tower", pos, truth),))
    assert "Tower" in wm.map_landmarks  # two fixes could be a false detection: the map stands
    wm.observe(2, np.array([100.0, 0.0]), (sighting("Tower", (100.0, 0.0), truth),))
    assert "Tower" not in wm.map_landmarks and "overruled" in wm.map_dropped["Tower"].why
    assert wm.map_dropped["Tower"].step == 2
    assert np.allclose(wm.landmark("Tower")[0], truth)
    assert np.allclose(wm.target(), truth + 140.0 * np.array([0.5 ** 0.5, 0.5 ** 0.5]))


def test_live_fixes_that_agree_with_the_map_keep_it():
    wm = _memory({"Tower": (200.0, 200.0)})
    rng = np.random.default_rng(1)
    for step in range(8):
        pos = np.array([30.0 * step, 0.0])
        wm.observe(step, pos, (sighting("Tower", pos, np.array([200.0, 200.0]) + rng.normal(0, 25, 2)),))
    wm.observe(8, np.zeros(2), (sighting("Tower", (0, 0), (-300.0, 90.0)),))  # one false detection
    assert "Tower" in wm.map_landmarks and not wm.map_dropped
    assert np.allclose(wm.landmark("Tower")[0], [200.0, 200.0])  # the map, not the noisier live median


def test_scattered_fixes_need_more_than_the_floor_to_overrule():
    # three noisy fixes whose median is 120 m off: beyond the 100 m floor, within 2 standard errors of their scatter
    fixes = [(320.0, 200.0), (200.0, 400.0), (380.0, 120.0)]
    wm = _memory({"Tower": (200.0, 200.0)})
    for step, p in enumerate(fixes):
        wm.observe(step, np.zeros(2), (sighting("Tower", (0, 0), p),))
    assert "Tower" in wm.map_landmarks
    exact = _memory({"Tower": (200.0, 200.0)})
    for step in range(3):
        exact.observe(step, np.zeros(2), (sighting("Tower", (0, 0), (320.0, 200.0)),))
    assert "Tower" not in exact.map_landmarks  # the same offset, seen consistently: overruled


def test_a_map_landmark_never_seen_when_passed_close_is_dropped():
    wm = _memory({"Tower": (200.0, 200.0), "Kiasma": (0.0, 400.0)})
    wm.observe(0, np.array([150.0, 150.0]), (sighting("Kiasma", (150, 150), (0.0, 400.0)),))
    wm.passed(0, np.array([150.0, 150.0]))  # 71 m away: not close enough to tell
    assert set(wm.map_landmarks) == {"Tower", "Kiasma"}
    wm.observe(1, np.array([200.0, 160.0]), (sighting("Kiasma", (200, 160), (0.0, 400.0)),))
    wm.passed(1, np.array([200.0, 160.0]))  # 40 m from the map's Tower, and it is not there
    assert "Tower" not in wm.map_landmarks and "absent" in wm.map_dropped["Tower"].why
    assert wm.estimate() is None  # the description's only landmark is unknown now
    wm.passed(2, np.array([0.0, 380.0]))
    assert "Kiasma" in wm.map_landmarks  # seen live: it exists, whatever the distance


def test_the_goal_is_never_taken_from_the_map():
    wm = _memory({"Tower": (200.0, 200.0), "Cafe Aalto": (300.0, 300.0), "Stockmann": (0.0, 500.0)})
    assert wm.map_refused == ("Cafe Aalto",)
    assert "Cafe Aalto" not in wm.map_landmarks and wm.landmark("Cafe Aalto") is None
    assert wm.goal_fix is None
    assert not np.allclose(wm.target(), [300.0, 300.0])  # the target is the description's estimate


# ------------------------------------------------------------------------------------ the agent
def test_agent_knows_the_goal_region_at_take_off_and_flies_a_shortest_route():
    city = ToyCity()
    knowledge = MapKnowledge({"Tower": (200.0, 200.0)}, 5.0, _corridors(city))
    plain, mapped = _agent(), _agent()
    plain.reset(DESCRIPTION)
    mapped.reset(DESCRIPTION, map_knowledge=knowledge)
    plain.act(city.observe(0, 0, 60, see_landmarks=False))
    mapped.act(city.observe(0, 0, 60, see_landmarks=False))
    assert plain.summary()["target_estimate"] is None
    assert mapped.summary()["target_estimate"] is not None
    mapped.reset(DESCRIPTION, map_knowledge=knowledge)
    arrived, node, trail = city.fly(mapped, start=0)
    assert arrived and abs(city.xy(node)[0] - 300) + abs(city.xy(node)[1] - 300) <= 50
    assert len(trail) - 1 <= 12  # Manhattan distance from (0, 0) to the café, less what is read from 60 m
    summary = mapped.summary()
    assert summary["map"]["moves_snapped"] > 0 and summary["map"]["moves_unsnapped"] == 0
    assert summary["goal_read_at"] is not None


def test_agent_with_a_goal_named_map_entry_reads_the_name_before_arriving():
    city = ToyCity(pois={})  # the café's sign is never readable
    agent = _agent()
    knowledge = MapKnowledge({"Tower": (200.0, 200.0), "Cafe Aalto": (300.0, 300.0)}, 5.0, _corridors(city))
    agent.reset(DESCRIPTION, map_knowledge=knowledge)
    arrived, _, _ = city.fly(agent, start=0, limit=40)
    assert not arrived  # the map's "Cafe Aalto" is never the goal
    assert agent.summary()["map"]["refused_goal_named"] == ["Cafe Aalto"]
    assert agent.summary()["goal_read_at"] is None
    # with the sign readable the agent arrives, and only after reading it live
    city = ToyCity()
    agent.reset(DESCRIPTION, map_knowledge=knowledge)
    arrived, _, trail = city.fly(agent, start=0)
    assert arrived
    frames = agent.state.dynamic.trajectory_history
    assert np.allclose(agent.summary()["goal_read_at"], [300.0, 300.0])  # read live, where the sign is
    assert any(f.strategy == "locate" for f in frames[:-1]) and frames[-1].movement["kind"] == "arrive"


def test_agent_logs_a_displaced_map_landmark_overruled_by_what_it_sees():
    city = ToyCity()  # the Tower really is at (200, 200)
    agent = _agent()
    agent.reset(DESCRIPTION, map_knowledge=MapKnowledge({"Tower": (200.0, -200.0)}, 5.0, _corridors(city)))
    arrived, node, _ = city.fly(agent, start=0)
    assert arrived and abs(city.xy(node)[0] - 300) + abs(city.xy(node)[1] - 300) <= 50
    dropped = agent.summary()["map"]["dropped"]
    assert "overruled" in dropped["Tower"]["why"]
    logged = [f.map_dropped for f in agent.state.dynamic.trajectory_history if f.map_dropped]
    assert logged == [{"Tower": dropped["Tower"]["why"]}]


def test_moves_are_matched_to_map_waypoints_by_position_not_by_id():
    # a wall east of the take-off with its only gap 200 m south: the way to the café (NE) is round the wall's end
    city = ToyCity(blocked={(i, 5) for i in range(1, 9)})
    start = city.node(4, 0)
    ids = [int(i) for i in np.random.default_rng(4).permutation(city.size * city.size)]  # the map's own numbering
    knowledge = MapKnowledge({"Tower": (200.0, 0.0)}, 5.0, _corridors(city, start, ids=ids))
    plain, mapped = _agent(), _agent()
    plain.reset(DESCRIPTION)
    mapped.reset(DESCRIPTION, map_knowledge=knowledge)
    arrived_p, _, trail_p = city.fly(plain, start=start)
    arrived_m, _, trail_m = city.fly(mapped, start=start)
    assert arrived_p and arrived_m
    assert len(trail_m) - 1 <= 22 < 40 <= len(trail_p) - 1  # the map knows the gap; the plain agent finds it
    assert mapped.summary()["map"]["moves_unsnapped"] == 0


def test_moves_beyond_the_snap_distance_are_not_matched():
    city = ToyCity()
    graph = _corridors(city, shift=(30.0, 0.0))  # every map waypoint 30 m east of the vehicle's
    cm = CorridorMap(graph, snap_m=15.0)
    assert cm.snap(np.array([0.0, 0.0])) is None
    assert CorridorMap(graph, snap_m=35.0).snap(np.array([0.0, 0.0])) == 0
    agent = _agent()
    agent.reset(DESCRIPTION, map_knowledge=MapKnowledge({"Tower": (200.0, 200.0)}, 5.0, graph))
    arrived, _, _ = city.fly(agent, start=0)
    summary = agent.summary()["map"]
    assert arrived  # costed as without a map
    assert summary["moves_snapped"] == 0 and summary["moves_unsnapped"] > 0


def test_use_map_false_ignores_the_map():
    city = ToyCity()
    a, b = _agent(use_map=False), _agent()
    a.reset(DESCRIPTION, map_knowledge=MapKnowledge({"Tower": (200.0, -200.0)}, 5.0, _corridors(city)))
    b.reset(DESCRIPTION)
    assert city.fly(a, start=0)[2] == city.fly(b, start=0)[2]
    assert a.summary()["map"] is None


def test_map_knowledge_refuses_malformed_input():
    with pytest.raises(MapKnowledgeError, match="finite"):
        MapKnowledge({"Tower": (float("nan"), 0.0)})
    with pytest.raises(MapKnowledgeError, match="uncertainty_m"):
        MapKnowledge({}, -1.0)
    with pytest.raises(MapKnowledgeError, match="links to"):
        CorridorGraph(np.zeros((2, 2)), ((1,), (5,)))
    with pytest.raises(MapKnowledgeError, match=r"\(n, 2\)"):
        CorridorGraph(np.zeros((0, 2)), ())

"""Locate's scene graph: the goal among goal-named signs, by the instruction's relation."""

from dataclasses import replace

import numpy as np

from onboard.agent.agent import GraphAgent
from onboard.agent.goal_description import GoalDescription, Relation
from onboard.agent.scene_graph import SceneGraph
from onboard.agent.settings import AgentConfig
from tests.agent.toy_city import ToyCity

NORTH_OF_TOWER = GoalDescription("Cafe Aalto is 150 m north of Tower.", (Relation("offset", ("Tower",), 0, 150.0),))
TOWER = {"Tower": np.array([200.0, 200.0])}


def _graph(*signs):
    g = SceneGraph()
    for name, xy, goal in signs:
        g.add(name, np.zeros(2), float(np.degrees(np.arctan2(xy[0], xy[1])) % 360), float(np.hypot(*xy)), goal)
    return g


def test_query_picks_the_candidate_the_relation_describes():
    g = _graph(("Cafe Aalto", (200.0, 50.0), True), ("Cafe Aalto", (200.0, 340.0), True),
               ("Kiosk", (220.0, 330.0), False))
    best, scores = g.query(NORTH_OF_TOWER, TOWER)
    assert best is not None and abs(best.xy[1] - 340.0) < 1e-6
    edges = g.edges(best, TOWER)
    assert ("N of", "Tower", 140.0) in edges and any(e[0] == "near" and e[1] == "Kiosk" for e in edges)
    node, how = g.choose(NORTH_OF_TOWER, TOWER, np.array([200.0, 0.0]))
    assert node is best and how == "graph"


def test_signs_read_twice_are_one_node_and_a_contradicted_lone_sign_is_not_the_goal():
    g = _graph(("Cafe Aalto", (200.0, 50.0), True), ("Cafe Aalto", (210.0, 55.0), True))
    assert len(g.candidates()) == 1 and g.candidates()[0].reads == 2
    assert g.choose(NORTH_OF_TOWER, TOWER, np.zeros(2)) == (None, "contradicted")


def test_without_the_relations_landmark_the_nearest_sign_is_kept_and_a_model_may_pick():
    g = _graph(("Cafe Aalto", (0.0, 100.0), True), ("Cafe Aalto", (0.0, 400.0), True))
    node, how = g.choose(NORTH_OF_TOWER, {}, np.zeros(2))
    assert how == "nearest" and node.xy[1] < 200

    class Model:
        calls = 0

        def generate_json(self, messages, schema):
            Model.calls += 1
            assert "Cafe Aalto is 150 m north of Tower" in messages[-1]["content"]
            return '{"candidate": 1}'

    node, how = g.choose(NORTH_OF_TOWER, {}, np.zeros(2), model=Model())
    assert how == "model" and node.xy[1] > 300
    g.choose(NORTH_OF_TOWER, {}, np.zeros(2), model=Model())
    assert Model.calls == 1  # asked once for the same candidates


def _fly(use_scene_graph):
    # Two cafés of one chain: 150 m south of the Tower (passed first from the south) and 150 m north of it.
    city = ToyCity(landmarks={"Tower": (200.0, 200.0)}, pois={"Cafe Aalto": (200.0, 50.0)},
                   more_pois=(("Cafe Aalto", (200.0, 350.0)),))
    agent = GraphAgent(replace(AgentConfig(), use_scene_graph=use_scene_graph, reader="parser"), ["Tower"])
    agent.reset("Cafe Aalto is 150 m north of Tower.")
    arrived, node, _ = city.fly(agent, start=city.node(0, 4), limit=40)
    return arrived, city.xy(node), agent


def test_flight_arrives_at_the_cafe_north_of_the_tower_only_with_the_scene_graph():
    arrived, xy, agent = _fly(True)
    assert arrived and xy[1] >= 300, xy
    assert agent.state.static.scene is not None and len(agent.state.static.scene.candidates()) == 2
    arrived, xy, _ = _fly(False)
    assert arrived and xy[1] <= 100, xy  # the last sign read wins: the café south of the Tower

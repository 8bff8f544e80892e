"""The simulator's world is built from the onboard map: one street graph, not two."""

from __future__ import annotations

import numpy as np

from tests.sim._world_fixture import helsinki


def test_the_world_graph_is_the_maps_graph(helsinki_map):
    world = helsinki()  # built by sim.world.cache.load_world -> build_map -> build_world (or its cache)
    assert world.graph is world.map.graph and world.city is world.map
    g, mg = world.graph, helsinki_map.graph
    assert g.n_nodes == mg.n_nodes and np.array_equal(g.xy, mg.xy) and g.adj == mg.adj
    assert g.network_type == mg.network_type == helsinki_map.header.network_type
    assert world.network_choice == helsinki_map.header.network_scores
    assert [b.name for b in world.landmarks] == [b.name for b in helsinki_map.landmarks]
    assert len(world.city.buildings) == len(helsinki_map.buildings) and len(world.city.pois) == len(helsinki_map.pois)
    assert world.map.header.extract_sha256 == helsinki_map.header.extract_sha256


def test_world_goals_come_from_the_maps_places(helsinki_map):
    world = helsinki()
    names = {p.name for p in helsinki_map.pois}
    assert len(world.goals) > 500 and all(p.name in names for p in world.goals)
    assert len(world.goals) == len(world.goal_nodes)

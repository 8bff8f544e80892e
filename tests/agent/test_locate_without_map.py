"""Locate without an onboard map: a goal read in the middle of a block, farther than the arrival distance from every street."""

from __future__ import annotations

import math

from onboard.agent.agent import GraphAgent, variant_config
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


def _city() -> ToyCity:
    # the sign stands where waypoint (6, 6) would be: every street passes 50 m from it, beyond arrive_within_m (45)
    return ToyCity(pois={"Cafe Aalto": (300.0, 300.0)}, blocked={(6, 6)})


def test_arrives_at_the_nearest_street_instead_of_flying_off():
    city = _city()
    agent = GraphAgent(variant_config("geometric"), ["Tower"], name="geometric")
    assert agent.config.arrive_within_m < 50.0
    agent.reset(DESCRIPTION)
    arrived, node, trail = city.fly(agent, start=0, limit=60)
    assert arrived
    x, y = city.xy(node)
    assert math.hypot(x - 300.0, y - 300.0) <= 50.0 + 1e-6
    frames = agent.state.dynamic.trajectory_history
    read_at = next(f.timestep for f in frames if f.strategy == "locate")
    # after the name was read the drone stays among the streets round it: none of them farther than twice
    # the read range (60 m) from the sign, where the old frontier search flew off hundreds of metres
    for n in trail[read_at:]:
        assert math.hypot(city.xy(n)[0] - 300.0, city.xy(n)[1] - 300.0) <= 120.0 + 1e-6


def test_looks_at_every_street_round_the_goal_before_settling():
    city = _city()
    agent = GraphAgent(variant_config("geometric"), ["Tower"], name="geometric")
    agent.reset(DESCRIPTION)
    arrived, node, trail = city.fly(agent, start=0, limit=60)
    assert arrived
    sm = agent.state.static.street_map
    fix = agent.state.static.memory.goal_fix
    reach = 2.0 * agent.state.static.memory.read_range(agent.config.arrive_within_m)
    assert not [n for n in sm.frontier() if math.dist(sm.xy[n], fix) <= reach]


def test_a_goal_far_along_a_ray_without_a_distance_is_found():
    """"East of Tower" with the café 450 m out: the search pushes the ray's point out as it looks."""
    from dataclasses import replace

    def fly(ray_max_m: float):
        city = ToyCity(size=13, landmarks={"Tower": (50.0, 300.0)}, pois={"Cafe Aalto": (500.0, 300.0)})
        agent = GraphAgent(replace(variant_config("geometric"), ray_max_m=ray_max_m), ["Tower"], name="geometric")
        agent.reset("Cafe Aalto is east of Tower.")
        arrived, _, _ = city.fly(agent, start=city.node(6, 0), limit=60)
        return arrived, agent.state.static.memory.ray_reach_m

    assert fly(150.0) == (False, 150.0)  # the point stays 150 m out: the search never gets that far
    arrived, reach = fly(600.0)
    assert arrived and reach > 150.0

"""Exploring for an unseen landmark: the street sightings' centroid is a place to head for once, not to circle."""

from __future__ import annotations

import math
from dataclasses import replace

from onboard.agent.agent import GraphAgent, variant_config
from tests.agent.toy_city import ToyCity

CRUISE = 25.0
# two landmarks the description does not name stand by the take-off; "Tower" is at the far corner and shows
# only from within 150 m (hidden by the blocks); the café is 100 m north of it
CITY = dict(size=13, landmarks={"Kiosk": (150.0, 100.0), "Hall": (100.0, 200.0), "Tower": (550.0, 500.0)},
            pois={"Cafe Aalto": (550.0, 600.0)})


def _fly(limit=80):
    city = ToyCity(**CITY)
    agent = GraphAgent(variant_config("geometric"), list(CITY["landmarks"]), name="geometric")
    agent.reset("Cafe Aalto is about 100 m north of Tower.")
    node, alt, trail, spent_at = 0, None, [0], None
    for step in range(limit + 1):
        base = city.observe(node, step, limit - step)
        x, y = city.xy(node)
        shown = tuple(s for s in base.landmarks if s.name != "Tower" or s.distance <= 150.0)
        obs = replace(base, landmarks=shown, altitude_m=alt or CRUISE, look_up_ceiling_m=120.0,
                      pois=() if alt else base.pois)
        action = agent.act(obs)
        if spent_at is None and agent.state.dynamic.centroid_spent:
            spent_at = step
        if action.kind == "arrive":
            return True, trail, spent_at, agent
        if step == limit:
            break
        if action.kind == "look_up":  # up there until a come-down (here, or on the way to the next waypoint)
            alt = action.altitude_m
        elif action.kind == "come_down":
            alt = action.altitude_m  # None: to cruise; else part of the way down
        if action.node is not None:
            node = action.node
            trail.append(node)
    return False, trail, spent_at, agent


def test_the_cluster_by_the_take_off_is_left_once_looked_over_and_the_far_landmark_found():
    arrived, trail, spent_at, agent = _fly()
    d = agent.state.dynamic
    assert d.look_ups >= 1 and spent_at is not None
    # spent only after a look-up, near where it was flown
    first_up = next(f.timestep for f in d.trajectory_history if f.movement.get("kind") == "look_up")
    assert spent_at > first_up
    assert arrived


def test_never_spent_before_a_look_up():
    city = ToyCity(**CITY)
    agent = GraphAgent(replace(variant_config("geometric"), use_look_up=False), list(CITY["landmarks"]),
                       name="geometric")
    agent.reset("Cafe Aalto is about 100 m north of Tower.")
    node = 0
    for step in range(30):
        base = city.observe(node, step, 30 - step)
        obs = replace(base, landmarks=tuple(s for s in base.landmarks if s.name != "Tower"))
        action = agent.act(obs)
        assert not agent.state.dynamic.centroid_spent
        node = action.node
    near = [n for n in agent.state.dynamic.trail if math.dist(city.xy(n), (125.0, 150.0)) <= 150.0]
    assert near  # it went to the cluster

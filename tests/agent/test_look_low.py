"""The agent looks low (down among the shop fronts) while searching for a name it cannot read from cruise."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from onboard.agent.agent import GraphAgent, variant_config
from onboard.vocab.observation import AgentObservation
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
CRUISE = 25.0


def _agent(**over):
    return GraphAgent(replace(variant_config("geometric"), **over), ["Tower"], name="geometric")


def _fly(city, agent, floor=10.0, limit=60, readable_from_cruise=False):
    """One mission where the landmark shows from the streets and the goal's sign is read only from below
    cruise (unless `readable_from_cruise`), as a camera reads small shop lettering; returns (arrived, look-lows
    asked: (step, node, altitude), observations)."""
    agent.reset(DESCRIPTION)
    node, alt, looks, seen = 0, None, [], []
    for step in range(limit + 1):
        base = city.observe(node, step, limit - step)
        low = alt is not None and alt < CRUISE
        obs: AgentObservation = replace(base, altitude_m=alt or CRUISE, look_low_floor_m=floor,
                                        pois=base.pois if (low or readable_from_cruise) else ())
        seen.append(obs)
        alt = None
        action = agent.act(obs)
        if action.kind == "arrive":
            return True, looks, seen
        if step == limit:
            break
        if action.kind == "look_low":
            looks.append((step, node, action.altitude_m))
            if floor is not None and floor <= action.altitude_m < CRUISE:
                alt = action.altitude_m
            continue
        assert action.kind == "move", action
        node = action.node
    return False, looks, seen


def test_looks_low_while_searching_and_reads_the_goal_down_there():
    city = ToyCity()
    agent = _agent()
    arrived, looks, seen = _fly(city, agent)
    assert arrived and looks
    cfg = agent.config
    assert all(alt == cfg.look_low_alt_m for _, _, alt in looks)
    frames = agent.state.dynamic.trajectory_history
    for step, _, _ in looks:
        assert frames[step].strategy == "search"  # not while navigating towards the estimate
        assert frames[step].movement == {"kind": "look_low", "altitude_m": cfg.look_low_alt_m}
    where = [np.array(city.xy(n)) for _, n, _ in looks]
    assert all(np.linalg.norm(a - b) >= cfg.look_low_spacing_m for i, a in enumerate(where) for b in where[i + 1:])
    # the last look-low read the goal: the drone arrives within reach of it
    assert agent.state.static.memory.goal_fix is not None


def test_no_look_low_unless_the_vehicle_offers_one():
    city = ToyCity()
    arrived, looks, _ = _fly(city, _agent(), floor=None, limit=40)
    assert looks == [] and not arrived  # the oracle-like vehicle offers none; the name stays unread


def test_no_look_low_when_the_name_reads_from_cruise():
    arrived, looks, _ = _fly(ToyCity(), _agent(), readable_from_cruise=True)
    assert arrived and looks == []


def test_never_below_the_floor_and_off_when_zero():
    _, looks, _ = _fly(ToyCity(), _agent(look_low_alt_m=5.0), floor=15.0)
    assert looks and all(alt == 15.0 for _, _, alt in looks)
    _, looks, _ = _fly(ToyCity(), _agent(look_low_alt_m=0.0), limit=40)
    assert looks == []
    _, looks, _ = _fly(ToyCity(), _agent(), floor=CRUISE, limit=40)  # nothing below cruise on offer
    assert looks == []


def test_look_lows_are_limited():
    city = ToyCity(pois={"Cafe Aalto": (900.0, 900.0)})  # not where the words put it: searched in vain
    _, looks, _ = _fly(city, _agent(max_look_lows=3), limit=80)
    assert len(looks) == 3

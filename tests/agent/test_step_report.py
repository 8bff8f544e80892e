"""The agent_step payload of real agent steps on the toy city: the search region it carries for the dashboard."""

import math
from dataclasses import replace

from contract.messages import REGION_MOST_VERTICES, AgentStep, decode_payload
from onboard.agent.agent import GraphAgent, variant_config
from onboard.agent.step_report import step_payload
from tests.agent.toy_city import ToyCity


def _fly_reporting(city: ToyCity, names: list[str], description: str, start: int, limit: int):
    """Fly a mission, keeping each step's payload as the supervisor would publish it (and its wire round trip)."""
    agent = GraphAgent(replace(variant_config("geometric")), names, name="geometric")
    agent.reset(description)
    steps: list[AgentStep] = []
    act = agent.act

    def reporting(observation):
        action = act(observation)
        st = agent.state
        payload = step_payload(st, st.dynamic.trajectory_history[-1])
        assert decode_payload("agent_step", payload.encode()) == payload
        steps.append(payload)
        return action

    agent.act = reporting
    arrived = city.fly(agent, start=start, limit=limit)[0]
    return arrived, steps


def _inside(ring, p) -> bool:
    """`p` in the convex counter-clockwise `ring` (edges included)."""
    return all((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= -1e-6
               for a, b in zip(ring, ring[1:] + ring[:1]))


def test_each_step_carries_the_unseen_part_of_the_described_arc_and_it_shrinks_as_the_search_sweeps():
    tower = (150.0, 500.0)
    r = math.radians(110.0)  # the goal 20 degrees off "east": near the end of the arc, so the search sweeps it
    goal = (tower[0] + 500.0 * math.sin(r), tower[1] + 500.0 * math.cos(r))
    city = ToyCity(size=21, landmarks={"Tower": tower}, pois={"Cafe Aalto": goal}, view_range=2000.0)
    arrived, steps = _fly_reporting(city, ["Tower"], "Cafe Aalto is about 500 m east of Tower.", city.node(10, 0), 80)
    assert arrived
    with_region = [s for s in steps if s.search_region is not None]
    assert with_region and with_region[0].step == 0  # the Tower is in sight from take-off: the arc is known at once
    first, last = with_region[0].search_region, with_region[-1].search_region
    assert 3 <= len(first.outline) <= REGION_MOST_VERTICES
    # the outline runs round the arc 500 m east of the Tower (the agent's frame: from take-off), the point
    # estimate (the arc's middle) inside it
    home = city.xy(city.node(10, 0))
    tx, ty = tower[0] - home[0], tower[1] - home[1]
    assert _inside(list(first.outline), with_region[0].target_estimate)
    assert all(abs(math.hypot(x - tx, y - ty) - 500.0) < 100.0 and x > tx for x, y in first.outline)
    # a 45 degree arc, 100 m deep at 500 m: some 4 ha before anything was looked at
    assert 2.5e4 < first.unseen_m2 < 6e4
    assert last.unseen_m2 < first.unseen_m2  # what the sweep has looked at is no longer in it
    assert {s.strategy for s in with_region} >= {"navigate", "search"}
    # once the goal's name is read the search is over: no region is left to draw
    read = [s for s in steps if s.goal_fix is not None]
    assert read and all(s.search_region is None for s in read)


def test_a_between_relation_gives_no_region_to_draw():
    city = ToyCity(landmarks={"Tower": (100.0, 200.0), "Kiosk": (300.0, 200.0)}, pois={"Cafe Aalto": (200.0, 200.0)})
    _, steps = _fly_reporting(city, ["Tower", "Kiosk"], "Cafe Aalto is between Tower and Kiosk.", 0, 12)
    assert steps and any(s.target_estimate is not None for s in steps)
    assert all(s.search_region is None for s in steps)

"""Branch failover past the controller's thresholds, and the search / navigate timeouts."""

from dataclasses import replace

import numpy as np

from onboard.agent import branches
from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
TARGET = np.array([200.0, 200.0]) + 140.0 * np.array([np.sqrt(0.5), np.sqrt(0.5)])


def _agent(**over):
    return GraphAgent(replace(AgentConfig(), reader="parser", **over), ["Tower"])


def _steps(agent, city, node, first, n, limit=60):
    for step in range(first, first + n):
        action = agent.act(city.observe(node, step, limit - step))
        node = action.node
    return node


def test_alternatives_are_the_estimate_then_the_landmark():
    city, agent = ToyCity(), _agent()
    agent.reset(DESCRIPTION)
    agent.act(city.observe(0, 0, 60))
    alts = branches.alternatives(agent.state)
    assert len(alts) == 2
    assert np.linalg.norm(alts[0] - TARGET) < 5 and np.linalg.norm(alts[1] - [200, 200]) < 5


def test_failover_switches_the_branch_to_the_next_aim():
    city, agent = ToyCity(pois={}), _agent(failover_reflections=2)
    agent.reset(DESCRIPTION)
    node = _steps(agent, city, 0, 0, 2)
    d = agent.state.dynamic
    assert not d.failed_aims and np.linalg.norm(branches.aim(agent.state) - TARGET) < 5
    d.branch_errors = 2  # two controller reflections in this branch (what update_odometry counts)
    agent.act(city.observe(node, 2, 58))
    assert [e["why"] for e in d.branch_events] == ["failover"]
    assert np.linalg.norm(d.failed_aims[0] - TARGET) < 5
    assert np.linalg.norm(branches.aim(agent.state) - [200, 200]) < 5  # the next branch: the Tower itself
    assert d.branch_events[0]["to"] == "navigate" and d.branch_errors == 0
    assert "failover" in d.replan_triggers
    frame = d.trajectory_history[-1]
    assert frame.strategy == "navigate"
    # the effect of that move is judged against the new aim
    assert np.linalg.norm(d.aim - [200, 200]) < 5


def test_controller_reflections_fail_branches_in_flight_and_not_without_the_switch():
    city = ToyCity(pois={})  # the café is nowhere: every branch ends in vain
    over = dict(max_consecutive_failures=2, failover_reflections=1, use_search_timeout=False)
    agent = _agent(**over)
    agent.reset(DESCRIPTION)
    city.fly(agent, start=0, limit=40)
    events = agent.summary()["branch_events"]
    assert any(e["why"] == "failover" and e["aim"] is not None for e in events), events
    off = _agent(**over, use_failover=False)
    off.reset(DESCRIPTION)
    city.fly(off, start=0, limit=40)
    assert off.summary()["branch_events"] == [] and off.state.dynamic.branch_errors == 0


def test_search_times_out_to_the_next_sub_goal():
    city = ToyCity(pois={})
    agent = _agent(search_timeout=4, use_failover=False, navigate_timeout=0)
    agent.reset(DESCRIPTION)
    node, step = 0, 0
    d = agent.state.dynamic
    while step < 40 and not d.branch_events:
        node = agent.act(city.observe(node, step, 60 - step)).node
        step += 1
    assert d.branch_events, "the search never timed out"
    ev = d.branch_events[0]
    assert ev["why"] == "search_timeout" and ev["from"] == "search"
    searched = [f.strategy for f in d.trajectory_history[:-1]]
    assert searched[-4:] == ["search"] * 4  # four steps of search, then it ended
    assert d.trajectory_history[-1].strategy == ev["to"] == "navigate"  # heading for the Tower (next aim)
    assert np.linalg.norm(np.array(ev["aim"]) - [200, 200]) < 5
    off = _agent(search_timeout=4, use_failover=False, navigate_timeout=0, use_search_timeout=False)
    off.reset(DESCRIPTION)
    city.fly(off, start=0, limit=40)
    assert off.summary()["branch_events"] == []


def test_navigate_times_out_when_it_stalls_not_while_it_gets_closer():
    city = ToyCity(pois={})
    moving = _agent(navigate_timeout=3, use_failover=False, search_timeout=0)
    moving.reset(DESCRIPTION)
    _steps(moving, city, 0, 0, 6)
    assert moving.state.dynamic.branch_events == []  # each move brings the aim closer
    stalled = _agent(navigate_timeout=3, use_failover=False, search_timeout=0)
    stalled.reset(DESCRIPTION)
    d = stalled.state.dynamic
    for step in range(8):  # every commanded move is refused: the drone stays at the take-off waypoint
        stalled.act(city.observe(0, step, 60 - step))
        if d.branch_events:
            break
    assert d.branch_events and d.branch_events[0]["why"] == "navigate_timeout", d.branch_events
    assert d.branch_events[0]["step"] >= 4  # never before three steps without getting closer
    assert np.linalg.norm(branches.aim(stalled.state) - d.failed_aims[0]) > stalled.config.search_radius_m

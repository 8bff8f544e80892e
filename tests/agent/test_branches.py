"""The search / navigate timeouts end a branch; the next aim is flown."""

from dataclasses import replace

import numpy as np

from onboard.agent import branches
from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from tests.agent.toy_city import ToyCity

# Two relations that disagree: 140 m NE of the Tower is (299, 299), 200 m E of the Kiosk is (300, 100).
DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower and about 200 m east of Kiosk."
ONE_RELATION = "Cafe Aalto is about 140 m north-east of Tower."
LANDMARKS = {"Tower": (200.0, 200.0), "Kiosk": (100.0, 100.0)}
KIOSK_ALONE = np.array([300.0, 100.0])


def _city(**kw):
    return ToyCity(landmarks=dict(LANDMARKS), **kw)


def _agent(**over):
    return GraphAgent(replace(AgentConfig(), reader="parser", **over), ["Tower", "Kiosk"])


def _steps(agent, city, node, first, n, limit=60):
    for step in range(first, first + n):
        action = agent.act(city.observe(node, step, limit - step))
        node = action.node
    return node


def test_alternatives_are_the_fused_estimate_then_each_relation_alone():
    city, agent = _city(), _agent()
    agent.reset(DESCRIPTION)
    agent.act(city.observe(0, 0, 60))
    alts = branches.alternatives(agent.state)
    # the fused estimate (the Tower's relation alone lies within the search radius of it: the same branch)
    assert len(alts) == 2 and np.linalg.norm(alts[0] - agent.state.static.memory.target()) < 1e-6
    assert np.linalg.norm(alts[1] - KIOSK_ALONE) < 5
    agent = _agent()
    agent.reset(ONE_RELATION)
    agent.act(city.observe(0, 0, 60))
    assert len(branches.alternatives(agent.state)) == 1  # never the landmark itself


def _stall(agent):
    """Make navigate's timeout due now: no approach to the aim since navigate_timeout steps ago."""
    d = agent.state.dynamic
    d.branch_best_m, d.branch_best_at = 0.0, d.timestep - agent.config.navigate_timeout


def test_a_timed_out_branch_switches_to_the_next_aim():
    city, agent = _city(pois={}), _agent(navigate_timeout=3, search_timeout=0)
    agent.reset(DESCRIPTION)
    node = _steps(agent, city, 0, 0, 2)
    d = agent.state.dynamic
    fused = agent.state.static.memory.target().copy()
    assert not d.failed_aims and np.linalg.norm(branches.aim(agent.state) - fused) < 1e-6
    _stall(agent)
    agent.act(city.observe(node, 2, 58))
    assert [e["why"] for e in d.branch_events] == ["navigate_timeout"]
    assert np.linalg.norm(d.failed_aims[0] - fused) < 5
    assert np.linalg.norm(branches.aim(agent.state) - KIOSK_ALONE) < 5  # the next branch: the Kiosk's relation
    assert d.branch_events[0]["to"] == "navigate"
    assert "navigate_timeout" in d.replan_triggers
    frame = d.trajectory_history[-1]
    assert frame.strategy == "navigate"
    # the effect of that move is judged against the new aim
    assert np.linalg.norm(d.aim - KIOSK_ALONE) < 5


def test_with_one_relation_a_failed_branch_starts_a_new_round_in_the_same_sub_goal():
    city, agent = _city(pois={}), _agent(navigate_timeout=3, search_timeout=0)
    agent.reset(ONE_RELATION)
    node = _steps(agent, city, 0, 0, 2)
    d = agent.state.dynamic
    _stall(agent)
    agent.act(city.observe(node, 2, 58))
    ev = d.branch_events[0]
    assert ev["why"] == "navigate_timeout" and ev["from"] == ev["to"] == "navigate" and d.failed_aims == []
    assert np.linalg.norm(branches.aim(agent.state) - agent.state.static.memory.target()) < 1e-6


def test_controller_reflections_fail_no_branch():
    """The threshold controller's failover was deleted (it changed no benchmark flight): reflections
    alone never end a branch."""
    city = _city(pois={})
    agent = _agent(max_consecutive_failures=2, use_search_timeout=False)
    agent.reset(DESCRIPTION)
    city.fly(agent, start=0, limit=40)
    assert agent.state.dynamic.lessons, "the controller never reflected: the test shows nothing"
    assert agent.summary()["branch_events"] == []
    assert not hasattr(agent.config, "use_failover")


def test_search_times_out_to_the_next_sub_goal():
    city = _city(pois={})
    agent = _agent(search_timeout=4, navigate_timeout=0)
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
    assert d.trajectory_history[-1].strategy == ev["to"] == "navigate"  # heading for the next aim, 200 m away
    assert np.linalg.norm(np.array(ev["aim"]) - KIOSK_ALONE) < 5
    off = _agent(search_timeout=4, navigate_timeout=0, use_search_timeout=False)
    off.reset(DESCRIPTION)
    city.fly(off, start=0, limit=40)
    assert off.summary()["branch_events"] == []


def test_navigate_times_out_when_it_stalls_not_while_it_gets_closer():
    city = _city(pois={})
    moving = _agent(navigate_timeout=3, search_timeout=0)
    moving.reset(DESCRIPTION)
    _steps(moving, city, 0, 0, 6)
    assert moving.state.dynamic.branch_events == []  # each move brings the aim closer
    stalled = _agent(navigate_timeout=3, search_timeout=0)
    stalled.reset(DESCRIPTION)
    d = stalled.state.dynamic
    for step in range(8):  # every commanded move is refused: the drone stays at the take-off waypoint
        stalled.act(city.observe(0, step, 60 - step))
        if d.branch_events:
            break
    assert d.branch_events and d.branch_events[0]["why"] == "navigate_timeout", d.branch_events
    assert d.branch_events[0]["step"] >= 4  # never before three steps without getting closer
    assert np.linalg.norm(branches.aim(stalled.state) - d.failed_aims[0]) > stalled.config.search_radius_m


def test_under_the_llm_backend_a_timeout_asks_for_a_new_plan_and_the_aim_stays_switched():
    import json

    from tests.agent.test_llm_replan import PLACE, _model

    model, city = _model([json.dumps(PLACE)]), _city(pois={})
    try:
        cfg = replace(AgentConfig(), reader="parser", planner="llm", llm_plan_wait=True, retrieval_interval=0)
        agent = GraphAgent(cfg, ["Tower", "Kiosk"], plan_model=model)
        agent.reset(DESCRIPTION)
        node = _steps(agent, city, 0, 0, 2)
        d = agent.state.dynamic
        version = d.plan_version
        _stall(agent)
        node = agent.act(city.observe(node, 2, 58)).node  # the timeout, in this step's subtask router
        assert d.branch_events[-1]["why"] == "navigate_timeout" and "navigate_timeout" in d.replan_triggers
        agent.act(city.observe(node, 3, 57))  # the next step asks the model again on that trigger
        assert d.trajectory_history[-1].replan_triggers == ["navigate_timeout"] and d.plan_version == version + 1
        assert np.linalg.norm(branches.aim(agent.state) - KIOSK_ALONE) < 5  # the new plan keeps the branch
    finally:
        model.close()

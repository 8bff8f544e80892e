"""Looking over the roofs: perception from height and the benchmark's look-up action."""

from __future__ import annotations

import numpy as np
import pytest

from sim.benchmark.agent_api import Action
from sim.benchmark.episode import ALTITUDE_CEILING_M, run_episode
from sim.benchmark.kinematic import LOOK_UP_TURN_S, LOOK_UP_VERTICAL_SPEED_M_S
from sim.world.perception import OraclePerception
from tests.sim._world_fixture import helsinki


def _names(sightings):
    return {s.name for s in sightings}


def test_higher_camera_sees_a_superset_on_real_nodes():
    w = helsinki()
    p = OraclePerception(w, "perfect")
    nodes = [0, w.graph.n_nodes // 3, w.graph.n_nodes // 2, int(np.argmin([len(v) for v in w.visible]))]
    gained = 0
    for node in nodes:
        cruise = _names(p.landmarks_at(node))
        assert cruise == {w.landmarks[j].name for j in w.visible[node]}  # cruise: the precomputed table
        assert _names(p.landmarks_at(node, w.cruise_alt)) == cruise
        low = _names(p.landmarks_at(node, 60.0))
        high = _names(p.landmarks_at(node, 100.0))
        assert cruise <= low <= high
        gained += len(high) - len(cruise)
    assert gained > 0  # over the roofs some landmark comes into view


def test_sightings_from_above_stay_horizontal():
    w = helsinki()
    node = w.graph.n_nodes // 2
    for s in OraclePerception(w, "perfect").landmarks_at(node, 80.0):
        d = w.landmark(s.name).centroid - w.graph.xy[node]
        assert s.distance == pytest.approx(np.hypot(*d), abs=0.1)


def test_visibility_from_height_is_cached_and_occluders_built_once():
    w = helsinki()
    occ = w.occluders
    assert w.occluders is occ
    a = w.visible_from(5, 70.0)
    assert w.visible_from(5, 70.0) is a
    assert w.visible_from(5) is w.visible[5]


class _Script:
    """An agent that plays a fixed list of actions and keeps every observation."""

    name = "script"

    def __init__(self, actions):
        self.actions = list(actions)
        self.seen = []

    def reset(self, description, seed):
        pass

    def act(self, obs):
        self.seen.append(obs)
        return self.actions.pop(0) if self.actions else Action.arrive()


@pytest.fixture(scope="module")
def task(public_task):
    return public_task


def test_look_up_costs_a_step_and_its_climb_is_in_the_path(task):
    w = helsinki()
    agent = _Script([Action.look_up(60.0)])
    rec = run_episode(w, task, agent, "perfect")
    climb = 60.0 - w.cruise_alt  # up there at the end: no come-down flown
    assert rec["steps"] == 1 and rec["trajectory"] == [task.start_node, task.start_node]
    assert rec["look_ups"] == 1 and rec["refused_look_ups"] == 0
    assert rec["climb_m"] == pytest.approx(climb) and rec["path_m"] == pytest.approx(climb)
    assert rec["flight_s"] == pytest.approx(climb / LOOK_UP_VERTICAL_SPEED_M_S + LOOK_UP_TURN_S, abs=0.1)
    assert rec["look_up_at"] == [[0, task.start_node, 60.0, w.cruise_alt]]  # to, from
    before, after = agent.seen
    assert before.altitude_m == w.cruise_alt and after.altitude_m == 60.0
    assert before.look_up_ceiling_m == ALTITUDE_CEILING_M
    assert after.neighbours == before.neighbours  # the same node
    assert after.pois == ()  # names are not readable from above
    assert _names(after.landmarks) == {w.landmarks[j].name for j in w.visible_from(task.start_node, 60.0)}


def test_moves_after_a_look_up_are_flown_up_there_until_the_come_down(task):
    w = helsinki()
    nxt = int(w.graph.neighbours(task.start_node)[0].node)
    agent = _Script([Action.look_up(60.0), Action.move(nxt), Action.come_down(), Action.come_down()])
    rec = run_episode(w, task, agent, "perfect")
    edge = w.graph.edge_length(task.start_node, nxt)
    assert rec["steps"] == 4 and rec["trajectory"] == [task.start_node, task.start_node, nxt, nxt, nxt]
    assert rec["climb_m"] == pytest.approx(2 * (60.0 - w.cruise_alt))  # up, and down again
    assert rec["path_m"] == pytest.approx(edge + 2 * (60.0 - w.cruise_alt), abs=0.2)
    # the second come-down: nothing to come down from, refused by the vehicle's rule (a step spent)
    assert rec["refused_look_ups"] == 1 and rec["invalid_moves"] == 0
    _, up_here, up_there, down, down_again = agent.seen
    assert up_there.altitude_m == 60.0 and up_there.pois == ()  # the move was flown over the roofs
    assert _names(up_there.landmarks) == {w.landmarks[j].name for j in w.visible_from(nxt, 60.0)}
    assert down.altitude_m == w.cruise_alt == down_again.altitude_m
    assert _names(down.landmarks) == {w.landmarks[j].name for j in w.visible[nxt]}


def test_while_up_there_only_a_further_climb(task):
    w = helsinki()
    rec = run_episode(w, task, _Script([Action.look_up(60.0), Action.look_up(50.0), Action.look_up(60.0),
                                        Action.look_up(90.0)]), "perfect")
    assert rec["look_ups"] == 1 and rec["refused_look_ups"] == 2  # lower and level refused; higher: the same look
    assert rec["climb_m"] == pytest.approx(90.0 - w.cruise_alt)
    assert rec["look_up_at"] == [[0, task.start_node, 60.0, w.cruise_alt], [3, task.start_node, 90.0, 60.0]]


def test_look_up_above_the_ceiling_is_refused_and_not_flown(task):
    w = helsinki()
    agent = _Script([Action.look_up(ALTITUDE_CEILING_M + 10.0), Action.look_up(float("nan")),
                     Action.look_up(w.cruise_alt)])
    rec = run_episode(w, task, agent, "perfect")
    assert rec["steps"] == 3 and rec["refused_look_ups"] == 3
    assert rec["look_ups"] == 0 and rec["climb_m"] == 0 and rec["path_m"] == 0 and rec["flight_s"] == 0
    cruise = {w.landmarks[j].name for j in w.visible[task.start_node]}
    for obs in agent.seen[1:]:
        assert obs.altitude_m == w.cruise_alt and _names(obs.landmarks) == cruise  # nothing seen from above


def test_ceiling_of_the_episode_is_the_safety_envelopes():
    from firmware_bridge.settings import SafetyConfig

    assert ALTITUDE_CEILING_M == SafetyConfig().altitude_ceiling_m


def test_a_lower_ceiling_refuses_what_the_default_allows(task):
    w = helsinki()
    rec = run_episode(w, task, _Script([Action.look_up(80.0), Action.look_up(50.0)]), "perfect",
                      altitude_ceiling_m=60.0)
    assert rec["refused_look_ups"] == 1 and rec["look_ups"] == 1
    assert rec["climb_m"] == pytest.approx(50.0 - w.cruise_alt)

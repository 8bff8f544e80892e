"""Metrics: SPL is 1 on the shortest path and 0 on failure; loop counters count loops."""

from __future__ import annotations

import pytest

from sim.benchmark import metrics
from sim.benchmark.agent_api import Action, Agent, Observation
from sim.benchmark.episode import run_episode
from sim.benchmark.tasks import load_tasks, resolve
from tests.sim._world_fixture import helsinki
from tests.sim.test_tasks_files import PUBLIC


class PathFollower:
    """Knows the shortest path (cheating) and declares arrival at its end."""

    name = "path"

    def __init__(self, path):
        self.path = path

    def reset(self, description, seed):
        self.i = 0

    def act(self, obs: Observation) -> Action:
        self.i += 1
        if self.i >= len(self.path):
            return Action.arrive()
        return Action.move(self.path[self.i])


class Wanderer(PathFollower):
    """Flies back and forth at the start until the step limit."""

    def act(self, obs):
        return Action.move(obs.neighbours[0].node)


def test_spl_formula():
    assert metrics.spl(True, 500, 500) == 1.0
    assert metrics.spl(True, 500, 1000) == 0.5
    assert metrics.spl(False, 500, 500) == 0.0


def test_shortest_path_episode_scores_spl_one():
    w = helsinki()
    _, tasks = load_tasks(PUBLIC)
    rt = resolve(tasks[0], w)
    agent = PathFollower(w.graph.shortest_path(rt.start_node, rt.goal_node, metres=True))
    assert isinstance(agent, Agent)
    rec = run_episode(w, rt, agent, "perfect")
    assert rec["success"] and rec["spl"] == 1.0
    # the fewest-hops path is as short in steps as the task says
    rec = run_episode(w, rt, PathFollower(w.graph.shortest_path(rt.start_node, rt.goal_node)), "perfect")
    assert rec["success"] and rec["steps"] == rt.min_steps and rec["steps_over_min"] == 1.0
    assert rec["spl"] == pytest.approx(min(1.0, rt.shortest_m / rec["path_m"]), abs=1e-3)


def test_failed_episode_scores_zero():
    w = helsinki()
    _, tasks = load_tasks(PUBLIC)
    rt = resolve(tasks[1], w)
    rec = run_episode(w, rt, Wanderer([]), "perfect")
    assert not rec["success"] and rec["spl"] == 0.0 and rec["steps"] == rt.step_limit
    assert rec["ababa"] > 0 and rec["stuck"] > 0 and rec["unique_ratio"] == 0.2


def test_wrong_arrival_is_a_failure():
    w = helsinki()
    _, tasks = load_tasks(PUBLIC)
    rt = resolve(tasks[2], w)
    rec = run_episode(w, rt, PathFollower([rt.start_node]), "perfect")
    assert rec["arrived"] and not rec["success"] and rec["end"] == "wrong_place"


def test_loop_counters():
    assert metrics.count_ababa([1, 2, 1, 2, 1, 2]) == 2
    assert metrics.count_ababa([1, 2, 3, 4, 5]) == 0
    assert metrics.count_stuck([1, 2] * 6) == 3
    assert metrics.count_stuck(list(range(12))) == 0
    assert metrics.unique_ratio(list(range(20))) == 1.0

"""Task files: round trip, errors naming task and field, computed budgets, generation."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from sim.benchmark.tasks import TaskFileError, load_tasks, parse_task_set, resolve, save_tasks
from tests.sim._world_fixture import helsinki

PUBLIC = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "helsinki_public_100.json"

GOOD = {"version": 1, "city": "helsinki", "tasks": [
    {"id": "t001", "start": {"lat": 60.1700, "lon": 24.9400},
     "goal": {"lat": 60.1720, "lon": 24.9450, "name": "Somewhere"},
     "description": "Somewhere is about 300 m north-east of Kiasma.", "min_steps": 31, "step_limit": 78}]}


def test_round_trip(tmp_path):
    city, tasks = load_tasks(PUBLIC)
    out = tmp_path / "tasks.json"
    save_tasks(out, tasks, city)
    assert json.loads(out.read_text()) == json.loads(PUBLIC.read_text())
    city2, tasks2 = load_tasks(out)
    assert city2 == city and [t.to_json() for t in tasks2] == [t.to_json() for t in tasks]


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["tasks"][0].pop("description"), "'description'"),
    (lambda d: d["tasks"][0]["start"].update(lat="north"), "'lat'"),
    (lambda d: d["tasks"][0]["goal"].pop("name"), "'goal.name'"),
    (lambda d: d["tasks"][0]["goal"].update(lon=400), "'lon'"),
    (lambda d: d["tasks"][0].update(min_steps=-3), "'min_steps'"),
    (lambda d: d["tasks"][0].update(step_limit=10), "'step_limit'"),
    (lambda d: d["tasks"][0].pop("start"), "'start'"),
    (lambda d: d["tasks"].append(copy.deepcopy(d["tasks"][0])), "'id'"),
])
def test_malformed_task_names_task_and_field(mutate, field):
    data = copy.deepcopy(GOOD)
    mutate(data)
    with pytest.raises(TaskFileError) as err:
        parse_task_set(data, "f.json")
    assert "task 't001'" in str(err.value) and field in str(err.value)


@pytest.mark.parametrize("data, field", [
    ({"version": 2, "city": "helsinki", "tasks": []}, "'version'"),
    ({"version": 1, "tasks": [{}]}, "'city'"),
    ({"version": 1, "city": "helsinki", "tasks": []}, "'tasks'"),
    ({"version": 1, "city": "helsinki", "tasks": [{"start": {}}]}, "'id'"),
])
def test_malformed_file_level_errors(data, field):
    with pytest.raises(TaskFileError, match=field):
        parse_task_set(data, "f.json")


def test_not_json_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(TaskFileError, match="not valid JSON"):
        load_tasks(p)


def test_budget_computed_when_absent():
    w = helsinki()
    data = copy.deepcopy(GOOD)
    del data["tasks"][0]["min_steps"], data["tasks"][0]["step_limit"]
    _, (task,) = parse_task_set(data)
    rt = resolve(task, w)
    assert rt.min_steps == w.graph.hops_from(rt.start_node)[rt.goal_node]
    assert rt.step_limit == int(np.ceil(2.5 * rt.min_steps))


def test_public_set_matches_the_graph():
    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    assert city == "helsinki" and len(tasks) == 100 and len({t.id for t in tasks}) == 100
    for t in tasks:
        rt = resolve(t, w)
        assert rt.min_steps == w.graph.hops_from(rt.start_node)[rt.goal_node]
        assert rt.step_limit == int(np.ceil(2.5 * rt.min_steps))
        assert t.goal_name in t.description
    steps = np.array([t.min_steps for t in tasks])
    assert 24 <= steps.mean() <= 34 and 5 <= steps.min() and 6 <= steps.std() <= 13


@pytest.mark.slow
def test_generation_is_reproducible():
    from sim.benchmark.generate import generate_tasks

    w = helsinki()
    a = [t.to_json() for t in generate_tasks(w, 20, seed=11)]
    b = [t.to_json() for t in generate_tasks(w, 20, seed=11)]
    assert a == b

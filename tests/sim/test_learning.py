"""The learning run on a few public tasks: real post-flight analysis, real bundles, a real memory file."""

from __future__ import annotations

import json

import pytest

from sim import nav_bench
from tests.sim._world_fixture import PUBLIC, helsinki

TASKS = 3


@pytest.fixture(scope="module")
def world_and_tasks():
    world = helsinki()
    from sim.benchmark.tasks import load_tasks, resolve_all

    city, tasks = load_tasks(PUBLIC)
    return world, resolve_all(city, tasks, world)[:TASKS]


def test_flights_reflect_import_once_and_the_second_flight_reuses_the_lesson(tmp_path, world_and_tasks):
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore
    from sim.benchmark.learning import fly, reflect

    world, tasks = world_and_tasks
    every = list(range(len(tasks)))
    embedder = MiniLMEmbedder.load()
    with ExperienceStore.open(tmp_path / "ground.sqlite", embedder) as ground, \
            ExperienceStore.open(tmp_path / "vehicle.sqlite", embedder) as vehicle:
        first = fly(world, tasks, every, "perfect", store=vehicle)
        assert vehicle.count() == 0                                     # run 1 flew on empty memory
        kinds = [m["type"] for m in first.flights[0]]
        assert kinds[0] == "flight_start" and kinds[1] == "plan" and kinds[-1] == "flight_end"
        assert kinds.count("agent_step") == first.records[0]["steps"] + 1
        counts = reflect(first.flights, ground, vehicle, tmp_path / "bundles")
        assert counts == {"flights": TASKS, "bundles": TASKS, "added": 3 * TASKS, "already_present": 0}
        again = reflect(first.flights, ground, vehicle, tmp_path / "bundles")
        assert (again["added"], again["already_present"]) == (0, 3 * TASKS)   # importing twice adds nothing

        won = [i for i in every if first.records[i]["success"]]
        assert won, "no task of the first three succeeded: nothing to learn from"
        i = won[0]
        hit = vehicle.retrieve_plans(tasks[i].task.description, k=1)[0]
        assert hit.similarity > 0.99 and hit.record.status == "success"
        lesson = json.loads(hit.record.plan_refined)
        assert lesson["goal"]["source"] == "name read" and len(lesson["goal"]["xy_m"]) == 2
        assert lesson["landmarks"]                                       # the map to place it by

        second = fly(world, tasks, every, "perfect", store=vehicle)
    plan = next(m["payload"] for m in second.flights[i] if m["type"] == "plan")
    assert "reused goal read on a past flight" in plan["reason"]
    # Better or equal over the tasks, not on each: flying for the remembered goal can meet a dead end the
    # first flight's route avoided (t002: 26 -> 27 steps) while the others skip their exploration.
    spl = [(a["spl"], b["spl"]) for a, b in zip(first.records, second.records)]
    assert sum(b for _, b in spl) >= sum(a for a, _ in spl), spl
    assert sum(r["steps"] for r in second.records) <= sum(r["steps"] for r in first.records)


def test_cli_learn_writes_both_comparisons(tmp_path, capsys, world_and_tasks):
    out = tmp_path / "learn.json"
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "geometric", "--perception", "prep", "--learn",
                         "--limit", "2", "--learn-dir", str(tmp_path / "mem"), "--json", str(out), "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["same"]["before"]["episodes"] == 2 and data["held_out"]["before"]["episodes"] == 1
    assert data["reimport_all"]["added"] == 0
    assert "same tasks (remembering)" in capsys.readouterr().out
    assert nav_bench.main(["--tasks", str(PUBLIC), "--agent", "greedy", "--learn", "--limit", "1",
                           "--no-progress"]) == 2


def test_lessons_from_another_task_set_only(tmp_path, world_and_tasks):
    from sim.benchmark.learning import format_table, learning_run

    world, tasks = world_and_tasks
    result = learning_run(world, tasks[:1], "perfect", tmp_path / "mem", teacher_tasks=tasks[1:],
                          teacher_name="teacher.json", progress=False)
    assert result["teacher"]["tasks"] == "teacher.json" and result["teacher"]["n"] == 2
    assert result["reflect_teacher"]["flights"] == 2 and result["reflect_teacher"]["bundles"] >= 1
    assert result["from_other"]["before"]["episodes"] == 1 and len(result["records"]["from_other"]) == 1
    # the reported task's own flight never reaches the store it is flown with
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore

    with ExperienceStore.open(tmp_path / "mem" / "vehicle_teacher.sqlite", MiniLMEmbedder.load()) as store:
        missions = {e.record.task_instruction for e in store.iter_experiences("strategic_plan_memory")}
    assert tasks[0].task.description not in missions and missions
    assert "teacher set -> these tasks" in format_table(result)


def test_cli_learn_from_a_missing_file_is_refused(tmp_path, capsys):
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "geometric", "--learn", "--limit", "1", "--no-progress",
                         "--learn-from", str(tmp_path / "nope.json")])
    assert rc == 2 and "nope.json" in capsys.readouterr().err

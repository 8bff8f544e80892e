"""Team search: vehicles decide in the order of their own flight clocks, and sharing really feeds each
agent the others' findings through the fleet's wire code (the figures are `aerie bench team-search`'s)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from sim.team_search import Conductor, extra_starts, fly_team
from tests.sim._world_fixture import helsinki

DEV = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "helsinki_ordinary_dev.json"


def test_the_vehicle_whose_clock_is_earliest_decides_next():
    c = Conductor(3)
    order: list[tuple[int, int]] = []
    legs = {0: [30.0, 30.0, 30.0], 1: [50.0, 5.0], 2: [10.0, 10.0, 10.0, 10.0]}

    def vehicle(i: int) -> None:
        for k, s in enumerate(legs[i]):
            c.turn(i)
            order.append((i, k))
            c.advance(i, s)
        c.done(i)

    threads = [threading.Thread(target=vehicle, args=(i,)) for i in legs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30.0)
    # clocks at each decision: 0:(0,30,60) 1:(0,50) 2:(0,10,20,30); ties go to the lower index
    assert order == [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (0, 1), (2, 3), (1, 1), (0, 2)]


def test_sharing_vehicles_take_each_others_findings_and_fly_differently_for_it():
    from sim.benchmark.tasks import load_tasks, resolve_all

    world = helsinki()
    city, tasks = load_tasks(DEV)
    rt = resolve_all(city, [t for t in tasks if t.id == "d005"], world)[0]
    starts = extra_starts(world, rt, 1, np.random.default_rng(0))
    g = world.graph
    assert len(starts) == 1 and np.hypot(*(g.xy[starts[0]] - g.xy[rt.goal_node])) >= 500.0
    alone = fly_team(world, rt, starts, False, 0, "perfect")
    shared = fly_team(world, rt, starts, True, 0, "perfect")
    assert alone["frames_sent"] == [0, 0] and alone["frames_taken"] == [0, 0]
    assert min(shared["frames_sent"]) > 0 and min(shared["frames_taken"]) > 0
    assert shared["steps"] != alone["steps"] or shared["success"] != alone["success"]

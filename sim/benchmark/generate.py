"""Draw a task set the way PReP did: minimum steps ~ N(30, 10), truncated to the map.

Each task picks a goal POI (unique name, within 50 m of a node, nameable in
words), a start node exactly `k` moves away on the graph where `k` is the drawn
minimum, and a checked description. Fixed seed -> the same file every time.
"""

from __future__ import annotations

import re

import numpy as np

from sim.benchmark.describe import describe_goal
from sim.benchmark.tasks import STEP_LIMIT_FACTOR, Task
from sim.world.world import World

MEAN_STEPS, SD_STEPS, MIN_STEPS = 30.0, 10.0, 5
# Goal names that would read as a direction or a distance ("Cafe E", "Bar 5 m") are skipped.
_CONFUSING_NAME = re.compile(r"\d|(?<![\w.])(?:NE|NW|SE|SW|N|E|S|W)(?!\w)")


def usable_goals(world: World) -> list[int]:
    """Indices into world.goals that make fair goals."""
    lm_names = [lm.name.lower() for lm in world.landmarks]
    out = []
    for i, p in enumerate(world.goals):
        n = p.name.lower()
        if _CONFUSING_NAME.search(p.name) or len(p.name) < 3:
            continue
        if any(n in ln or ln in n for ln in lm_names):
            continue  # "Kiasma" the museum POI would be read as the landmark
        out.append(i)
    return out


def draw_steps(rng: np.random.Generator, max_steps: int) -> int:
    """One draw of N(30, 10) rounded and truncated to [MIN_STEPS, max_steps] by rejection."""
    while True:
        k = int(round(rng.normal(MEAN_STEPS, SD_STEPS)))
        if MIN_STEPS <= k <= max_steps:
            return k


def generate_tasks(world: World, n: int = 100, seed: int = 5, prefix: str = "t") -> list[Task]:
    rng = np.random.default_rng(seed)
    g = world.graph
    goals = usable_goals(world)
    hops_cache: dict[int, np.ndarray] = {}

    def hops(node: int) -> np.ndarray:
        if node not in hops_cache:
            hops_cache[node] = g.hops_from(node)
        return hops_cache[node]

    ecc = {i: int(hops(world.goal_nodes[i]).max()) for i in goals}
    max_steps = max(ecc.values())
    used_goals: set[int] = set()
    prominence = world.prominence()
    tasks: list[Task] = []
    while len(tasks) < n:
        k = draw_steps(rng, max_steps)
        cands = [i for i in goals if ecc[i] >= k and i not in used_goals]
        if not cands:
            continue
        gi = cands[int(rng.integers(len(cands)))]
        goal, gnode = world.goals[gi], world.goal_nodes[gi]
        starts = np.flatnonzero(hops(gnode) == k)
        start = int(starts[int(rng.integers(len(starts)))])
        try:
            desc = describe_goal(goal, world.landmarks, rng, prominence=prominence)
        except ValueError:
            used_goals.add(gi)
            continue
        used_goals.add(gi)
        slat, slon = g.latlon[start]
        shortest = float(g.metres_from(start)[gnode])
        tasks.append(Task(
            id=f"{prefix}{len(tasks) + 1:03d}", start_lat=float(slat), start_lon=float(slon),
            goal_lat=goal.lat, goal_lon=goal.lon, goal_name=goal.name, description=desc.text,
            min_steps=k, step_limit=int(np.ceil(STEP_LIMIT_FACTOR * k)),
            extra={"goal.kind": goal.kind, "landmarks": list(desc.landmarks), "style": desc.style,
                   "min_path_m": round(shortest, 1), "start.node": start, "goal.node": gnode},
        ))
    return tasks

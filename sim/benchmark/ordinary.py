"""Ordinary navigation tasks: reference landmarks drawn without the prominence bias.

Why: `generate.py` names reference landmarks among the 6 most *prominent*
(most visible) buildings within reach, so the public tasks mostly steer by
the few buildings an agent sees from almost anywhere, and the texts come from
a few templates. Here every reference is drawn uniformly among all of
`world.landmarks` whose centroid is 120-600 m from the goal: no prominence
ranking and no area filter (`describe.MIN_LANDMARK_AREA_M2` is not applied;
`world.landmarks` are already the named buildings, and a small named
building is still one a person may name). The text is one of the
`phrasing` families, drawn round-robin so every family is equally common.

Solvability is checked from the truth, not by parsing: the label resolved
with the true landmark positions (offset: landmark + vector; two offsets:
their mean; between: the midpoint; two rays: where they meet ahead of both
landmarks, none when they are parallel) must land within
`MAX_LABEL_ERROR_M` of the goal, else the landmarks are redrawn. A
consequence worth knowing: with 8 compass points a single offset from a far
landmark misses by up to 0.4 x its distance, so accepted references lean
towards the nearer half of the 120-600 m band.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from onboard.map.compass import bearing_deg
from sim.benchmark.compass import index_of_bearing
from sim.benchmark.describe import MAX_ESTIMATE_ERROR
from sim.benchmark.generate import usable_goals
from sim.benchmark.field_phrasing import FIELD_FAMILIES, FIELD_FAMILY_NAMES, FIELD_SHAPE
from sim.benchmark.phrasing import FAMILIES, FAMILY_NAMES, FAMILY_SHAPE, Phrased, Truth, TruthRelation, written_truth
from sim.benchmark.tasks import STEP_LIMIT_FACTOR, Task
from sim.benchmark.understand import Relation, estimate_goal
from sim.world.world import World

MIN_REFERENCE_M, MAX_REFERENCE_M = 120.0, 600.0  # landmark centroid to goal
MIN_START_M = 500.0  # straight line from the start node to the goal
HOP_BAND = (10, 60)  # fewest moves from the start to the goal node
MAX_LABEL_ERROR_M = MAX_ESTIMATE_ERROR  # 160 m: where the label's truth may land from the goal
# Every family a task may be phrased in: the original 12 (the `test` split's) and the dev-side field families.
ALL_SHAPE: dict[str, str] = FAMILY_SHAPE | FIELD_SHAPE
LANDMARK_TRIES = 12  # landmark draws per goal before the goal is given up for that family
MIN_BETWEEN_SPAN_M = 120.0  # as describe.py: two landmarks closer than this make no "between"


def family_schedule(n: int, rng: np.random.Generator, families: Sequence[str] | None = None) -> list[str]:
    """`n` family names, round-robin over cycles shuffled by `rng`: counts differ by at most one.

    `families` defaults to the original `FAMILY_NAMES`; the field families (dev side) are named explicitly.
    """
    names = list(families or FAMILY_NAMES)
    unknown = [f for f in names if f not in ALL_SHAPE]
    if unknown:
        raise ValueError(f"unknown phrasing families {unknown}; choose among {FAMILY_NAMES + FIELD_FAMILY_NAMES}")
    out: list[str] = []
    while len(out) < n:
        out += [names[int(i)] for i in rng.permutation(len(names))]
    return out[:n]


def phrase(family: str, truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> Phrased:
    """One description of the goal in `family`, with its label (distances as written).

    `family` is one of `phrasing.FAMILY_NAMES` or of the dev-side `field_phrasing.FIELD_FAMILY_NAMES`;
    a field family rounds the truth itself (feet, legs, bearings) and returns what it wrote.
    """
    if family in FAMILIES:
        written = written_truth(family, truth, rng)
        return Phrased(family, FAMILIES[family](written, goal_name, goal_kind, rng), written)
    if family not in FIELD_FAMILIES:
        raise ValueError(f"unknown phrasing family {family!r}; choose one of {FAMILY_NAMES + FIELD_FAMILY_NAMES}")
    text, written = FIELD_FAMILIES[family](truth, goal_name, goal_kind, rng)
    return Phrased(family, text, written)


def landmark_positions(world: World) -> dict[str, np.ndarray]:
    """Landmark name -> centroid (east, north); computed once per draw (a centroid is not cached)."""
    return {lm.name: lm.centroid for lm in world.landmarks}


def reference_candidates(positions: dict[str, np.ndarray], goal_xy: np.ndarray) -> list[str]:
    """Every landmark whose centroid is 120-600 m from the goal, in the world's order."""
    return [name for name, xy in positions.items()
            if MIN_REFERENCE_M <= float(np.hypot(*(xy - goal_xy))) <= MAX_REFERENCE_M]


def true_offset(name: str, landmark_xy: np.ndarray, goal_xy: np.ndarray) -> TruthRelation:
    """The goal seen from the landmark: the exact bearing, its 8-point sector and the exact distance."""
    v = goal_xy - landmark_xy
    b = bearing_deg(*v)
    return TruthRelation("offset", (name,), index_of_bearing(b), float(np.hypot(*v)), bearing_deg=b)


def resolve_label(relations: Sequence[TruthRelation], positions: dict[str, np.ndarray]) -> np.ndarray | None:
    """Where the label puts the goal given true landmark positions; None for parallel or backward rays.

    An offset stating a bearing in degrees points along that bearing, not along its 8-point sector.
    """
    if relations and all(r.kind == "offset" for r in relations) and any(r.bearing_deg is not None for r in relations):
        points = []
        for r in relations:
            b = math.radians(r.bearing_deg if r.bearing_deg is not None else 45.0 * r.direction)
            points.append(positions[r.landmarks[0]] + r.distance_m * np.array([math.sin(b), math.cos(b)]))
        return np.mean(points, axis=0)
    rels = [Relation(r.kind, r.landmarks, r.direction, r.distance_m) for r in relations]
    rays = [r for r in rels if r.kind == "ray"]
    if rays and (len(rays) != 2 or (rays[0].direction - rays[1].direction) % 4 == 0):
        return None  # one ray says nothing of the distance; parallel rays do not meet
    est = estimate_goal(rels, positions)
    if est is None or any(float(np.dot(est - positions[r.landmarks[0]], r.vector())) <= 0.0 for r in rays):
        return None
    return est


def _between_pairs(cands: list[str], positions: dict[str, np.ndarray],
                   goal_xy: np.ndarray) -> list[tuple[int, int]]:
    """Pairs whose midpoint is within 0.25 x their span of the goal, span >= 120 m (describe.py's test)."""
    out = []
    for i in range(len(cands)):
        for j in range(i + 1, len(cands)):
            a, b = positions[cands[i]], positions[cands[j]]
            span = float(np.hypot(*(a - b)))
            if span >= MIN_BETWEEN_SPAN_M and float(np.hypot(*((a + b) / 2.0 - goal_xy))) <= 0.25 * span:
                out.append((i, j))
    return out


def _draw_truth(shape: str, cands: list[str], positions: dict[str, np.ndarray], goal_xy: np.ndarray,
                rng: np.random.Generator) -> tuple[TruthRelation, ...] | None:
    """One uniform draw of references for `shape`; None when the goal has too few landmarks."""
    if shape == "between":
        pairs = _between_pairs(cands, positions, goal_xy)
        if not pairs:
            return None
        i, j = pairs[int(rng.integers(len(pairs)))]
        return (TruthRelation("between", (cands[i], cands[j])),)
    k = 1 if shape == "offset1" else 2
    if len(cands) < k:
        return None
    picks = [cands[int(i)] for i in rng.choice(len(cands), size=k, replace=False)]
    offsets = tuple(true_offset(name, positions[name], goal_xy) for name in picks)
    if shape == "rays2":
        return tuple(TruthRelation("ray", r.landmarks, r.direction) for r in offsets)
    return offsets


def describe_ordinary(world: World, goal_index: int, family: str, rng: np.random.Generator,
                      positions: dict[str, np.ndarray] | None = None,
                      tries: int = LANDMARK_TRIES) -> Phrased | None:
    """A description of goal `goal_index` in `family` whose label resolves near the goal, or None.

    `positions` is `landmark_positions(world)`, passed in by callers that describe many goals.
    """
    goal = world.goals[goal_index]
    positions = positions if positions is not None else landmark_positions(world)
    cands = reference_candidates(positions, goal.xy)
    for _ in range(tries):
        truth = _draw_truth(ALL_SHAPE[family], cands, positions, goal.xy, rng)
        if truth is None:
            return None
        phrased = phrase(family, truth, goal.name, goal.kind, rng)
        est = resolve_label(phrased.relations, positions)
        if est is not None and float(np.hypot(*(est - goal.xy))) <= MAX_LABEL_ERROR_M:
            return phrased
    return None


def draw_start(world: World, goal_index: int, rng: np.random.Generator) -> tuple[int, int] | None:
    """(start node, fewest moves to the goal node): uniform among reachable nodes >= 500 m away in HOP_BAND."""
    g = world.graph
    hops = g.hops_from(world.goal_nodes[goal_index])  # the graph is undirected: hops to the goal
    far = np.hypot(*(g.xy - world.goals[goal_index].xy).T) >= MIN_START_M
    ok = np.flatnonzero((hops >= HOP_BAND[0]) & (hops <= HOP_BAND[1]) & far)
    if len(ok) == 0:
        return None
    start = int(ok[int(rng.integers(len(ok)))])
    return start, int(hops[start])


def landmark_names(relations: Iterable[TruthRelation]) -> list[str]:
    """The landmarks the relations name, in order, without repeats."""
    out: list[str] = []
    for r in relations:
        out += [n for n in r.landmarks if n not in out]
    return out


def generate_ordinary(world: World, n: int = 100, seed: int = 101, prefix: str = "o",
                      exclude_goals: Iterable[str] = frozenset(),
                      families: Sequence[str] | None = None) -> list[Task]:
    """`n` tasks with uniformly drawn references and round-robin phrasing families.

    Goals come from `usable_goals`, each at most once, none whose name is in
    `exclude_goals` (to keep a test set disjoint from a dev set). Fixed seed ->
    the same tasks every time.
    """
    rng = np.random.default_rng(seed)
    excluded = set(exclude_goals)
    pool = [i for i in usable_goals(world) if world.goals[i].name not in excluded]
    prominence = world.prominence()
    positions = landmark_positions(world)
    g = world.graph
    used: set[int] = set()
    failed: dict[str, set[int]] = defaultdict(set)  # family -> goals it could not describe
    tasks: list[Task] = []
    for family in family_schedule(n, rng, families):
        while True:
            cands = [i for i in pool if i not in used and i not in failed[family]]
            if not cands:
                raise ValueError(f"ran out of goals for family {family!r} after {len(tasks)} tasks")
            gi = cands[int(rng.integers(len(cands)))]
            start = draw_start(world, gi, rng)
            if start is None:
                used.add(gi)  # no start fits: never usable
                continue
            phrased = describe_ordinary(world, gi, family, rng, positions)
            if phrased is None:
                failed[family].add(gi)
                continue
            break
        used.add(gi)
        node, steps = start
        goal, gnode = world.goals[gi], int(world.goal_nodes[gi])
        slat, slon = g.latlon[node]
        names = landmark_names(phrased.relations)
        tasks.append(Task(
            id=f"{prefix}{len(tasks) + 1:03d}", start_lat=float(slat), start_lon=float(slon),
            goal_lat=float(goal.lat), goal_lon=float(goal.lon), goal_name=goal.name, description=phrased.text,
            min_steps=steps, step_limit=int(math.ceil(STEP_LIMIT_FACTOR * steps)),
            extra={"goal.kind": goal.kind, "family": family, "landmarks": names,
                   "relations": [r.label() for r in phrased.relations],
                   "visibility": {name: int(prominence.get(name, 0)) for name in names},
                   "min_path_m": round(float(g.metres_from(node)[gnode]), 1),
                   "start.node": node, "goal.node": gnode},
        ))
    return tasks

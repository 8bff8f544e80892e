"""The onboard map on the navigation benchmark (`aerie bench nav --map [FILE] [--map-stale FRACTION]`).

With no file the map is built from the same world the episodes fly in: its
named landmarks (position: the footprint's centroid, as perception reports
it) and its corridor graph. Per task the goal is taken out: the map holds no
POIs at all, and any landmark named like the goal (same name, case,
diacritics and spacing aside) is removed, as a shop that opened after the
extract would be missing. The agent refuses goal-named entries on its own too.

The agent gets the map in its own frame: positions minus the start
waypoint's, as a real drone subtracts its GPS take-off position.

`--map-stale FRACTION` makes the map out of date, seeded per task (the run's
seed and the task id): that share of the map's landmarks (drawn uniformly, so
a task's own reference landmarks are as likely to be hit as any other) is
stale; about half of them are displaced by `STALE_SHIFT_M` in a random
direction, the rest deleted. The corridors stay exact.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from onboard.agent.map_knowledge import CorridorGraph, MapKnowledge
from onboard.vocab.text_fold import fold

# A stale landmark is displaced by a distance drawn uniformly from this range (metres).
STALE_SHIFT_M = (100.0, 300.0)
# How far the benchmark says its map positions may be off (metres): the map is the world itself.
WORLD_MAP_UNCERTAINTY_M = 5.0


class BenchMapError(ValueError):
    """A map the benchmark cannot use (the message says why)."""


@dataclass(frozen=True)
class BenchMap:
    """An onboard map in the world's ENU frame: named landmark positions and the corridor graph."""

    landmarks: dict[str, np.ndarray]
    corridor_xy: np.ndarray
    corridor_adj: tuple[tuple[int, ...], ...]
    uncertainty_m: float = WORLD_MAP_UNCERTAINTY_M
    source: str = "world"


@dataclass(frozen=True)
class TaskMap:
    """One task's map as the agent gets it, and what was changed in it (for the episode record)."""

    knowledge: MapKnowledge
    removed_goal_named: tuple[str, ...] = ()
    displaced: dict[str, float] = field(default_factory=dict)  # name -> metres
    deleted: tuple[str, ...] = ()

    def record(self, task_landmarks: tuple[str, ...] = ()) -> dict:
        return {"landmarks": len(self.knowledge.landmarks), "removed_goal_named": list(self.removed_goal_named),
                "displaced": {n: round(d, 1) for n, d in self.displaced.items()}, "deleted": list(self.deleted),
                "task_landmarks_displaced": [n for n in task_landmarks if n in self.displaced],
                "task_landmarks_deleted": [n for n in task_landmarks if n in self.deleted]}


def world_map(world) -> BenchMap:
    """The map built from the world itself: every named landmark and the corridor graph."""
    g = world.graph
    return BenchMap({lm.name: np.asarray(lm.centroid, dtype=float) for lm in world.landmarks},
                    np.asarray(g.xy, dtype=float), tuple(tuple(int(j) for j in a) for a in g.adj))


def load_map_file(path: str, world) -> BenchMap:
    """A vehicle's map file (`aerie map build`), placed in the world's frame through latitude and longitude.

    A map of another area or another extract is not refused here: what it lacks (landmarks, corridors
    where the episodes fly) shows in the results, as it would in flight. A damaged or foreign file is.
    """
    from common.geodesy import ned_from_geo
    from onboard.map.map_file import MapFileError, load_map

    try:
        m = load_map(path)
    except MapFileError as exc:
        raise BenchMapError(f"--map: {exc}") from None

    def to_world(xy: np.ndarray) -> np.ndarray:
        lat, lon = m.to_geo(xy)
        north, east = ned_from_geo(world.origin, lat, lon)
        return np.column_stack([east, north]) if np.ndim(north) else np.array([east, north], dtype=float)

    landmarks = {name: to_world(np.asarray(xy, dtype=float)) for name, xy in m.landmark_positions().items()}
    g = m.graph
    return BenchMap(landmarks, to_world(np.asarray(g.xy, dtype=float)), tuple(tuple(int(j) for j in a) for a in g.adj),
                    source=str(path))


def same_name(a: str, b: str) -> bool:
    """Names equal as people write them: case, diacritics and spacing aside."""
    return fold(" ".join(a.split())) == fold(" ".join(b.split()))


def stale_draw(names: list[str], fraction: float, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], list[str]]:
    """Which landmarks go stale: `round(fraction * len(names))` drawn uniformly; about half displaced
    (east-north shift vectors, `STALE_SHIFT_M` long), the rest deleted."""
    if not 0.0 <= fraction <= 1.0:
        raise BenchMapError(f"--map-stale must be a fraction in [0, 1], not {fraction}")
    k = int(round(fraction * len(names)))
    chosen = [names[int(i)] for i in rng.permutation(len(names))[:k]]
    n_disp = k // 2 + int(k % 2 == 1 and rng.random() < 0.5)
    shifts = {}
    for name in chosen[:n_disp]:
        dist = rng.uniform(*STALE_SHIFT_M)
        ang = rng.uniform(0.0, 2.0 * math.pi)
        shifts[name] = np.array([dist * math.sin(ang), dist * math.cos(ang)])
    return shifts, chosen[n_disp:]


def task_map(bench_map: BenchMap, goal_name: str, origin_xy: np.ndarray, *, stale: float = 0.0,
             seed: int = 0, task_id: str = "") -> TaskMap:
    """The map for one task: goal-named landmarks removed, stale share applied, in the frame at `origin_xy`."""
    removed = tuple(n for n in bench_map.landmarks if same_name(n, goal_name))
    names = sorted(n for n in bench_map.landmarks if n not in removed)
    shifts: dict[str, np.ndarray] = {}
    deleted: list[str] = []
    if stale > 0.0:
        rng = np.random.default_rng([int(seed), zlib.crc32(task_id.encode("utf-8"))])
        shifts, deleted = stale_draw(names, stale, rng)
    origin = np.asarray(origin_xy, dtype=float)
    lms = {n: bench_map.landmarks[n] + shifts.get(n, 0.0) - origin for n in names if n not in deleted}
    corridors = CorridorGraph(bench_map.corridor_xy - origin, bench_map.corridor_adj)
    return TaskMap(MapKnowledge(lms, bench_map.uncertainty_m, corridors), removed,
                   {n: float(np.hypot(*v)) for n, v in shifts.items()}, tuple(sorted(deleted)))


@dataclass(frozen=True)
class MapProvider:
    """Per-episode maps for `run_tasks`: `provider(rt, seed) -> TaskMap`."""

    bench_map: BenchMap
    world: object
    stale: float = 0.0

    def __call__(self, rt, seed: int) -> TaskMap:
        return task_map(self.bench_map, rt.task.goal_name, self.world.graph.xy[rt.start_node], stale=self.stale,
                        seed=seed, task_id=rt.id)

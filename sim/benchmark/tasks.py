"""Task files: JSON schema, validation with errors that name the task and field, snapping.

File shape (version 1)::

    {"version": 1, "city": "helsinki", "tasks": [
      {"id": "t001",
       "start": {"lat": 60.17, "lon": 24.94},
       "goal": {"lat": 60.17, "lon": 24.95, "name": "Café Engel"},
       "description": "Café Engel is about 300 m north-east of Kiasma.",
       "min_steps": 31,          # optional: fewest moves on the graph, computed when absent
       "step_limit": 78}]}       # optional: ceil(2.5 x min_steps) when absent

Optional fields the generator writes (ignored by the runner unless noted):
`goal.kind` (OSM kind of the POI), `landmarks` (names the description uses),
`style` (offset1 / offset2 / rays2 / between), `min_path_m` (shortest path in
metres on the graph), `start.node` / `goal.node` (graph node ids at generation
time; positions are what count, they snap to the nearest node on load).
The ordinary sets (`ordinary.py`) also write `family` (phrasing family),
`relations` (the description's label: kind, landmarks, direction, distance)
and `visibility` (landmark name -> nodes it is seen from).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from common.geodesy import ned_from_geo
from sim.world.world import World

SCHEMA_VERSION = 1
STEP_LIMIT_FACTOR = 2.5
MAX_SNAP_M = 200.0  # a position further than this from every node is off the map


class TaskFileError(ValueError):
    """A task file that does not follow the schema; the message names task and field."""


@dataclass
class Task:
    """One navigation task as written in the file (positions geodetic)."""

    id: str
    start_lat: float
    start_lon: float
    goal_lat: float
    goal_lon: float
    goal_name: str
    description: str
    min_steps: int | None = None
    step_limit: int | None = None
    extra: dict = field(default_factory=dict)  # optional fields, kept for round trips

    def to_json(self) -> dict:
        start = {"lat": round(self.start_lat, 7), "lon": round(self.start_lon, 7)}
        goal = {"lat": round(self.goal_lat, 7), "lon": round(self.goal_lon, 7), "name": self.goal_name}
        for key in ("node",):
            if f"start.{key}" in self.extra:
                start[key] = self.extra[f"start.{key}"]
            if f"goal.{key}" in self.extra:
                goal[key] = self.extra[f"goal.{key}"]
        if "goal.kind" in self.extra:
            goal["kind"] = self.extra["goal.kind"]
        out = {"id": self.id, "start": start, "goal": goal, "description": self.description}
        if self.min_steps is not None:
            out["min_steps"] = self.min_steps
        if self.step_limit is not None:
            out["step_limit"] = self.step_limit
        out.update({k: v for k, v in self.extra.items() if "." not in k})
        return out


@dataclass(frozen=True)
class ResolvedTask:
    """A task snapped onto the world's graph, with its step budget worked out."""

    task: Task
    start_node: int
    goal_node: int
    min_steps: int
    step_limit: int
    shortest_m: float

    @property
    def id(self) -> str:
        return self.task.id


def _number(obj: dict, key: str, where: str, lo: float, hi: float) -> float:
    if key not in obj:
        raise TaskFileError(f"{where}: missing field '{key}'")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise TaskFileError(f"{where}: field '{key}' must be a number, got {v!r}")
    if not lo <= v <= hi:
        raise TaskFileError(f"{where}: field '{key}' = {v} is out of range [{lo}, {hi}]")
    return float(v)


def _position(t: dict, key: str, where: str, need_name: bool) -> dict:
    if key not in t:
        raise TaskFileError(f"{where}: missing field '{key}'")
    p = t[key]
    if not isinstance(p, dict):
        raise TaskFileError(f"{where}: field '{key}' must be an object with lat and lon")
    out = {"lat": _number(p, "lat", f"{where} field '{key}'", -90, 90),
           "lon": _number(p, "lon", f"{where} field '{key}'", -180, 180)}
    if need_name:
        name = p.get("name")
        if not isinstance(name, str) or not name.strip():
            raise TaskFileError(f"{where}: field '{key}.name' must be a non-empty string")
        out["name"] = name
    return out


def _optional_int(t: dict, key: str, where: str) -> int | None:
    if key not in t or t[key] is None:
        return None
    v = t[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise TaskFileError(f"{where}: field '{key}' must be a positive integer, got {v!r}")
    return v


def parse_task_set(data, source: str = "<data>") -> tuple[str, list[Task]]:
    """Validate a decoded task file; returns (city, tasks) or raises TaskFileError."""
    if not isinstance(data, dict):
        raise TaskFileError(f"{source}: top level must be an object with 'version', 'city' and 'tasks'")
    if data.get("version") != SCHEMA_VERSION:
        raise TaskFileError(f"{source}: field 'version' must be {SCHEMA_VERSION}, got {data.get('version')!r}")
    city = data.get("city")
    if not isinstance(city, str) or not city:
        raise TaskFileError(f"{source}: field 'city' must be a non-empty string")
    items = data.get("tasks")
    if not isinstance(items, list) or not items:
        raise TaskFileError(f"{source}: field 'tasks' must be a non-empty list")
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, t in enumerate(items):
        if not isinstance(t, dict):
            raise TaskFileError(f"{source}: task #{i}: must be an object")
        tid = t.get("id")
        if not isinstance(tid, str) or not tid:
            raise TaskFileError(f"{source}: task #{i}: field 'id' must be a non-empty string")
        where = f"{source}: task '{tid}'"
        if tid in seen:
            raise TaskFileError(f"{where}: field 'id' is duplicated")
        seen.add(tid)
        start = _position(t, "start", where, need_name=False)
        goal = _position(t, "goal", where, need_name=True)
        desc = t.get("description")
        if not isinstance(desc, str) or not desc.strip():
            raise TaskFileError(f"{where}: field 'description' must be a non-empty string")
        min_steps = _optional_int(t, "min_steps", where)
        step_limit = _optional_int(t, "step_limit", where)
        if min_steps and step_limit and step_limit < min_steps:
            raise TaskFileError(f"{where}: field 'step_limit' ({step_limit}) is below 'min_steps' ({min_steps})")
        extra = {k: v for k, v in t.items() if k not in {"id", "start", "goal", "description", "min_steps", "step_limit"}}
        for key in ("node", "kind"):
            if key in t["goal"]:
                extra[f"goal.{key}"] = t["goal"][key]
        if "node" in t["start"]:
            extra["start.node"] = t["start"]["node"]
        tasks.append(Task(tid, start["lat"], start["lon"], goal["lat"], goal["lon"], goal["name"], desc,
                          min_steps, step_limit, extra))
    return city, tasks


def load_tasks(path: str | Path) -> tuple[str, list[Task]]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such task file") from None
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}: not valid JSON ({exc})") from None
    return parse_task_set(data, str(path))


def dump_tasks(tasks: list[Task], city: str = "helsinki") -> dict:
    return {"version": SCHEMA_VERSION, "city": city, "tasks": [t.to_json() for t in tasks]}


def save_tasks(path: str | Path, tasks: list[Task], city: str = "helsinki") -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(dump_tasks(tasks, city), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def resolve(task: Task, world: World) -> ResolvedTask:
    """Snap start and goal to graph nodes; compute min_steps / step_limit when absent."""
    g = world.graph
    s = g.nearest_node_latlon(task.start_lat, task.start_lon)
    t = g.nearest_node_latlon(task.goal_lat, task.goal_lon)
    for key, node, lat, lon in (("start", s, task.start_lat, task.start_lon), ("goal", t, task.goal_lat, task.goal_lon)):
        north, east = ned_from_geo(world.origin, lat, lon)
        off = float(np.hypot(g.xy[node][0] - east, g.xy[node][1] - north))
        if off > MAX_SNAP_M:
            raise TaskFileError(f"task '{task.id}': field '{key}' is {off:.0f} m from the nearest street node "
                                f"(more than {MAX_SNAP_M:.0f} m: outside the {world.city.name} map)")
    hops = int(g.hops_from(s)[t])
    if hops < 0:
        raise TaskFileError(f"task '{task.id}': field 'goal' is not reachable from 'start' on the street graph")
    min_steps = task.min_steps if task.min_steps is not None else hops
    step_limit = task.step_limit if task.step_limit is not None else math.ceil(STEP_LIMIT_FACTOR * max(1, min_steps))
    return ResolvedTask(task, s, t, min_steps, step_limit, float(g.metres_from(s)[t]))


def resolve_all(city: str, tasks: list[Task], world: World) -> list[ResolvedTask]:
    if city.lower() != world.city.name.lower():
        raise TaskFileError(f"field 'city' is {city!r} but the world is {world.city.name!r}")
    return [resolve(t, world) for t in tasks]

"""`aerie bench team-search`: N vehicles sent after one goal, sharing their findings or not.

What a fleet's sharing is for: an operator sends several vehicles from
different launch points after the same target; one vehicle's landmark fix,
the sign it read, the streets it looked along should save the others their
search. Each vehicle is a geometric `GraphAgent` flying the benchmark's
episode (`sim.benchmark.episode.run_episode`, oracle perception); the first
vehicle starts where the task does, the others at street nodes drawn
(seeded) at least `MIN_START_GOAL_M` from the goal, like the ordinary tasks'
starts.

Not lock-step: each vehicle's clock is its own flight time (legs at cruise
speed, look-ups), and the vehicles take their decisions in the order of
those clocks, as separate vehicles in the air would. What one vehicle found
when it decided reaches the others' next decision through the fleet's own
code: `onboard.fleet.findings.FleetFindings` (each vehicle's frame from
its own home), packed and unpacked by `contract.fleet_frame` as the channel
does. The same starts and seeds fly once sharing and once not.

Nothing here was used to choose a rule or a constant of the agent: the
figures are reported as measured, on dev and test alike.

    aerie bench team-search --tasks bench/tasks/helsinki_ordinary_dev.json --vehicles 2 --json /tmp/team.json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from contract.fleet_discovery import MAX_ITEMS
from contract.fleet_frame import pack, unpack
from common.geodesy import GeoPoint, geo_from_ned
from onboard.fleet.findings import FleetFindings
from sim.benchmark.aerie_agents import BenchAgent, make_aerie_agent
from sim.benchmark.episode import run_episode
from sim.benchmark.kinematic import KinematicMover
from sim.benchmark.tasks import ResolvedTask, load_tasks, resolve, resolve_all

MIN_START_GOAL_M = 500.0
MIN_START_APART_M = 300.0
FRAME_BYTES = 16384


class Conductor:
    """Lets the vehicle whose clock is earliest decide next; the others wait (ties: the lower index)."""

    def __init__(self, n: int) -> None:
        self.clock = [0.0] * n
        self.active = [True] * n
        self._cv = threading.Condition()

    def turn(self, i: int) -> None:
        with self._cv:
            self._cv.wait_for(lambda: self._next() == i)

    def advance(self, i: int, seconds: float) -> None:
        with self._cv:
            self.clock[i] += seconds
            self._cv.notify_all()

    def done(self, i: int) -> None:
        with self._cv:
            self.active[i] = False
            self._cv.notify_all()

    def _next(self) -> int:
        live = [k for k in range(len(self.clock)) if self.active[k]]
        return min(live, key=lambda k: (self.clock[k], k)) if live else -1


class TimedMover(KinematicMover):
    """The benchmark's mover, whose flight time is the vehicle's clock."""

    def __init__(self, world: Any, node: int, conductor: Conductor, index: int) -> None:
        super().__init__(world, node)
        self.conductor, self.index = conductor, index

    def fly_to(self, node: int) -> float:
        return self._advance(super().fly_to(node))

    def look_from(self, altitude_m: float) -> float:
        return self._advance(super().look_from(altitude_m))

    def climb_to(self, altitude_m: float, from_m: float | None = None) -> float:
        return self._advance(super().climb_to(altitude_m, from_m))

    def come_down(self, from_m: float) -> float:
        return self._advance(super().come_down(from_m))

    def come_down_to(self, node: int, from_m: float, to_m: float | None = None) -> float:
        return self._advance(super().come_down_to(node, from_m, to_m))

    def climb_on_to(self, node: int, altitude_m: float, from_m: float | None = None) -> float:
        return self._advance(super().climb_on_to(node, altitude_m, from_m))

    def _advance(self, seconds: float) -> float:
        self.conductor.advance(self.index, seconds)
        return seconds


class TeamMember:
    """One vehicle's agent: waits its turn, takes the fleet's findings, decides, tells the others."""

    takes_agent_observation = True  # driven by the mission runner as the vehicle's agent is

    def __init__(self, inner: BenchAgent, index: int, home: GeoPoint, conductor: Conductor,
                 team: list["TeamMember"], sharing: bool) -> None:
        self.inner, self.index, self.home = inner, index, home
        self.name = inner.name
        self.conductor, self.team, self.sharing = conductor, team, sharing
        self.findings = FleetFindings(index + 1)
        self.frames_sent = self.frames_taken = 0

    def reset(self, description: str, seed: int) -> None:
        self.inner.reset(description, seed)

    def record_extra(self) -> dict:
        return self.inner.record_extra()

    def act(self, observation: Any) -> Any:
        self.conductor.turn(self.index)
        shared = self.findings.for_agent(self.home) if self.sharing else None
        a = self.inner.agent.act(replace(observation, shared=shared))
        if self.sharing:
            self.findings.publish(self.inner.agent.findings(MAX_ITEMS), self.home, f"team-{self.index}")
            frame = self.findings.outgoing()
            if frame is not None:
                heard = unpack(pack(replace(frame, seq=observation.step + 1)), max_bytes=FRAME_BYTES)
                self.frames_sent += 1
                for other in self.team:
                    if other is not self:
                        other.findings.take(heard)
                        other.frames_taken += 1
        if a.kind != "move":  # no flight follows an arrival (a look-up advances the clock in the mover)
            self.conductor.advance(self.index, 0.0)
        return a


def extra_starts(world: Any, rt: ResolvedTask, n: int, rng: np.random.Generator) -> list[int]:
    """`n` start nodes for the other vehicles: far enough from the goal and from each other, reachable."""
    g = world.graph
    gxy = g.xy[rt.goal_node]
    far = np.flatnonzero(np.hypot(g.xy[:, 0] - gxy[0], g.xy[:, 1] - gxy[1]) >= MIN_START_GOAL_M)
    reach = g.hops_from(rt.goal_node)
    starts = [rt.start_node]
    for node in rng.permutation(far):
        if len(starts) > n:
            break
        if reach[node] >= 0 and all(np.hypot(*(g.xy[node] - g.xy[s])) >= MIN_START_APART_M for s in starts):
            starts.append(int(node))
    return starts[1:]


def _task_from(world: Any, rt: ResolvedTask, start: int) -> ResolvedTask:
    lat, lon = geo_from_ned(world.origin, float(world.graph.xy[start][1]), float(world.graph.xy[start][0]))
    t = replace(rt.task, start_lat=float(lat), start_lon=float(lon), min_steps=None, step_limit=None)
    return resolve(t, world)


def fly_team(world: Any, rt: ResolvedTask, starts: list[int], sharing: bool, seed: int, noise: str) -> dict:
    """Every vehicle after the task's goal from its start; the per-vehicle records and the team's figures."""
    tasks = [rt] + [_task_from(world, rt, s) for s in starts]
    conductor = Conductor(len(tasks))
    team: list[TeamMember] = []
    for i, t in enumerate(tasks):
        xy = world.graph.xy[t.start_node]
        lat, lon = geo_from_ned(world.origin, float(xy[1]), float(xy[0]))
        team.append(TeamMember(make_aerie_agent("geometric", world), i, GeoPoint(float(lat), float(lon)),
                               conductor, team, sharing))
    records: list[dict | None] = [None] * len(tasks)
    errors: list[BaseException] = []

    def fly(i: int) -> None:
        try:
            records[i] = run_episode(world, tasks[i], team[i], noise, seed * 7919 + i,
                                     mover=TimedMover(world, tasks[i].start_node, conductor, i), preset_name=noise)
            records[i]["clock_s"] = round(conductor.clock[i], 1)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)
        finally:
            conductor.done(i)

    threads = [threading.Thread(target=fly, args=(i,), daemon=True) for i in range(len(tasks))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    found = [r["clock_s"] for r in records if r and r["success"]]
    return {"task": rt.id, "sharing": sharing, "starts": [t.start_node for t in tasks],
            "success": [r["success"] for r in records], "spl": [r["spl"] for r in records],
            "steps": [r["steps"] for r in records], "flight_s": [r["flight_s"] for r in records],
            "first_success_s": min(found) if found else None, "any_success": bool(found),
            "frames_sent": [m.frames_sent for m in team], "frames_taken": [m.frames_taken for m in team]}


def _mean(xs: list[float]) -> float:
    return round(float(np.mean(xs)), 3) if xs else math.nan


def summary(runs: list[dict]) -> dict:
    per_vehicle_sr = [float(np.mean(r["success"])) for r in runs]
    firsts = [r["first_success_s"] for r in runs if r["first_success_s"] is not None]
    return {"tasks": len(runs), "vehicle_sr": _mean(per_vehicle_sr),
            "vehicle_spl": _mean([float(np.mean(r["spl"])) for r in runs]),
            "team_sr": _mean([float(r["any_success"]) for r in runs]),
            "all_sr": _mean([float(all(r["success"])) for r in runs]),
            "first_success_s_median": round(float(np.median(firsts)), 1) if firsts else None,
            "flight_s_mean": _mean([float(np.mean(r["flight_s"])) for r in runs])}


def run(world: Any, resolved: list[ResolvedTask], vehicles: int, seed: int, noise: str,
        progress: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"bench": "team_search", "vehicles": vehicles, "perception": noise, "seed": seed,
                           "host": platform.node(), "records": []}
    t0 = time.perf_counter()
    for k, rt in enumerate(resolved):
        starts = extra_starts(world, rt, vehicles - 1, rng)
        if len(starts) < vehicles - 1:
            continue
        rec = {"task": rt.id, "alone": fly_team(world, rt, starts, False, seed, noise),
               "sharing": fly_team(world, rt, starts, True, seed, noise)}
        out["records"].append(rec)
        if progress:
            print(f"{k + 1}/{len(resolved)} {rt.id}: alone {rec['alone']['success']} "
                  f"sharing {rec['sharing']['success']}", flush=True)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    for mode in ("alone", "sharing"):
        out[mode] = summary([r[mode] for r in out["records"]])
    return out


def table(rep: dict) -> str:
    rows = [f"team search: {rep['vehicles']} vehicles per goal, {rep['alone']['tasks']} tasks, "
            f"{rep['perception']} perception",
            f"{'':<9} {'vehicle SR':>10} {'SPL':>6} {'team SR':>8} {'all SR':>7} {'first goal s':>13}"]
    for mode in ("alone", "sharing"):
        s = rep[mode]
        rows.append(f"{mode:<9} {s['vehicle_sr']:>10.2f} {s['vehicle_spl']:>6.3f} {s['team_sr']:>8.2f} "
                    f"{s['all_sr']:>7.2f} {str(s['first_success_s_median']):>13}")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    from sim.world.cache import load_world

    p = argparse.ArgumentParser(prog="aerie bench team-search", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default="bench/tasks/helsinki_ordinary_dev.json")
    p.add_argument("--vehicles", type=int, default=2)
    p.add_argument("--perception", default="perfect", choices=["perfect", "prep"])
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="")
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    if args.vehicles < 2:
        p.error("--vehicles must be at least 2")
    world = load_world(None)
    city, tasks = load_tasks(args.tasks)
    resolved = resolve_all(city, tasks, world)[: args.limit or None]
    rep = run(world, resolved, args.vehicles, args.seed, args.perception, args.progress)
    rep["tasks_file"] = args.tasks
    print(table(rep))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rep, indent=1))
    return 0

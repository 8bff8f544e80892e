"""Run an agent over a task set under one perception preset, with a progress bar."""

from __future__ import annotations

import importlib
import sys
import time

from sim.benchmark.baselines import make_agent
from sim.benchmark.camera_failures import failure_ends
from sim.benchmark.episode import run_episode
from sim.benchmark.metrics import summarise
from sim.benchmark.tasks import ResolvedTask
from sim.world.world import World

BUILTIN_AGENTS = ("random", "greedy", "memory")


def load_agent(spec: str, world: World, reader: str = "combined"):
    """A built-in agent by name, or `package.module:factory` called as factory(world) -> Agent; Aerie's agents
    read their instruction with `reader` ("combined": as `aerie fly` does, the model where the parser cannot
    settle; "parser": the parser alone)."""
    if spec in BUILTIN_AGENTS:
        return make_agent(spec, [lm.name for lm in world.landmarks])
    from sim.benchmark.aerie_agents import AERIE_AGENTS, make_aerie_agent

    if spec in AERIE_AGENTS:
        return make_aerie_agent(spec, world, reader=reader)
    if ":" not in spec:
        raise ValueError(f"unknown agent {spec!r}: use one of {list(BUILTIN_AGENTS) + list(AERIE_AGENTS)} or 'package.module:factory'")
    mod, _, attr = spec.partition(":")
    factory = getattr(importlib.import_module(mod), attr)
    return factory(world)


def wait_until_idle(model, poll_s: float = 0.25, limit_s: float = 900.0) -> float:
    """Block until the plan model's worker has no call in flight; the seconds waited.

    Why: the simulated missions follow each other in milliseconds, but a model call goes on
    after its deadline (a thread cannot be stopped) and the mission analysis is a model call
    after every mission. A worker with a call past its deadline refuses new ones (WorkerWedged),
    so without this wait one slow call turns the next missions and the next ablation runs into
    the geometric planner's fallback, and the llm's scores depend on the CPU's load and on
    the run before. A vehicle's next mission starts after landing, with the model idle.
    Two idle polls in a row: a queued call can start the moment one ends.
    """
    worker = getattr(model, "worker", None)
    if worker is None or not hasattr(worker, "in_flight"):
        return 0.0
    t0 = time.monotonic()
    idle = 0
    while idle < 2 and time.monotonic() - t0 < limit_s:
        idle = idle + 1 if worker.in_flight() is None else 0
        if idle < 2:
            time.sleep(poll_s)
    return round(time.monotonic() - t0, 2)


def run_tasks(world: World, tasks: list[ResolvedTask], agent_spec, preset: str, seed: int = 0,
              progress: bool = True, repeats: int = 1, flight_factory=None, maps_dir=None, map_provider=None,
              camera_bench=None, reader: str = "combined", first_index: int = 0) -> dict:
    """Episodes for every task (fresh agent each), aggregated; JSON-ready.

    `agent_spec` is a name for `load_agent`, or a zero-argument callable that
    returns a new Agent (how an in-process caller plugs its own agent in).
    `repeats` > 1 plays every task that many times with seeds seed, seed+1, ...
    (perception noise and agents' own randomness differ; the tasks do not).
    `flight_factory(task)`, when given, returns each episode's `FlownVehicle`: its legs are then
    flown over MAVSDK by the vehicle port `aerie fly` flies.
    `maps_dir`, when given, receives the agent's maps of every step of every episode
    (`<maps_dir>/<agent>-<preset>_<task>/semantic_images/`, the folders `write_episode` fills)
    from agents that draw them (Aerie's: `BenchAgent.maps_to`); their time counts in the
    episode's wall time.
    `map_provider(task, seed) -> TaskMap` (`sim.benchmark.bench_map.MapProvider`), when given, hands
    each episode's onboard map to agents that take one (`use_map`; the baselines do not) and
    writes what was changed in it into the record's `map`.
    `camera_bench` (`sim.benchmark.camera_perception.CameraBench`), when given, replaces the oracle's
    sightings by a camera look-around read at every step (`preset` is then only a label); the run's
    reading figures go into the result's `camera`.
    `first_index`: the first task's place in its file (`--skip`), so that a task's episode seed is the
    same whichever part of a run plays it (`merge_results`).
    """
    from tqdm import tqdm

    from sim.world.render import ViewRenderer

    views = ViewRenderer(world)  # observations carry a lazy image(): rendered only if an agent asks
    records = []
    t0 = time.perf_counter()
    label = agent_spec if isinstance(agent_spec, str) else "agent"
    plays = [(s, i, rt) for s in range(seed, seed + repeats) for i, rt in enumerate(tasks, first_index)]
    bar = tqdm(plays, desc=f"{label}/{preset}", unit="ep", disable=not progress, file=sys.stderr, leave=False)
    for s_, i, rt in bar:
        agent = agent_spec() if callable(agent_spec) else load_agent(agent_spec, world, reader)
        plan_model = getattr(getattr(agent, "agent", None), "plan_model", None)
        if plan_model is not None:  # the last mission's analysis may still hold the model
            wait_until_idle(plan_model)
        if maps_dir is not None and hasattr(agent, "maps_to"):
            from sim.benchmark.episode_files import episode_folder

            agent.maps_to(episode_folder(maps_dir, f"{getattr(agent, 'name', label)}-{preset}", rt.id), rt.id)
        task_map = None
        if map_provider is not None:
            task_map = map_provider(rt, s_)
            if hasattr(agent, "use_map"):
                agent.use_map(task_map.knowledge)
        camera = (camera_bench.episode(rt.task.description, judge_goal=rt.task.goal_name)
                  if camera_bench is not None else None)
        noise = "perfect" if camera is not None else preset
        rec = run_episode(world, rt, agent, noise, seed=s_ * 100_003 + i, preset_name=preset,
                          renderer=views.oblique, camera=camera,
                          flown=flight_factory(rt) if flight_factory is not None else None)
        if hasattr(agent, "record_extra"):  # an agent's own per-episode figures (Aerie's: model calls and seconds)
            rec.update(agent.record_extra())
        if task_map is not None:
            rec["map"] = {**task_map.record(tuple(rt.task.extra.get("landmarks") or ())),
                          "used_by_agent": hasattr(agent, "use_map")}
        records.append(rec)
        s = sum(r["success"] for r in records)
        bar.set_postfix(sr=f"{s / len(records):.2f}")
    summary = summarise(records)
    extra = {}
    if camera_bench is not None:
        steps = [r["perception_ms_per_step"] for r in records]
        full = [r["perception_ms_per_step_unmemoised"] for r in records]
        extra["camera"] = {**camera_bench.figures(), "views_per_step": camera_bench.cfg.camera_reading.views,
                           "map_ranges": camera_bench.ranger is not None,
                           "perception_ms_per_step_mean": round(sum(steps) / len(steps), 1) if steps else None,
                           "perception_ms_per_step_unmemoised_mean": round(sum(full) / len(full), 1) if full else None,
                           "failure_ends": failure_ends(records)}
    return {**extra,
        "agent": records[0]["agent"] if records else label, "perception": preset, "seed": seed,
        "sr": summary.sr, "spl": summary.spl, "episodes": len(records), "summary": summary.to_json(),
        "elapsed_s": round(time.perf_counter() - t0, 2),
        "world": {"city": world.city.name, "network": world.graph.network_type, "nodes": world.graph.n_nodes,
                  "cruise_alt_m": world.cruise_alt, "view_range_m": world.view_range},
        "records": records,
    }

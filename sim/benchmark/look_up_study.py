"""How much a look-up over the roofs shows, and what it buys the agent, per altitude.

    python -m sim.benchmark.look_up_study --tasks bench/tasks/helsinki_ordinary_dev.json \\
        --altitudes 40 60 80 100 --perception perfect prep

Visibility: for each altitude, from how many graph nodes each landmark a task
names is in line of sight (`World.visible_from`, the rule perception uses),
the median over every (task, landmark) pair, and the share of tasks with a
named landmark in view from the start node. Agent: the `geometric` agent with
`look_up_alt_m` set to the altitude (everything else as configured), SR, SPL
and the mean vertical metres per episode; the first row is the agent without
look-ups (`geometric-no-look-up`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace

from sim.benchmark.tasks import ResolvedTask
from sim.world.world import World


def landmark_node_counts(world: World, altitude: float | None = None) -> dict[str, int]:
    """For each landmark name, from how many nodes it is in line of sight at `altitude` (None: cruise)."""
    counts = [0] * len(world.landmarks)
    for node in range(world.graph.n_nodes):
        for j in world.visible_from(node, altitude):
            counts[j] += 1
    return {lm.name: counts[j] for j, lm in enumerate(world.landmarks)}


def task_landmarks(rt: ResolvedTask) -> list[str]:
    """The landmarks a task's description names (its `landmarks` field, else its label's relations)."""
    names = list(rt.task.extra.get("landmarks") or ())
    if not names:
        names = [n for r in rt.task.extra.get("relations") or () for n in r.get("landmarks", ())]
    return list(dict.fromkeys(names))


def visibility_row(world: World, tasks: list[ResolvedTask], altitude: float | None) -> dict:
    """Median nodes a task's landmark is seen from, and the share of tasks seeing one from the start."""
    counts = landmark_node_counts(world, altitude)
    pairs = [counts[n] for rt in tasks for n in task_landmarks(rt) if n in counts]
    index = {lm.name: j for j, lm in enumerate(world.landmarks)}
    from_start = [any(index.get(n) in world.visible_from(rt.start_node, altitude) for n in task_landmarks(rt))
                  for rt in tasks]
    return {"altitude_m": world.cruise_alt if altitude is None else altitude,
            "median_nodes": statistics.median(pairs) if pairs else 0,
            "seen_from_start": sum(from_start) / max(1, len(tasks))}


def agent_row(world: World, tasks: list[ResolvedTask], preset: str, altitude: float | None, seed: int = 0,
              **overrides) -> dict:
    """The geometric agent with look-ups at `altitude` (None: the no-look-up ablation) on `tasks`."""
    from onboard.agent.agent import GraphAgent, variant_config
    from sim.benchmark.aerie_agents import BenchAgent
    from sim.benchmark.runner import run_tasks
    from onboard.map.corridors import NODE_SPACING_M

    name = "geometric-no-look-up" if altitude is None else "geometric"
    cfg = variant_config(name)
    cfg = replace(cfg, **overrides) if altitude is None else replace(cfg, look_up_alt_m=altitude, **overrides)
    gazetteer, aliases = [lm.name for lm in world.landmarks], world.aliases()
    res = run_tasks(world, tasks, lambda: BenchAgent(GraphAgent(cfg, gazetteer, name=name,
                                                                step_spacing_m=NODE_SPACING_M, aliases=aliases)),
                    preset, seed, progress=False)
    recs = res["records"]
    return {"perception": preset, "altitude_m": altitude, "sr": res["sr"], "spl": res["spl"],
            "look_ups": statistics.mean(r["look_ups"] for r in recs),
            "climb_m": statistics.mean(r["climb_m"] for r in recs),
            "refused": sum(r["refused_look_ups"] for r in recs)}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.benchmark.look_up_study", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", required=True, help="task file")
    p.add_argument("--altitudes", type=float, nargs="+", default=[40.0, 60.0, 80.0, 100.0])
    p.add_argument("--perception", nargs="+", default=["perfect", "prep"])
    p.add_argument("--no-visibility", action="store_true", help="skip the visibility table")
    p.add_argument("--no-agent", action="store_true", help="skip the agent runs")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                   help="AgentConfig overrides for every run (e.g. look_up_after_steps=0)")
    args = p.parse_args(argv)
    from sim.benchmark.tasks import load_tasks, resolve_all
    from sim.world.cache import load_world
    from onboard.agent.settings import AgentConfig

    world = load_world()
    city, tasks = load_tasks(args.tasks)
    rts = resolve_all(city, tasks, world)
    overrides = {}
    for kv in args.set:
        key, _, value = kv.partition("=")
        kind = type(getattr(AgentConfig(), key))
        overrides[key] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    print(f"{args.tasks}: {len(rts)} tasks, cruise {world.cruise_alt:.0f} m, view range {world.view_range:.0f} m"
          + (f", overrides {overrides}" if overrides else ""))
    if not args.no_visibility:
        print("\n| altitude (m) | median nodes a task's landmark is seen from "
              "| tasks with a landmark in view at the start |")
        print("|---:|---:|---:|")
        for alt in [None, *args.altitudes]:
            r = visibility_row(world, rts, alt)
            print(f"| {r['altitude_m']:.0f}{' (cruise)' if alt is None else ''} | {r['median_nodes']:g} "
                  f"| {r['seen_from_start']:.2f} |", flush=True)
    if not args.no_agent:
        print("\n| perception | look-up altitude (m) | SR | SPL | look-ups / episode | climb m / episode | refused |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for preset in args.perception:
            for alt in [None, *args.altitudes]:
                r = agent_row(world, rts, preset, alt, **overrides)
                print(f"| {preset} | {'none' if alt is None else f'{alt:.0f}'} | {r['sr']:.2f} | {r['spl']:.3f} "
                      f"| {r['look_ups']:.2f} | {r['climb_m']:.0f} | {r['refused']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

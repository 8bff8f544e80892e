"""Time of the agent's maps per step (`onboard/agent/map_render.py`) on benchmark episodes.

    python -m sim.benchmark.map_timing --limit 10 --perception prep

Flies the first N public tasks with the `geometric` agent on the kinematic mover and,
after every step, draws both maps and encodes them as PNG (nothing is written to
disk), timing each part. Prints p50 / p90 / max per part and the PNG sizes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

DEFAULT_TASKS = "bench/tasks/helsinki_public_100.json"


def _stats(values: list[float]) -> str:
    s = sorted(values)
    return f"p50 {statistics.median(s):6.2f}  p90 {s[int(len(s) * 0.9)]:6.2f}  max {s[-1]:6.2f}"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.benchmark.map_timing", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default=DEFAULT_TASKS)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--perception", default="prep")
    args = p.parse_args(argv)

    from onboard.agent.map_render import encode_png, render_landmark_map, render_semantic_map
    from sim.benchmark.aerie_agents import make_aerie_agent
    from sim.benchmark.episode import run_episode
    from sim.benchmark.tasks import load_tasks, resolve_all
    from sim.world.cache import load_world

    world = load_world(None)
    city, tasks = load_tasks(args.tasks)
    times: dict[str, list[float]] = {"landmark map": [], "semantic map": [], "both PNGs": [], "total": []}
    sizes: list[int] = []
    for rt in resolve_all(city, tasks[:args.limit], world):
        agent = make_aerie_agent("geometric", world)
        act = agent.act

        def timed_act(obs, act=act, agent=agent, tid=rt.id):
            action = act(obs)
            st = agent.agent.state
            t0 = time.perf_counter()
            landmark = render_landmark_map(st, tid)[0]
            t1 = time.perf_counter()
            semantic = render_semantic_map(st, tid)[0]
            t2 = time.perf_counter()
            pngs = encode_png(landmark), encode_png(semantic)
            t3 = time.perf_counter()
            for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                times[k].append(v * 1000.0)
            sizes.extend(len(b) for b in pngs)
            return action

        agent.act = timed_act
        run_episode(world, rt, agent, args.perception, seed=0, preset_name=args.perception)
    print(f"{len(times['total'])} steps of {args.limit} tasks ({args.perception}), ms per step:")
    for k, v in times.items():
        print(f"  {k:<13} {_stats(v)}")
    print(f"  PNG size: p50 {statistics.median(sizes) / 1024:.1f} KiB, max {max(sizes) / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""`aerie bench explore`: does sharing discoveries make two vehicles explore more than two that don't?

Three teams fly from the same launch waypoints with the same step budget per
vehicle: one explorer; two explorers that never talk (each with its own
random tie-breaks, so they are not copies of each other); and two that share
discoveries over real ZeroMQ sockets on loopback. Coverage is the number of
distinct POIs the team read; overlap is how many were read by both vehicles.

    aerie bench explore --starts 20 --budget 40 --json /tmp/explore.json

This lock-step run is deterministic (the regression for the explorer and the
link). `--processes` flies N vehicles as OS processes in real time instead,
where frames arrive late and vehicles drift apart (`sim.explore_fleet_bench`).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from sim.explore_episode import PoiMatcher, TeamResult, mean, run_team, starts_from_seed

TEAMS: tuple[tuple[str, int, bool], ...] = (("one_agent", 1, False), ("two_independent", 2, False),
                                             ("two_sharing", 2, True))


def _record(r: TeamResult) -> dict:
    return {"pois": r.team_pois, "overlap_pois": r.overlap_pois, "waypoints": r.team_waypoints,
            "pois_by_vehicle": [len(p) for p in r.pois_by_vehicle], "claim_clashes": r.claim_clashes,
            "late_frames": r.late_frames, "refused_frames": r.refused_frames, "wall_s": round(r.wall_s, 4),
            "trails": r.trails, "link": r.counters}


def run(starts: int, budget: int, seed: int, noise: str = "perfect", world=None) -> dict:
    """Every team from every start; the JSON-ready report."""
    if world is None:
        from sim.world.cache import load_world

        world = load_world(None)
    matcher = PoiMatcher(world, 60.0)
    launch = starts_from_seed(world, starts, seed)
    records = []
    t0 = time.perf_counter()
    for k, start in enumerate(launch):
        rec: dict = {"start": start}
        for name, vehicles, sharing in TEAMS:
            rec[name] = _record(run_team(world, start, budget, vehicles, sharing, seed * 1000 + k,
                                         noise=noise, matcher=matcher))
        records.append(rec)
    out: dict = {"bench": "explore", "starts": len(launch), "budget": budget, "seed": seed, "perception": noise,
                 "host": platform.node(), "wall_s": round(time.perf_counter() - t0, 2)}
    for name, _, _ in TEAMS:
        out[f"{name}_mean_pois"] = round(mean([r[name]["pois"] for r in records]), 2)
        out[f"{name}_mean_overlap"] = round(mean([r[name]["overlap_pois"] for r in records]), 2)
        out[f"{name}_mean_waypoints"] = round(mean([r[name]["waypoints"] for r in records]), 2)
        out[f"{name}_mean_wall_s"] = round(mean([r[name]["wall_s"] for r in records]), 4)
    out["sharing_beats_independent"] = sum(r["two_sharing"]["pois"] > r["two_independent"]["pois"] for r in records)
    out["claim_clashes"] = sum(r["two_sharing"]["claim_clashes"] for r in records)
    out["refused_frames"] = sum(r["two_sharing"]["refused_frames"] for r in records)
    out["records"] = records
    return out


def table(rep: dict) -> str:
    lines = [f"explore: {rep['starts']} starts, budget {rep['budget']} steps per vehicle, seed {rep['seed']}, "
             f"perception {rep['perception']}",
             f"{'team':<16} {'POIs':>8} {'overlap':>8} {'waypoints':>10} {'wall ms':>8}"]
    for name, _, _ in TEAMS:
        lines.append(f"{name:<16} {rep[f'{name}_mean_pois']:>8.1f} {rep[f'{name}_mean_overlap']:>8.1f} "
                     f"{rep[f'{name}_mean_waypoints']:>10.1f} {1000 * rep[f'{name}_mean_wall_s']:>8.1f}")
    lines.append(f"sharing > independent on {rep['sharing_beats_independent']}/{rep['starts']} starts; "
                 f"claim clashes {rep['claim_clashes']}, refused frames {rep['refused_frames']}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from sim import explore_fleet_bench

    ap = argparse.ArgumentParser(prog="aerie bench explore", description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=None, help="launch waypoints (drawn from --seed; 20, or 5 "
                    "with --processes)")
    ap.add_argument("--budget", type=int, default=40, help="moves per vehicle")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--perception", default="perfect", choices=("perfect", "prep", "poor"))
    ap.add_argument("--json", type=Path, default=None, help="write the report here")
    ap.add_argument("--processes", action="store_true",
                    help="N independent vs N sharing vehicles, each an OS process in real time (options below)")
    explore_fleet_bench.add_options(ap.add_argument_group("with --processes (sim/explore_fleet_bench.py)"))
    args = ap.parse_args(argv)
    if args.starts is None:
        args.starts = 5 if args.processes else 20
    if args.starts < 1 or args.budget < 1:
        ap.error("--starts and --budget must be positive")
    if args.processes:
        rep = explore_fleet_bench.run_from_args(ap, args)
        print(explore_fleet_bench.table(rep))
    else:
        rep = run(args.starts, args.budget, args.seed, args.perception)
        print(table(rep))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rep, indent=1))
        print(f"wrote {args.json}")
    return 0

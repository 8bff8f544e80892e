"""`aerie bench explore --processes`: N vehicle processes in real time, sharing vs not.

For each team size N and each launch waypoint, N independent vehicles and N
sharing ones fly from that waypoint as separate processes on their own
clocks (`sim.explore_fleet`; why this mode exists beside the lock-step one:
its module doc). Coverage is the number of distinct world POIs the team
read, as in the lock-step bench; what only this mode can show is how the
link behaves when nobody waits: frames merged, refused and lost (gaps),
how old a peer's newest news was at each decision (against a leg's flight
time, the age a perfect link still gives) and how many frames a peer had
sent that were not merged yet, how much
longer the flight sleeps took than asked (the machine's CPU starvation)
and how far apart the vehicles finished.

    aerie bench explore --processes --vehicles 2,4,8 --starts 5 --budget 40 --json /tmp/fleet.json

The command line is `sim.explore_bench`'s (one parser, one --help for both modes).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from sim.explore_episode import mean, starts_from_seed
from sim.explore_fleet import FleetTeamResult, Pace, run_fleet_team
from sim.explore_vehicle import FAULT_KINDS, Fault

MODES: tuple[tuple[str, bool], ...] = (("independent", False), ("sharing", True))


def _pct(xs: list[float], q: float) -> float:
    return round(float(np.percentile(xs, q)), 2) if xs else 0.0


def _record(r: FleetTeamResult) -> dict:
    t, reps = r.team, r.reports
    steps = [s for rep in reps for s in rep.steps]
    flown = [1000 * s.overshoot_s for s in steps if s.flight_s > 0]
    decide = [1000 * s.decide_s for s in steps]
    ages, behind = r.news_lag()
    ages = [1000 * a for a in ages]
    legs = [1000 * s.flight_s for s in steps if s.flight_s > 0]
    missions = [rep.mission_s for rep in reps]
    frames = {k: sum(c.get(k, 0) for c in t.counters) for k in ("sent", "merged", "gaps")}
    frames["refused"] = t.refused_frames
    return {"pois": t.team_pois, "overlap_pois": t.overlap_pois, "waypoints": t.team_waypoints,
            "pois_by_vehicle": [len(p) for p in t.pois_by_vehicle], "claim_clashes": t.claim_clashes,
            "failed": [{"vehicle": i, "exitcode": r.outcomes[i].exitcode,
                        "error": r.outcomes[i].error.strip().splitlines()[-1] if r.outcomes[i].error.strip() else ""}
                       for i in r.failed],
            "subscribed": all(rep.subscribed for rep in reps), "frames": frames,
            "frames_behind_mean": round(mean(behind), 3) if behind else 0.0, "frames_behind_max": max(behind, default=0),
            "news_age_ms_p50": _pct(ages, 50), "news_age_ms_p99": _pct(ages, 99), "news_age_ms_max": _pct(ages, 100),
            "leg_ms_p50": _pct(legs, 50), "leg_ms_max": _pct(legs, 100),
            "decide_ms_p50": _pct(decide, 50), "decide_ms_max": _pct(decide, 100),
            "overshoot_ms_p50": _pct(flown, 50), "overshoot_ms_p99": _pct(flown, 99),
            "overshoot_ms_max": _pct(flown, 100), "mission_s": [round(m, 2) for m in missions],
            "straggle_s": round(max(missions) - min(missions), 2) if missions else 0.0,
            "setup_s": round(r.setup_s, 2), "wall_s": round(r.wall_s, 2), "trails": t.trails, "link": t.counters}


def _summary(runs: list[dict]) -> dict:
    out: dict = {}
    for mode, _ in MODES:
        rs = [r[mode] for r in runs]
        out[mode] = {"mean_pois": round(mean([r["pois"] for r in rs]), 2),
                     "mean_overlap": round(mean([r["overlap_pois"] for r in rs]), 2),
                     "mean_waypoints": round(mean([r["waypoints"] for r in rs]), 2),
                     "mean_mission_s": round(mean([m for r in rs for m in r["mission_s"]]), 2),
                     "mean_straggle_s": round(mean([r["straggle_s"] for r in rs]), 2),
                     "overshoot_ms_p99_worst": max(r["overshoot_ms_p99"] for r in rs),
                     "overshoot_ms_max": max(r["overshoot_ms_max"] for r in rs),
                     "decide_ms_max": max(r["decide_ms_max"] for r in rs),
                     "failed_vehicles": sum(len(r["failed"]) for r in rs)}
    sh = [r["sharing"] for r in runs]
    out["sharing_beats_independent"] = sum(r["sharing"]["pois"] > r["independent"]["pois"] for r in runs)
    out["frames"] = {k: sum(r["frames"][k] for r in sh) for k in ("sent", "merged", "refused", "gaps")}
    out["news_age_ms_p50_mean"] = round(mean([r["news_age_ms_p50"] for r in sh]), 1)
    out["news_age_ms_p99_worst"] = max(r["news_age_ms_p99"] for r in sh)
    out["frames_behind_mean"] = round(mean([r["frames_behind_mean"] for r in sh]), 3)
    out["frames_behind_max"] = max(r["frames_behind_max"] for r in sh)
    out["leg_ms_p50_mean"] = round(mean([r["leg_ms_p50"] for r in sh]), 1)
    out["claim_clashes"] = sum(r["claim_clashes"] for r in sh)
    out["all_subscribed"] = all(r["subscribed"] for r in sh)
    return out


def run(sizes: list[int], starts: int, budget: int, seed: int, noise: str = "perfect", pace: Pace = Pace(),
        faults: dict[int, Fault] | None = None) -> dict:
    """Every team size, start and mode, one team at a time; the JSON-ready report."""
    from sim.world.cache import load_world

    launch = starts_from_seed(load_world(None), starts, seed)  # the lock-step bench's waypoints for this seed
    t0 = time.perf_counter()
    out: dict = {"bench": "explore_fleet", "sizes": sizes, "starts": len(launch), "budget": budget, "seed": seed,
                 "perception": noise, "cruise_m_s": pace.cruise_m_s, "time_scale": pace.time_scale,
                 "stagger_s": pace.stagger_s, "faults": {str(i): vars(f) for i, f in (faults or {}).items()},
                 "host": platform.node(), "cpus": os.cpu_count(), "load_avg_before": os.getloadavg(), "by_size": {}}
    for n in sizes:
        runs = []
        for k, start in enumerate(launch):
            rec: dict = {"start": start}
            for mode, sharing in MODES:
                rec[mode] = _record(run_fleet_team(start, budget, n, sharing, seed * 1000 + k, noise=noise,
                                                   pace=pace, faults=faults))
            runs.append(rec)
        out["by_size"][str(n)] = {"summary": _summary(runs), "records": runs}
    out["load_avg_after"] = os.getloadavg()
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def table(rep: dict) -> str:
    lines = [f"explore, processes: {rep['starts']} starts, budget {rep['budget']} steps per vehicle, seed {rep['seed']}, "
             f"perception {rep['perception']}, cruise {rep['cruise_m_s']} m/s x{rep['time_scale']}, "
             f"stagger {rep['stagger_s']} s",
             f"{'N':>2} {'POIs ind':>8} {'POIs shr':>8} {'overlap i/s':>12} {'wayp i/s':>10} {'shr>ind':>7} "
             f"{'merged':>7} {'refused':>7} {'gaps':>5} {'behind mean/max':>15} {'news age p50/p99 ms':>19} {'leg p50 ms':>10} {'oversh p99 ms':>13} "
             f"{'straggle s':>10} {'mission s':>9} {'failed':>6}"]
    for n, block in rep["by_size"].items():
        s = block["summary"]
        ind, shr, fr = s["independent"], s["sharing"], s["frames"]
        lines.append(f"{n:>2} {ind['mean_pois']:>8.1f} {shr['mean_pois']:>8.1f} "
                     f"{ind['mean_overlap']:>5.1f}/{shr['mean_overlap']:<6.1f} "
                     f"{ind['mean_waypoints']:>4.0f}/{shr['mean_waypoints']:<5.0f} "
                     f"{s['sharing_beats_independent']:>3}/{rep['starts']:<3} {fr['merged']:>7} {fr['refused']:>7} "
                     f"{fr['gaps']:>5} {s['frames_behind_mean']:>9.2f}/{s['frames_behind_max']:<5} "
                     f"{s['news_age_ms_p50_mean']:>9.0f}/{s['news_age_ms_p99_worst']:<9.0f} "
                     f"{s['leg_ms_p50_mean']:>10.0f} "
                     f"{max(ind['overshoot_ms_p99_worst'], shr['overshoot_ms_p99_worst']):>13.1f} "
                     f"{shr['mean_straggle_s']:>10.2f} {shr['mean_mission_s']:>9.1f} "
                     f"{ind['failed_vehicles'] + shr['failed_vehicles']:>6}")
    lines.append(f"wall {rep['wall_s']} s; load average before {rep['load_avg_before'][0]:.2f}, "
                 f"after {rep['load_avg_after'][0]:.2f} ({rep['cpus']} CPUs)")
    return "\n".join(lines)


def _fault(text: str) -> tuple[int, Fault]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in FAULT_KINDS):
        raise argparse.ArgumentTypeError(f"expected VEHICLE:STEP[:{'|'.join(FAULT_KINDS)}], got {text!r}")
    return int(parts[0]), Fault(int(parts[1]), parts[2] if len(parts) == 3 else "crash")


def add_options(group) -> None:
    """The processes mode's own options, shown in `aerie bench explore --help` beside the lock-step ones."""
    group.add_argument("--vehicles", default="2,4,8", help="team sizes, comma-separated")
    group.add_argument("--cruise", type=float, default=Pace.cruise_m_s, help="cruise speed, m/s")
    group.add_argument("--time-scale", type=float, default=Pace.time_scale,
                       help="simulated seconds per wall second")
    group.add_argument("--stagger", type=float, default=Pace.stagger_s, help="wall seconds between take-offs")
    group.add_argument("--fault", type=_fault, action="append", default=[], metavar="VEHICLE:STEP[:crash|hang]",
                       help="drill: that vehicle of every team fails at that step (the bench reports it and goes on)")


def run_from_args(ap, args) -> dict:
    """Check the options `add_options` added (errors through `ap`) and run."""
    sizes = [int(x) for x in args.vehicles.split(",") if x.strip()]
    if not sizes or min(sizes) < 1:
        ap.error("every --vehicles size must be positive")
    if args.cruise <= 0 or args.time_scale <= 0 or args.stagger < 0:
        ap.error("--cruise and --time-scale must be positive, --stagger not negative")
    return run(sizes, args.starts, args.budget, args.seed, args.perception,
               Pace(args.cruise, args.time_scale, args.stagger), dict(args.fault))

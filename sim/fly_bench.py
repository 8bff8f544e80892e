"""`aerie bench fly`: the real supervisor (`aerie fly`, its own process) on Helsinki tasks, measured.

Each task gets a fresh simulated vehicle at its start and the world feed; the
supervisor runs with the shipped defaults plus the chosen planner and camera,
so the figures are those of the process a vehicle would run: agent step time
(p50 and p99 over all steps, and the first step, where the plan is asked; with
`--planner llm` also the model's plan call: its wall time, the step that asked
and the step that adopted it, from the flight's episode_summary.json), peak resident
memory of the supervisor process with whatever the configuration loads
(`--planner llm --camera world` = SmolLM2 + the MiniLM embedder + the SSDLite
detector), success and SPL against the world's ground truth.

    aerie bench fly --tasks t019 --planner llm --camera world --json bench/results/DATE/fly_llm.json
    aerie bench fly --tasks h001 --task-file bench/tasks/helsinki_ordinary_test.json --sightings camera --keep DIR

`--vlm NAME` flies with a vision-language model asked between steps (`inference.vlm_model`); the
record adds its calls per mission and seconds per call (episode_summary.json's `vlm`).

`--sightings camera` flies with `supervisor.perception: camera` (`aerie fly --perception camera`): a
look-around at each waypoint, the frames read, the agent given only what was read; the record adds
the seconds per look-around, read ms per view and the frames kept in the flight's rgb_images/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from contract.results import write_json
from types import SimpleNamespace

from contract.results import SUMMARY_FILE


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie bench fly", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="t019", help="comma-separated public task ids (default %(default)s)")
    p.add_argument("--planner", choices=("geometric", "llm"), default="geometric")
    p.add_argument("--camera", default="", help="'' (none) or 'world' (rendered views -> detector)")
    p.add_argument("--perception", default="prep", help="world feed noise preset (default %(default)s)")
    p.add_argument("--sightings", choices=("oracle", "camera"), default="oracle",
                   help="where the agent's sightings come from (supervisor.perception; default %(default)s)")
    p.add_argument("--task-file", default=None, help="the task file the ids are in (default: the public tasks)")
    p.add_argument("--vlm", default="", help="manifest name of a VLM to fly with (tiny-vlm: the tests' random-weight "
                   "one, built if absent; its figures are a cost, never a skill); needs --camera world")
    p.add_argument("--vlm-handler", default="MTMDChatHandler", help="its llama-cpp-python chat handler")
    p.add_argument("--keep", default=None, help="keep the flights' folders (frames, reads) here instead of a temp dir")
    p.add_argument("--json", default=None, help="write the results here")
    return p


def fly_one(task_id: str, planner: str, camera: str, noise: str, workdir: Path, world, sightings: str = "oracle",
            task_file: str | None = None, vlm: str = "", vlm_handler: str = "MTMDChatHandler") -> dict:
    import yaml

    from onboard.config import AerieConfig
    from common.typed_config import to_dict
    from sim.flight_rig import start_rig

    with start_rig(task_id, world=world, noise=noise, **({"tasks_path": task_file} if task_file else {})) as rig:
        base = AerieConfig()
        base = replace(base, agent=replace(base.agent, planner=planner),
                       supervisor=replace(base.supervisor, camera=camera, save_images=sightings == "camera",
                                          perception=sightings))
        if vlm:
            base = replace(base, inference=replace(base.inference, vlm_model=vlm, vlm_chat_handler=vlm_handler))
        cfg = rig.config(base, workdir / task_id)
        config_file = workdir / f"{task_id}.yaml"
        config_file.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
        mission = workdir / f"{task_id}.mission.yaml"
        m = rig.mission()
        spec = {"instruction": m.instruction, "name": m.name, "step_limit": m.step_limit}
        if sightings == "camera":  # the goal's name as the operator would spell it, for the signs
            spec["goal_name"] = rig.task.task.goal_name
        mission.write_text(yaml.safe_dump(spec, allow_unicode=True))
        out = workdir / f"{task_id}.outcome.json"
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--mission",
                               str(mission), "--json", str(out), "--quiet"], capture_output=True, text=True)
        wall = time.monotonic() - t0
        if not out.exists():
            raise RuntimeError(f"aerie fly on {task_id} exited {proc.returncode}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        outcome = json.loads(out.read_text())
        judged = rig.judge(SimpleNamespace(**outcome))
        summary_file = Path(outcome["results_dir"]) / SUMMARY_FILE
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
        llm, vlm_calls = summary.get("llm_plan"), summary.get("vlm")
    steps = outcome["step_ms"]
    camera_rec = {}
    if sightings == "camera":
        frames = sorted((Path(outcome["results_dir"]) / "rgb_images").glob("rgb_timestep_*_view*.png"))
        looks = outcome.get("look_around_s") or []
        camera_rec = {"look_around_s_p50": outcome.get("look_around_s_p50"), "look_arounds": len(looks),
                      "look_around_s_mean": round(statistics.mean(looks), 2) if looks else None,
                      "read_ms_per_view_p50": outcome.get("read_ms_per_view_p50"), "bad_frames": outcome.get("bad_frames"),
                      "frames_kept": len(frames), "results_dir": outcome["results_dir"]}
    return {"task": task_id, **judged, "sightings": sightings, **camera_rec, "exit_code": proc.returncode, "wall_s": round(wall, 1),
            "agent_steps": len(steps), "step_ms_p50": round(statistics.median(steps), 2) if steps else None,
            "step_ms_p99": round(_p99(steps), 1) if steps else None, "step_ms_max": round(max(steps), 1) if steps else None,
            "first_step_ms": round(steps[0], 1) if steps else None,
            "later_steps_ms_p50": round(statistics.median(steps[1:]), 2) if len(steps) > 1 else None,
            "llm_plan": llm, **({"vlm": vlm_calls} if vlm_calls else {}), "peak_rss_mb": outcome["peak_rss_mb"], "landed": outcome["landed"],
            "reason": outcome["reason"]}


def _p99(values: list[float]) -> float:
    """Nearest-rank 99th percentile (with few steps: the slowest)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))]


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from sim.world.cache import load_world

    world = load_world(None)
    if args.vlm == "tiny-vlm":
        from onboard.inference.manifest import model_dir
        from onboard.inference.settings import InferenceConfig
        from sim.tiny_vlm import build_tiny_vlm

        build_tiny_vlm(model_dir(InferenceConfig().model_dir))
    records = []
    with tempfile.TemporaryDirectory(prefix="aerie-fly-bench-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for task_id in [t for t in args.tasks.split(",") if t]:
            rec = fly_one(task_id, args.planner, args.camera, args.perception, work, world, args.sightings,
                          args.task_file, args.vlm, args.vlm_handler)
            records.append(rec)
            print(json.dumps(rec), flush=True)
    all_steps_p50 = [r["step_ms_p50"] for r in records if r["step_ms_p50"] is not None]
    calls = [r["llm_plan"]["call_s"] for r in records if r["llm_plan"] and r["llm_plan"]["call_s"] is not None]
    result = {
        "planner": args.planner, "camera": args.camera or "none", "perception": args.perception,
        "sightings": args.sightings,
        "tasks": len(records), "sr": sum(r["success"] for r in records) / max(1, len(records)),
        "spl": round(sum(r["spl"] for r in records) / max(1, len(records)), 3),
        "step_ms_p50": round(statistics.median(all_steps_p50), 2) if all_steps_p50 else None,
        "first_step_ms_max": max((r["first_step_ms"] or 0) for r in records) if records else None,
        "step_ms_p99_max": max((r["step_ms_p99"] or 0) for r in records) if records else None,
        "plan_call_s_max": max(calls) if calls else None,
        "peak_rss_mb_max": max(r["peak_rss_mb"] for r in records) if records else None,
        "records": records,
    }
    print(f"supervisor on {len(records)} task(s), planner {args.planner}, camera {result['camera']}: "
          f"SR {result['sr']:.0%}, SPL {result['spl']:.3f}, step p50 {result['step_ms_p50']} ms, "
          f"p99 up to {result['step_ms_p99_max']} ms, first step (plan) up to {result['first_step_ms_max']} ms, "
          f"peak RSS {result['peak_rss_mb_max']} MB"
          + (f", plan call up to {result['plan_call_s_max']} s" if calls else ""))
    if args.json:
        write_json(args.json, result)
    return 0 if all(r["landed"] in ("landed", "on ground") for r in records) else 1

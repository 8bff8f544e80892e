"""The planner models side by side on the plan and the mission-analysis contracts (the default is chosen by this).

    python -m sim.benchmark.planner_models [--tasks 20] [--models smollm2-135m-instruct,gemma3-270m] [--json PATH]

Per model (manifest name) and per task of the ordinary dev split (never test):

* **plan**: ``plan_messages`` as the agent sends them at step 0; valid = the
  contract held without the fallback; ordered = strategies in the order
  navigate -> search -> locate, ending with locate; consistent = ordered, and
  some sub-goal names the goal or a landmark of the instruction.
* **reflection used**: the same plan call with one reflection in the prompt
  ("the goal was not <opposite direction> of <landmark>; search <direction>");
  used = the answer differs from the one without it and carries a word of the
  reflection that the task does not have.
* **analysis**: ``analysis_messages`` for a made-up failed flight of that task
  (eight steps, the distance grows most after step 3); valid = the contract
  held; key step right = the model named step 3 (the rule's key step);
  copied example = its reason is the prompt's example sentence word for word
  (the agent then keeps the rule-based analysis, so it does not count as valid).

Seconds per call are wall time on this machine, one call at a time; the CPU
is shared (other processes' load is recorded as the 1-minute load average).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from contract.results import write_json

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "bench" / "tasks" / "helsinki_ordinary_dev.json"
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "northeast": "southwest",
            "southwest": "northeast", "northwest": "southeast", "southeast": "northwest"}
_ORDER = {"navigate": 0, "search": 1, "locate": 2}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-zäöå]+", text.lower()) if len(w) > 3}


def _ordered(plan: Any) -> bool:
    order = [_ORDER[g.strategy] for g in plan.sub_goals]
    return order == sorted(order) and order[-1] == 2


def _consistent(plan: Any, names: list[str]) -> bool:
    said = " ".join(g.goal for g in plan.sub_goals).lower()
    return _ordered(plan) and any(n and any(w in said for w in _words(n)) for n in names)


def _reflection(task: dict[str, Any]) -> str:
    lm = (task.get("landmarks") or ["the landmark"])[0]
    words = _words(task["description"])
    direction = next((d for d in ("northeast", "northwest", "southeast", "southwest", "north", "south", "east", "west")
                      if d in words), "north")
    return f"mission failed: the goal was not {OPPOSITE[direction]} of {lm}; search {direction} of {lm} first"


def _trajectory():
    from onboard.agent.frame_log import FrameLog

    dist = [400, 350, 300, 260, 420, 410, 400, 395]  # the largest increase follows step 3
    return [FrameLog(i, "", "navigate", {"kind": "move", "bearing": 45.0 if i != 3 else 225.0}, "", (0, 0, 0, 0),
                     float(d), "SUCCESS" if i and dist[i] < dist[i - 1] else ("FAILURE" if i else ""))
            for i, d in enumerate(dist)]


def measure(model_name: str, tasks: list[dict[str, Any]], cfg: Any) -> dict[str, Any]:
    from onboard.agent.goal_description import parse_goal_description
    from onboard.agent.llm_planner import llm_plan
    from onboard.agent.mission_analysis import key_step, model_analysis
    from onboard.inference.planner_model import PlannerModel

    model = PlannerModel.from_config(replace(cfg, llm_model=model_name))
    rows = []
    frames = _trajectory()
    try:
        for t in tasks:
            goal = parse_goal_description(t["description"], t["landmarks"])
            names = [t["goal"]["name"], *t["landmarks"]]
            plain = llm_plan(model, t["description"], goal)
            refl_text = _reflection(t)
            window = f"## Recent reflections (lessons from earlier attempts)\n1. {refl_text}\nDo not repeat these mistakes."
            steered = llm_plan(model, t["description"], goal, reflections=window)
            new_words = _words(refl_text) - _words(t["description"])
            answer = " ".join([steered.plan.reason, *(g.goal for g in steered.plan.sub_goals)]).lower()
            a = model_analysis(model, t["description"], False, "timeout", frames,
                               [f.effect for f in frames if f.effect], plain.plan)
            rows.append({
                "task": t["id"],
                "plan_valid": not plain.used_fallback, "plan_repaired": plain.repaired,
                "plan_ordered": (not plain.used_fallback) and _ordered(plain.plan),
                "plan_consistent": (not plain.used_fallback) and _consistent(plain.plan, names),
                "plan_s": round(plain.seconds, 2), "plan": [g.strategy for g in plain.plan.sub_goals],
                "plan_goals": [g.goal for g in plain.plan.sub_goals],
                "reflection_valid": not steered.used_fallback,
                "reflection_used": (not steered.used_fallback) and steered.plan != plain.plan
                and any(w in answer for w in new_words),
                "reflection_plan_s": round(steered.seconds, 2),
                "analysis_valid": a.source == "model", "analysis_errors": a.errors,
                "analysis_key_right": a.source == "model" and a.analysis.key_timestep == key_step(frames),
                "analysis_reason": a.analysis.reason if a.source == "model" else "",
                "analysis_copied_example": any("prompt's example" in e for e in a.errors),
                "analysis_s": round(a.seconds, 2),
            })
    finally:
        model.close()
    n = max(1, len(rows))

    def share(key: str) -> float:
        return round(sum(bool(r[key]) for r in rows) / n, 3)

    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 2) if rows else 0.0

    return {"model": model_name, "tasks": len(rows),
            "plan_valid": share("plan_valid"), "plan_ordered": share("plan_ordered"),
            "plan_consistent": share("plan_consistent"),
            "reflection_valid": share("reflection_valid"), "reflection_used": share("reflection_used"),
            "analysis_valid": share("analysis_valid"), "analysis_key_right": share("analysis_key_right"),
            "analysis_copied_example": share("analysis_copied_example"),
            "plan_s_median": median("plan_s"), "analysis_s_median": median("analysis_s"),
            "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "config.yaml"))
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--models", default="smollm2-135m-instruct,gemma3-270m")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    from onboard.config import load_config

    if args.tasks < 1:
        ap.error("--tasks must be at least 1")
    cfg = replace(load_config(args.config).inference, call_deadline_s=120.0)
    tasks = json.loads(DEV.read_text())["tasks"][:args.tasks]
    t0 = time.perf_counter()
    out = {"split": "ordinary dev", "task_ids": [t["id"] for t in tasks], "load_1min_before": os.getloadavg()[0],
           "cpu_count": os.cpu_count(), "n_threads": cfg.n_threads or max(1, (os.cpu_count() or 2) // 2),
           "models": [measure(m, tasks, cfg) for m in args.models.split(",")]}
    out["load_1min_after"] = os.getloadavg()[0]
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    for m in out["models"]:
        print(f"{m['model']}: plan valid {m['plan_valid']:.0%}, ordered {m['plan_ordered']:.0%}, "
              f"consistent {m['plan_consistent']:.0%}, "
              f"reflection used {m['reflection_used']:.0%}, analysis valid {m['analysis_valid']:.0%} "
              f"(key step right {m['analysis_key_right']:.0%}); median s/call plan {m['plan_s_median']}, "
              f"analysis {m['analysis_s_median']}")
    if args.json:
        write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()

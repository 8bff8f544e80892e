"""Ablation of the agent's mechanisms: everything on once, then each `use_*` switch off alone.

    aerie bench nav --ablation --agent geometric --tasks bench/tasks/helsinki_ordinary_dev.json --json out.json
    aerie bench nav --ablation --agent llm --limit 12 --mechanisms use_replan,use_prompt_context --json out.json
    aerie bench nav --ablation --learn --agent geometric --json out.json   # the memory mechanisms too

Why: a mechanism earns its place by what it does to the numbers. An ablation run is the
normal benchmark run (`make_aerie_agent` with the planner's own `AgentConfig`) with one
field of that config replaced by `dataclasses.replace`; nothing else changes, so the
difference to the baseline is the mechanism's alone (same tasks, same perception seeds).

The mechanisms are not listed by hand: they are the boolean fields of `AgentConfig`
whose name starts with ``use_``, so a switch added later is ablated without a change
here. `KNOWN` only gives each a human name, the seed mechanism it stands for, and
where it can act at all:

* llm-only switches act in the model's prompt or plan and are run for `llm` only;
* `map` switches need an onboard map and run only when one is given (`--map`);
* `memory` switches need a memory file carried between flights and run only with
  `--learn`: then every run (the baseline and each switch off) first flies the tasks
  once on a fresh memory file (the flight's end with its mission analysis, the ground
  station's post-flight analysis, the bundle imported: `sim/benchmark/learning.py`'s
  path) and is scored on flying the same tasks again with that memory. The first pass
  is flown with the run's own config, so a switch that changes what is written (the
  mission analysis) is ablated in what it writes as well as in what is read.

Switches that cannot act in a run are listed with the reason (`not_applicable`), never
scored as "moves nothing". An unknown switch (added after this table) gets its field
name, applies to both planners and needs nothing.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from onboard.agent.settings import AgentConfig
from sim.benchmark.runner import wait_until_idle

PLANNERS = ("geometric", "llm")
# Plan-call sources that mean the model's answer was used (else the geometric fallback was flown).
ANSWERED = ("llm", "llm-repaired")


@dataclass(frozen=True)
class Mechanism:
    """One `use_*` switch of `AgentConfig` and what it stands for."""

    switch: str
    name: str
    seed: str = ""
    applies_to: tuple[str, ...] = PLANNERS
    needs: str = ""  # "", "map" or "memory": what a run must offer for the switch to act

    def to_json(self) -> dict[str, Any]:
        return {"switch": self.switch, "name": self.name, "seed": self.seed, "applies_to": list(self.applies_to),
                "needs": self.needs or None}


_LLM = ("llm",)
# switch -> (human name, the seed mechanism it stands for, planners it acts in, what it needs)
KNOWN: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "use_prompt_context": ("seeds' context in every prompt", "reflections, navigation context, semantic summary, "
                           "episodic sentences in the prompt (001 §3.4.1, 002 §6/§8/§10, 004)", _LLM, ""),
    "use_adaptive_retrieval": ("adaptive retrieval", "skip / single / hierarchical by task complexity "
                               "(001 §3.2.2-3.2.3)", _LLM, "memory"),
    "use_replan": ("re-plan on triggers", "the plan updated as the mission goes (004)", _LLM, ""),
    "use_place_anchor_plan": ("PlaceAnchorPlan contract", "goal_flag and angle from the model (002 §5, §11)",
                              _LLM, ""),
    "use_plan": ("long-term plan", "navigate -> search -> locate sub-goals (000 §4)", PLANNERS, ""),
    "use_search_subgoal": ("the plan's search sub-goal", "the search expert (000 §4.2)", ("geometric",), ""),
    "use_reflection": ("strategy-tree reflections", "error-threshold controller, loop breaking (001 §3.3.2)",
                       PLANNERS, ""),
    # The reflection window is read only into the model's prompts (prompt_context, replan): no geometric decision.
    "use_persistent_reflections": ("reflections kept across flights", "reflection memory (001)", _LLM, "memory"),
    # Acts without memory too: the analysis is a model call after every mission, on the worker the next
    # mission's plan calls queue on (its text is read only by later flights, with --learn).
    "use_mission_analysis": ("end-of-mission analysis by the model", "success / failure analysis (000 §5)",
                             _LLM, ""),
    "use_anchors": ("place-anchor memory", "visited places, ABABA / STUCK hints (002)", PLANNERS, ""),
    "use_look_up": ("look over the roofs", "Aerie's own (no seed)", PLANNERS, ""),
    "use_map": ("onboard map", "Aerie's own (no seed)", PLANNERS, "map"),
}


def switches(config_cls: type = AgentConfig) -> list[str]:
    """The boolean `use_*` fields of `config_cls`, in declaration order."""
    return [f.name for f in dataclasses.fields(config_cls)
            if f.name.startswith("use_") and isinstance(f.default, bool)]


def mechanisms(config_cls: type = AgentConfig) -> list[Mechanism]:
    """Every switch of `config_cls` as a `Mechanism` (the `KNOWN` entry, or its field name)."""
    out = []
    for sw in switches(config_cls):
        name, seed, applies, needs = KNOWN.get(sw, (sw, "", PLANNERS, ""))
        out.append(Mechanism(sw, name, seed, applies, needs))
    return out


def not_applicable(m: Mechanism, planner: str, base: AgentConfig, *, has_map: bool, has_memory: bool) -> str:
    """Why `m` cannot act in this run ("" when it can)."""
    if planner not in m.applies_to:
        return f"acts in the {' / '.join(m.applies_to)} planner only"
    if m.needs == "map" and not has_map:
        return "needs an onboard map (--map)"
    if m.needs == "memory" and not has_memory:
        return "needs memory carried between flights (--learn)"
    if not getattr(base, m.switch):
        return "already off in the planner's config"
    return ""


def ablation_configs(base: AgentConfig, mechs: list[Mechanism]) -> list[tuple[Mechanism | None, AgentConfig]]:
    """The baseline (None, `base`), then per mechanism `base` with its switch, and only it, off."""
    return [(None, base), *((m, dataclasses.replace(base, **{m.switch: False})) for m in mechs)]


def _model_figures(records: list[dict[str, Any]]) -> dict[str, float]:
    """Plan-model calls per mission and seconds per call; nothing for a run that made none (geometric)."""
    calls = [r["model_calls"] for r in records if "model_calls" in r]
    if not sum(calls):
        return {}
    secs = sum(r.get("model_s", 0.0) for r in records)
    answered = [c for r in records for c in r.get("llm_calls", ()) if c.get("source") in ANSWERED]
    out = {"model_calls_per_mission": round(sum(calls) / len(calls), 2), "s_per_call": round(secs / sum(calls), 2),
           "model_answered_per_mission": round(len(answered) / len(calls), 2)}
    if answered:  # a fallback "call" refused by a wedged worker takes ~0 s: it must not dilute the time per call
        out["s_per_answered_call"] = round(sum(c["call_s"] or 0.0 for c in answered) / len(answered), 2)
    return out


def _score(records: list[dict[str, Any]]) -> dict[str, Any]:
    from sim.benchmark.metrics import summarise

    s = summarise(records)
    return {"sr": round(s.sr, 4), "spl": round(s.spl, 4), "n": s.n, **_model_figures(records)}


def _plain_run(world, tasks, planner: str, cfg: AgentConfig, preset: str, seed: int, map_provider,
               camera_bench=None) -> list[dict]:
    """The normal benchmark run (`run_tasks`) of `planner` flying `cfg`, each mission starting with the model idle."""
    from sim.benchmark.aerie_agents import make_aerie_agent
    from sim.benchmark.runner import run_tasks

    waits: list[float] = []

    def agent():
        a = make_aerie_agent(planner, world, config=cfg)
        waits.append(wait_until_idle(a.agent.plan_model))
        return a

    res = run_tasks(world, tasks, agent, preset, seed, progress=False, map_provider=map_provider,
                    camera_bench=camera_bench)
    for rec, w in zip(res["records"], waits):
        rec["model_idle_wait_s"] = w
    return res["records"]


def _memory_run(world, tasks, planner: str, cfg: AgentConfig, preset: str, seed: int, work: Path) -> list[dict]:
    """Fly the tasks on a fresh memory file, reflect at the ground, fly them again: the second pass's records."""
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore
    from sim.benchmark.aerie_agents import make_aerie_agent
    from sim.benchmark.episode import run_episode
    from sim.benchmark.learning import PublishingAgent, reflect

    work.mkdir(parents=True, exist_ok=True)
    embedder = _embedder(MiniLMEmbedder)
    with ExperienceStore.open(work / "ground.sqlite", embedder) as ground, \
            ExperienceStore.open(work / "vehicle.sqlite", embedder) as vehicle:
        passes = []
        for _ in range(2):
            records, flights = [], []
            for i, rt in enumerate(tasks):
                agent = PublishingAgent(make_aerie_agent(planner, world, config=cfg, experience_store=vehicle).agent)
                wait_until_idle(agent.agent.plan_model)
                rec = run_episode(world, rt, agent, preset, seed=seed * 100_003 + i, preset_name=preset)
                flights.append(agent.end_flight())  # waits for the mission analysis (its deadline), stores it
                rec.update(agent.record_extra())
                records.append(rec)
            passes.append(records)
            if len(passes) == 1:
                reflect(flights, ground, vehicle, work / "bundles")
    return passes[1]


_EMBEDDER: list = []


def _embedder(cls):
    """One embedder per process: loading it is the slow part of opening a memory file."""
    if not _EMBEDDER:
        _EMBEDDER.append(cls.load())
    return _EMBEDDER[0]


def run_ablation(world, tasks, planner: str, preset: str = "perfect", *, seed: int = 0,
                 only: list[str] | None = None, map_provider=None, learn: bool = False,
                 learn_dir: str | Path | None = None, config_cls: type = AgentConfig,
                 progress: bool = True, run: Callable | None = None,
                 on_result: Callable[[dict[str, Any]], None] | None = None, camera_bench=None) -> dict[str, Any]:
    """Baseline and one run per applicable mechanism (`only`: these switches); JSON-ready.

    `camera_bench` (`sim.benchmark.camera_perception.CameraBench`): every run decides from the camera's
    reads instead of the oracle's sightings (`preset` is then the label "camera"); not with `learn`.

    `on_result(partial)` is called after every run but the last with the JSON so far (`complete`
    false): a long llm run that is stopped keeps what it measured.

    `run(tasks, cfg, label) -> records` replaces the benchmark run (tests check the configs it is given).
    """
    from sim.benchmark.aerie_agents import aerie_agent_config

    if planner not in PLANNERS:
        raise ValueError(f"--ablation runs the {' or '.join(PLANNERS)} planner, not {planner!r}")
    if learn and camera_bench is not None:
        raise ValueError("--ablation with --learn runs on the oracle's sightings, not the camera's")
    mechs = mechanisms(config_cls)
    if only == ["none"]:  # the baseline alone (the planner as the ablation flies it, e.g. on the test split)
        mechs = []
    elif only:
        unknown = sorted(set(only) - {m.switch for m in mechs})
        if unknown:
            raise ValueError(f"unknown mechanism(s) {unknown}; the switches are {[m.switch for m in mechs]}")
        mechs = [m for m in mechs if m.switch in only]
    base = aerie_agent_config(planner)
    if not isinstance(base, config_cls):  # a config class with more switches than AgentConfig (tests)
        base = config_cls(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
    skipped, runnable = [], []
    for m in mechs:
        why = not_applicable(m, planner, base, has_map=map_provider is not None, has_memory=learn)
        (skipped.append({**m.to_json(), "planner": planner, "why": why}) if why else runnable.append(m))
    work = Path(learn_dir or tempfile.mkdtemp(prefix="aerie-ablation-"))
    if run is None:
        def run(ts, cfg, label):
            if learn:
                return _memory_run(world, ts, planner, cfg, preset, seed, work / label)
            return _plain_run(world, ts, planner, cfg, preset, seed, map_provider, camera_bench)
    t0 = time.perf_counter()
    results: list[tuple[Mechanism | None, dict[str, Any]]] = []
    runs = ablation_configs(base, runnable)
    head = {"planner": planner, "perception": preset, "seed": seed, "memory": "learn" if learn else "none",
            "map": map_provider is not None}
    for m, cfg in runs:
        label = "baseline" if m is None else m.switch
        t = time.perf_counter()
        scored = _score(run(tasks, cfg, label))
        scored["elapsed_s"] = round(time.perf_counter() - t, 1)
        results.append((m, scored))
        if progress:
            print(f"  {planner} {label:<28} SR {scored['sr']:.3f}  SPL {scored['spl']:.3f}  "
                  f"({scored['n']} tasks, {scored['elapsed_s']:.0f} s)", file=sys.stderr, flush=True)
        if on_result is not None and len(results) < len(runs):
            on_result({**_assemble(results, skipped, head, t0), "complete": False})
    return {**_assemble(results, skipped, head, t0), "complete": True}


def _assemble(results: list[tuple[Mechanism | None, dict[str, Any]]], skipped: list[dict[str, Any]],
              head: dict[str, Any], t0: float) -> dict[str, Any]:
    """The JSON of the runs so far: the baseline first, one row per switch run."""
    baseline = results[0][1]
    rows = []
    for m, off in results[1:]:
        row = {**m.to_json(), "planner": head["planner"], "sr_on": baseline["sr"], "sr_off": off["sr"],
               "spl_on": baseline["spl"], "spl_off": off["spl"], "n": off["n"],
               "delta_sr": round(baseline["sr"] - off["sr"], 4), "delta_spl": round(baseline["spl"] - off["spl"], 4),
               "elapsed_s": off["elapsed_s"]}
        for key in ("model_calls_per_mission", "s_per_call", "model_answered_per_mission", "s_per_answered_call"):
            if key in off:
                row[key] = off[key]
        rows.append(row)
    return {**head, "sr": baseline["sr"], "spl": baseline["spl"], "baseline": baseline, "mechanisms": rows,
            "not_applicable": skipped, "elapsed_s": round(time.perf_counter() - t0, 1)}


def format_table(result: dict[str, Any]) -> str:
    b = result["baseline"]
    lines = [f"ablation: {result['planner']} / {result['perception']}, memory {result['memory']}, "
             f"{b['n']} tasks: everything on SR {b['sr']:.3f} SPL {b['spl']:.3f}",
             f"{'switch off':<28} {'SR':>7} {'dSR':>7} {'SPL':>7} {'dSPL':>7}"]
    for r in result["mechanisms"]:
        lines.append(f"{r['switch']:<28} {r['sr_off']:7.3f} {-r['delta_sr']:+7.3f} {r['spl_off']:7.3f} "
                     f"{-r['delta_spl']:+7.3f}")
    for r in result["not_applicable"]:
        lines.append(f"{r['switch']:<28} not run: {r['why']}")
    return "\n".join(lines)

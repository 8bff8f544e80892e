"""The learning run: fly the tasks, reflect on the flights at the ground, fly again with the lessons.

    aerie bench nav --agent geometric --perception prep --learn --json learn.json

Each episode is published as a flight would be (``flight_start``, the ``plan``,
one ``agent_step`` per step from :func:`onboard.agent.step_report.step_payload`,
``flight_end`` with the agent's own verdict), the ground station's real
post-flight analyser turns those messages into records and a bundle, and the
vehicle's experience store imports the bundle (the sync path without the
socket). Nothing from the simulator's ground truth goes into a lesson: the
verdict is the agent's (it arrives only after reading the goal's name), and
positions are the agent's own.

Two comparisons, both against the first (empty-memory) run:

* ``same``: lessons from every task, the same tasks flown again from the same
  starts with the same perception seeds. This measures *remembering*.
* ``held_out``: lessons from the odd-numbered tasks only, the even-numbered
  tasks flown again. This measures what carries over to other tasks.

Measured on the public 100 tasks under `prep` (seed 0; 2-core machine, 161 s):
same tasks SR 0.94 -> 0.99, SPL 0.712 -> 0.854, mean steps 42.1 -> 35.2 (the
goal prior: a flight that read the goal's name is reused as a fast path);
odd -> even SR 0.94 -> 0.98, SPL 0.702 -> 0.757, 42.5 -> 40.1 steps (only the
remembered landmark maps carry over: other goals, other instructions).

With ``teacher_tasks`` (``--learn-from``) a third comparison, ``from_other``:
the teacher tasks are flown on empty memory, reflected on, and the tasks are
flown with those lessons only. Learning on the ordinary dev set and flying
the test set measures remembered positions on tasks that were never flown or
tuned on; the dev flights are the only source of the memory.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onboard.agent.agent import GraphAgent, variant_config
from onboard.agent.step_report import plan_payload, step_payload
from contract.messages import FlightEnd, FlightStart, Payload
from sim.benchmark.aerie_agents import BenchAgent
from sim.benchmark.agent_api import Action, Observation
from sim.benchmark.episode import run_episode
from sim.benchmark.metrics import summarise
from sim.benchmark.tasks import ResolvedTask
from sim.world.world import World


class PublishingAgent(BenchAgent):
    """A `BenchAgent` that keeps the telemetry messages the supervisor would publish for its flight."""

    def __init__(self, agent: GraphAgent, vehicle_id: str = "bench") -> None:
        super().__init__(agent)
        self.vehicle_id = vehicle_id
        self.messages: list[dict[str, Any]] = []

    def _publish(self, payload: Payload) -> None:
        self.messages.append({"seq": len(self.messages) + 1, "type": payload.MSG_TYPE, "vehicle_id": self.vehicle_id,
                              "payload": payload.encode()})

    def reset(self, description: str, seed: int) -> None:
        super().reset(description, seed)
        self.messages = []
        self._publish(FlightStart(flight_id=self.agent.flight_id, mission=description, task_instruction=description))

    def act(self, observation: Observation) -> Action:
        had_plan = self.agent.state.dynamic.plan is not None
        action = super().act(observation)
        state = self.agent.state
        if not had_plan and (plan := plan_payload(state)) is not None:
            self._publish(plan)
        self._publish(step_payload(state, state.dynamic.trajectory_history[-1]))
        return action

    def end_flight(self) -> list[dict[str, Any]]:
        """Close the flight with the agent's own verdict (None = it never arrived) and return its messages.

        The mission analysis comes first, as the supervisor sends it after landing.
        """
        analysis = self.agent.finish_mission()
        if analysis is not None:
            self._publish(analysis.to_message(self.agent.flight_id))
        self._publish(FlightEnd(success=bool(self.agent.state.final.mission_success)))
        return self.messages


@dataclass
class Pass:
    """One run over some tasks: the benchmark records and each flight's messages."""

    records: list[dict[str, Any]] = field(default_factory=list)
    flights: list[list[dict[str, Any]]] = field(default_factory=list)


def fly(world: World, tasks: list[ResolvedTask], indices: list[int], preset: str, *, store: Any = None,
        agent_name: str = "geometric", seed: int = 0, progress: bool = False) -> Pass:
    """Fly `tasks[i]` for i in `indices` (perception seed as the plain benchmark: seed * 100003 + i)."""
    from onboard.map.corridors import NODE_SPACING_M

    gazetteer, aliases = [lm.name for lm in world.landmarks], world.aliases()
    out = Pass()
    for n, i in enumerate(indices):
        agent = PublishingAgent(GraphAgent(variant_config(agent_name), gazetteer, name=agent_name,
                                           experience_store=store, step_spacing_m=NODE_SPACING_M, aliases=aliases))
        out.records.append(run_episode(world, tasks[i], agent, preset, seed=seed * 100_003 + i, preset_name=preset))
        out.flights.append(agent.end_flight())
        if progress:
            print(f"\r  {n + 1}/{len(indices)} flights", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return out


def reflect(flights: list[list[dict[str, Any]]], ground_store: Any, vehicle_store: Any, bundle_dir: Path,
            vehicle_id: str = "bench") -> dict[str, int]:
    """Post-flight analysis of each flight at the ground, its bundle imported into the vehicle store."""
    from ground_station.flight_analysis import analyse
    from ground_station.post_flight import bundle_name, export_analysis
    from onboard.agent.mission_lessons import retire_merged
    from onboard.memory.bundle import import_bundle

    bundle_dir.mkdir(parents=True, exist_ok=True)
    counts = {"flights": 0, "bundles": 0, "added": 0, "already_present": 0}
    for n, messages in enumerate(flights):
        counts["flights"] += 1
        start_seq = 1_000_000 * n + 1
        shifted = [{**m, "seq": m["seq"] + start_seq - 1} for m in messages]
        analysis = analyse(shifted, vehicle_id=vehicle_id, start_seq=start_seq)
        if analysis is None:
            continue
        path = bundle_dir / bundle_name(vehicle_id, start_seq)
        export_analysis(analysis, ground_store, path)
        report = import_bundle(vehicle_store, path)
        retire_merged(vehicle_store)
        counts["bundles"] += 1
        counts["added"] += report.added
        counts["already_present"] += report.already_present
    return counts


def figures(records: list[dict[str, Any]]) -> dict[str, float]:
    s = summarise(records)
    steps = sum(r["steps"] for r in records) / max(1, len(records))
    return {"episodes": s.n, "sr": round(s.sr, 4), "spl": round(s.spl, 4), "mean_steps": round(steps, 2),
            "ababa": round(s.ababa, 3)}


def compare(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    b, a = figures(before), figures(after)
    return {"before": b, "after": a, "delta_spl": round(a["spl"] - b["spl"], 4), "delta_sr": round(a["sr"] - b["sr"], 4),
            "delta_mean_steps": round(a["mean_steps"] - b["mean_steps"], 2)}


def learning_run(world: World, tasks: list[ResolvedTask], preset: str, out_dir: str | Path, *,
                 agent_name: str = "geometric", seed: int = 0, progress: bool = True,
                 teacher_tasks: list[ResolvedTask] | None = None, teacher_name: str = "") -> dict[str, Any]:
    """Run 1 on empty memory, reflect, run 2 with the lessons: the `same` and `held_out` comparisons.

    With `teacher_tasks`, also `from_other`: those tasks' lessons only, these tasks flown with them.
    """
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.sqlite*"):
        old.unlink()
    t0 = time.perf_counter()
    embedder = MiniLMEmbedder.load()
    every = list(range(len(tasks)))
    odd = [i for i in every if i % 2 == 0]  # t001, t003, ...: the odd-numbered tasks
    even = [i for i in every if i % 2 == 1]
    result: dict[str, Any] = {"preset": preset, "agent": agent_name, "seed": seed, "tasks": len(tasks)}
    with ExperienceStore.open(out / "ground.sqlite", embedder) as ground, \
            ExperienceStore.open(out / "vehicle_all.sqlite", embedder) as vehicle_all, \
            ExperienceStore.open(out / "vehicle_odd.sqlite", embedder) as vehicle_odd:
        if progress:
            print("run 1 (empty memory)", file=sys.stderr)
        first = fly(world, tasks, every, preset, store=vehicle_all, agent_name=agent_name, seed=seed,
                    progress=progress)
        result["reflect_all"] = reflect(first.flights, ground, vehicle_all, out / "bundles")
        result["reflect_odd"] = reflect([first.flights[i] for i in odd], ground, vehicle_odd, out / "bundles_odd")
        result["reimport_all"] = reflect(first.flights, ground, vehicle_all, out / "bundles")  # idempotent: adds 0
        if progress:
            print("run 2 (lessons from every task)", file=sys.stderr)
        same = fly(world, tasks, every, preset, store=vehicle_all, agent_name=agent_name, seed=seed,
                   progress=progress)
        if progress:
            print("run 2 (lessons from the odd-numbered tasks, flying the even-numbered)", file=sys.stderr)
        held = fly(world, tasks, even, preset, store=vehicle_odd, agent_name=agent_name, seed=seed,
                   progress=progress)
        if teacher_tasks:
            with ExperienceStore.open(out / "vehicle_teacher.sqlite", embedder) as vehicle_teacher:
                if progress:
                    print(f"teacher run ({len(teacher_tasks)} tasks of {teacher_name or 'another set'}, "
                          "empty memory)", file=sys.stderr)
                taught = fly(world, teacher_tasks, list(range(len(teacher_tasks))), preset, store=vehicle_teacher,
                             agent_name=agent_name, seed=seed + 1, progress=progress)
                result["reflect_teacher"] = reflect(taught.flights, ground, vehicle_teacher, out / "bundles_teacher")
                if progress:
                    print("run 2 (lessons from the teacher tasks only)", file=sys.stderr)
                other = fly(world, tasks, every, preset, store=vehicle_teacher, agent_name=agent_name, seed=seed,
                            progress=progress)
            result["teacher"] = {"tasks": teacher_name, "n": len(teacher_tasks), **figures(taught.records)}
            result["from_other"] = compare(first.records, other.records)
    result["same"] = compare(first.records, same.records)
    result["held_out"] = compare([first.records[i] for i in even], held.records)
    result["elapsed_s"] = round(time.perf_counter() - t0, 1)
    result["records"] = {"run1": first.records, "same": same.records, "held_out": held.records}
    if teacher_tasks:
        result["records"]["from_other"] = other.records
    return result


def format_table(result: dict[str, Any]) -> str:
    lines = [f"learning run: {result['agent']} / {result['preset']}, {result['tasks']} tasks, "
             f"{result['elapsed_s']:.0f} s",
             f"{'comparison':<34} {'SR':>11} {'SPL':>15} {'mean steps':>15}"]
    for key, label in (("same", "same tasks (remembering)"), ("held_out", "odd -> even tasks (other tasks)"),
                       ("from_other", "teacher set -> these tasks")):
        if key not in result:
            continue
        c = result[key]
        b, a = c["before"], c["after"]
        lines.append(f"{label:<34} {b['sr']:.2f} -> {a['sr']:.2f} {b['spl']:.3f} -> {a['spl']:.3f}"
                     f" {b['mean_steps']:6.1f} -> {a['mean_steps']:5.1f}")
    return "\n".join(lines)

"""The end-of-mission analysis onboard (ReflectionNav §5): outcome, key step, why, the plan to fly next time.

The local model reads the flown trajectory (one line per step, the steps where
the distance to the target changed most kept when the flight was long) and
answers the `AnalysisOutput` contract under its grammar. The call starts when
the mission ends and runs on its own thread; whoever ends the flight (the
supervisor after landing, the benchmark after the episode) waits for it at
most `agent.mission_analysis_deadline_s`. Without a model, with the switch
off, or when the model fails or is late, the rule-based analysis stands: the
one sentence the agent has always written, so a flight is never worse off for
having a model.

The model's answer is checked against what the agent knows: the outcome is a
fact (a contradicting status is corrected and noted), a key step outside the
flight is replaced by the rule's key step, and a reason that is the prompt's
example word for word is no analysis (the rule-based one stands).
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Sequence

from contract.payloads.analysis import MissionAnalysisReport
from onboard.agent.frame_log import FrameLog
from onboard.inference.contracts import AnalysisOutput, PlanOutput

# A longer trajectory is cut to the steps that moved the distance most (plus first and last): a
# 135M-parameter model's prompt must stay well inside its context with the plan and the task.
MAX_TRAJECTORY_LINES = 16

EXAMPLE_REASON = "turned away from the target and never came back"
SYSTEM = ("You review a finished drone flight to a place in a city. Name the step whose decision decided the "
          "outcome, say why in one short sentence, and write the plan (1-3 sub-goals: navigate, search, locate) "
          "the next flight to this place should follow. JSON only. Example: "
          '{"status":"failure","key_timestep":4,"reason":"' + EXAMPLE_REASON + '",'
          '"refined_plan":[{"goal":"fly to the goal area","strategy":"navigate","desired_state":"near the area"},'
          '{"goal":"look for the name","strategy":"search","desired_state":"name read"},'
          '{"goal":"arrive at the goal","strategy":"locate","desired_state":"arrived"}]}')


@dataclass(frozen=True)
class MissionAnalysis:
    """The analysis and where it came from: "model", "rule" (no model asked) or "fallback" (the model failed)."""

    analysis: AnalysisOutput
    source: str
    text: str  # the reflection that goes into the window (and the prompts of later flights)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_message(self, flight_id: str = "") -> MissionAnalysisReport:
        """The telemetry message the ground station reads into its lesson of this flight."""
        a = self.analysis
        return MissionAnalysisReport(source=self.source, status=a.status, key_timestep=max(0, int(a.key_timestep)),
                                     reason=a.reason, refined_plan=tuple(g.strategy for g in a.refined_plan),
                                     text=self.text, errors=tuple(self.errors), seconds=round(self.seconds, 3),
                                     flight_id=flight_id)

    def to_json(self) -> dict[str, Any]:
        a = self.analysis
        return {"source": self.source, "status": a.status, "key_timestep": a.key_timestep, "reason": a.reason,
                "refined_plan": [g.strategy for g in a.refined_plan], "text": self.text, "errors": list(self.errors),
                "seconds": round(self.seconds, 3)}


def key_step(frames: Sequence[FrameLog]) -> int:
    """The step after which the distance to the target grew most (the ground analyser's rule); else the last."""
    best, grew = (frames[-1].timestep if frames else 0), 0.0
    for a, b in zip(frames, frames[1:]):
        if a.distance_to_target is not None and b.distance_to_target is not None:
            if b.distance_to_target - a.distance_to_target > grew:
                best, grew = a.timestep, b.distance_to_target - a.distance_to_target
    return best


def rule_sentence(success: bool, final_reason: str, moves: int, effects: Sequence[str], plan: PlanOutput | None) -> str:
    share = sum(e == "SUCCESS" for e in effects) / max(1, len(effects))
    strategies = json.dumps([g.strategy for g in plan.sub_goals]) if plan else "none"
    return (f"mission {'succeeded' if success else 'failed'} ({final_reason}) after {moves} moves, "
            f"{share:.0%} of them brought the target closer; plan: {strategies}")


def rule_analysis(success: bool, final_reason: str, frames: Sequence[FrameLog], effects: Sequence[str],
                  plan: PlanOutput | None, *, source: str = "rule", errors: Sequence[str] = (),
                  seconds: float = 0.0) -> MissionAnalysis:
    text = rule_sentence(success, final_reason, len(frames), effects, plan)
    return MissionAnalysis(AnalysisOutput.fallback(success, key_step(frames), text, plan), source, text,
                           list(errors), seconds)


def _step_line(f: FrameLog) -> str:
    m = f.movement
    what = (f"move {m.get('bearing', 0):.0f} deg" if m.get("kind") == "move" else str(m.get("kind", "")))
    dist = "?" if f.distance_to_target is None else f"{f.distance_to_target:.0f} m"
    return f"{f.timestep}: {f.strategy}, {what}, target {dist}" + (f", {f.effect}" if f.effect else "")


def trajectory_lines(frames: Sequence[FrameLog], limit: int = MAX_TRAJECTORY_LINES) -> list[str]:
    """One line per step; past ``limit`` the first, the last and the steps that changed the distance most."""
    if len(frames) <= limit:
        return [_step_line(f) for f in frames]

    def change(i: int) -> float:
        a, b = frames[i].distance_to_target, frames[min(i + 1, len(frames) - 1)].distance_to_target
        return 0.0 if a is None or b is None else abs(b - a)

    middle = range(1, len(frames) - 1)
    keep = {0, len(frames) - 1} | set(sorted(middle, key=change, reverse=True)[:limit - 2])
    return [_step_line(frames[i]) for i in sorted(keep)]


def analysis_messages(task: str, success: bool, final_reason: str, frames: Sequence[FrameLog],
                      plan: PlanOutput | None) -> list[dict[str, str]]:
    plan_text = " -> ".join(f"{g.strategy} ({g.goal})" for g in plan.sub_goals) if plan else "none"
    user = "\n".join([f"Task: {task}",
                      f"Outcome: {'success' if success else 'failure'} ({final_reason}) after {len(frames)} steps.",
                      f"Plan flown: {plan_text}",
                      "Steps (step: strategy, action, distance to the target estimate, effect of the last move):",
                      *trajectory_lines(frames)])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def model_analysis(model: Any, task: str, success: bool, final_reason: str, frames: Sequence[FrameLog],
                   effects: Sequence[str], plan: PlanOutput | None) -> MissionAnalysis:
    """Ask the model (blocking); any failure gives the rule-based analysis with source "fallback"."""
    t0 = time.monotonic()
    rule = lambda errors: rule_analysis(success, final_reason, frames, effects, plan,  # noqa: E731
                                        source="fallback", errors=errors, seconds=time.monotonic() - t0)
    try:
        result = model.ask_sync(analysis_messages(task, success, final_reason, frames, plan), AnalysisOutput,
                                AnalysisOutput.fallback)
    except Exception as exc:  # deadline, crashed worker: the flight is over, the rule's analysis stands
        return rule([f"{type(exc).__name__}: {exc}"])
    if result.used_fallback:
        return rule(list(result.errors))
    a, errors = result.value, list(result.errors)
    if a.reason.strip().lower() == EXAMPLE_REASON:  # SmolLM2-135M does this on every dev task measured
        return rule(errors + ["the reason is the prompt's example, not an analysis"])
    known = "success" if success else "failure"
    if a.status != known:
        errors.append(f"status {a.status!r} contradicts the outcome {known!r}: corrected")
    k = a.key_timestep
    if not 0 <= k < max(1, len(frames)):
        errors.append(f"key_timestep {k} is outside the flight (0..{len(frames) - 1}): the rule's key step is used")
        k = key_step(frames)
    a = AnalysisOutput(known, k, a.reason, list(a.refined_plan))
    text = (f"mission {'succeeded' if success else 'failed'} ({final_reason}); key step {k}: {a.reason.strip()}; "
            f"next time: {' -> '.join(g.strategy for g in a.refined_plan)}")
    return MissionAnalysis(a, "model", text, errors, time.monotonic() - t0)


def submit_analysis(model: Any, *args: Any) -> "Future[MissionAnalysis]":
    """`model_analysis` on a thread of its own; the future always ends with a `MissionAnalysis`."""
    fut: Future = Future()

    def run() -> None:
        if fut.set_running_or_notify_cancel():
            fut.set_result(model_analysis(model, *args))

    threading.Thread(target=run, name="mission-analysis", daemon=True).start()
    return fut


def await_analysis(fut: "Future[MissionAnalysis]", deadline_s: float, fallback: MissionAnalysis) -> MissionAnalysis:
    """The model's analysis if it comes within ``deadline_s``; else ``fallback``, saying it was late."""
    try:
        return fut.result(timeout=max(0.0, deadline_s))
    except FutureTimeout:
        return MissionAnalysis(fallback.analysis, "fallback", fallback.text,
                               [f"no analysis within {deadline_s:g} s"], deadline_s)

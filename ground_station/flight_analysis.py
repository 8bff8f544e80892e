"""The flight analysis: a logged flight's messages in, its three ReflectionNav lessons out (pure functions).

After a flight ends, the ground station turns its ``agent_step`` messages into
the three ReflectionNav reflections, as :mod:`contract.records`:

* the **key timestep**: the decision after which the distance to the target
  grew the most (``distance_estimate_m`` of the following step minus its own);
  a flight whose distance never grew has its last step as the key step;
* **success summary** or **failure reflection** at that step: a
  :class:`NavigateExperience` (or :class:`SearchLocateExperience` when the step's
  ``strategy`` is search/locate) with its ``current_state``, the goal, a
  ``reflect_reason`` naming the decision, its reason and the distance change, and a
  ``refined_action`` (JSON: the action to avoid there and the flight's best action,
  the one followed by the largest decrease);
* **main-plan reflection**: a :class:`StrategicPlan` with ``master_plan`` (the first
  ``plan`` message), ``plan_refined``, ``reflection_note`` and ``status``. When the
  steps carry where the agent put the goal (``goal_fix``: where it read the goal's
  name; else ``target_estimate``) and the landmark map it fused (``landmarks``), all
  in its own take-off frame, ``plan_refined`` (a :class:`contract.payloads.plan_refined.RefinedPlan`)
  carries the plan, the goal's place and the landmark map (plus the step to avoid on
  failure): on success the place where the name was read, on failure the place
  searched in vain. The landmark map lets a later flight from another take-off point
  bring that position into its own frame (:mod:`onboard.agent.experience_prior`). The
  vehicle's own model analysis (a ``mission_analysis`` message) is folded in as
  ``onboard``;

linked strategy -> task (:class:`TaskExperience`) -> atomic. Same log in, same
records (same content uids) out: no clocks, no randomness, no model, no files.
Outcome: ``flight_end``'s ``success`` when the agent said; otherwise the flight
succeeded if its last distance estimate is within ``success_radius_m``. Every
payload is read with its :mod:`contract.messages` class; one that does not
decode is logged, counted in ``FlightAnalysis.refused`` and left out.
:mod:`ground_station.post_flight` decides when to run this and where the
lessons go.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, TypeVar

from contract.messages import AgentStep, FlightEnd, FlightStart, MissionAnalysisReport, Payload, PayloadError, Plan
from contract.payloads.plan_refined import AvoidStep, GoalFix, OnboardLesson, RefinedPlan
from contract.records import (NavigateExperience, Record, SearchLocateExperience, StrategicPlan,
                              TaskExperience)

log = logging.getLogger("aerie.ground.flight_analysis")

P = TypeVar("P", bound=Payload)

# ReflectionNav counts a goal reached within 20 m.
SUCCESS_RADIUS_M = 20.0


@dataclass(frozen=True)
class Step:
    """One agent decision as logged."""

    seq: int
    step: int
    current_state: str
    action: str
    reason: str
    distance_m: float | None
    goal: str
    strategy: str
    target_xy: tuple[float, float] | None = None  # the agent's target (own frame, metres east/north)
    goal_fix_xy: tuple[float, float] | None = None  # where it read the goal's name, once it had
    landmarks: dict[str, tuple[float, float]] | None = None  # its fused landmark map (own frame)


@dataclass(frozen=True)
class KeyStep:
    step: Step
    distance_before_m: float | None
    distance_after_m: float | None

    @property
    def increase_m(self) -> float:
        if self.distance_before_m is None or self.distance_after_m is None:
            return 0.0
        return self.distance_after_m - self.distance_before_m


@dataclass(frozen=True)
class FlightAnalysis:
    vehicle_id: str
    start_seq: int
    task_instruction: str
    status: str                 # 'success' | 'failure'
    steps: int
    key: KeyStep
    plan: StrategicPlan
    task: TaskExperience
    decision: NavigateExperience | SearchLocateExperience
    refused: dict[str, int] = field(default_factory=dict)   # message type -> payloads that did not decode

    def records(self) -> list[tuple[Record, int | None]]:
        """The records with the index of their parent in this list (strategy -> task -> atomic)."""
        return [(self.plan, None), (self.task, 0), (self.decision, 1)]


def payloads(messages: Iterable[dict[str, Any]], cls: type[P], refused: Counter[str]) -> list[tuple[int, P]]:
    """(seq, payload) of the messages of ``cls``'s type that decode; the others are counted in ``refused``."""
    out = []
    for m in messages:
        if m.get("type") != cls.MSG_TYPE:
            continue
        try:
            out.append((int(m.get("seq", 0)), cls.decode(m.get("payload"))))
        except PayloadError as exc:
            refused[cls.MSG_TYPE] += 1
            if refused[cls.MSG_TYPE] == 1:   # once per type and flight; the rest are counted
                log.warning("payload refused: %s", exc, extra={"fields": {"seq": m.get("seq"), "reason": exc.reason}})
    return out


def agent_steps(messages: Iterable[dict[str, Any]], refused: Counter[str] | None = None) -> list[Step]:
    refused = Counter() if refused is None else refused
    out = [Step(seq=seq, step=p.step, current_state=p.current_state.strip(), action=p.action.strip(),
                reason=p.reason.strip(), distance_m=p.distance_estimate_m, goal=p.goal.strip(),
                strategy=p.strategy.strip().lower() or "navigate", target_xy=p.target_estimate,
                goal_fix_xy=p.goal_fix, landmarks=p.landmarks or None)
           for seq, p in payloads(messages, AgentStep, refused)]
    return sorted(out, key=lambda s: s.seq)


def key_step(steps: list[Step]) -> KeyStep:
    """The decision followed by the largest increase in distance to the target (the last step if none)."""
    best: KeyStep | None = None
    prev: Step | None = None
    for s in steps:
        if prev is not None and prev.distance_m is not None and s.distance_m is not None:
            cand = KeyStep(prev, prev.distance_m, s.distance_m)
            if cand.increase_m > 0 and (best is None or cand.increase_m > best.increase_m):
                best = cand
        if s.distance_m is not None or prev is None:
            prev = s
    if best is not None:
        return best
    last = steps[-1]
    return KeyStep(last, last.distance_m, last.distance_m)


def best_step(steps: list[Step]) -> Step | None:
    """The decision followed by the largest decrease in distance, if any."""
    best, gain = None, 0.0
    for a, b in zip(steps, steps[1:]):
        if a.distance_m is not None and b.distance_m is not None and a.distance_m - b.distance_m > gain:
            best, gain = a, a.distance_m - b.distance_m
    return best


def goal_lesson(steps: list[Step]) -> tuple[GoalFix, dict[str, tuple[float, float]]] | None:
    """Where the flight put the goal and the landmark map to place it by; None when the steps carry neither.

    The name read beats the estimate: it is where the goal was seen, not where the
    description's rough words put it.
    """
    read = next((s.goal_fix_xy for s in reversed(steps) if s.goal_fix_xy is not None), None)
    est = next((s.target_xy for s in reversed(steps) if s.target_xy is not None), None)
    lms = next((s.landmarks for s in reversed(steps) if s.landmarks), None)
    if read is None and est is None:
        return None
    xy = read if read is not None else est
    goal = GoalFix((round(xy[0], 1), round(xy[1], 1)), "name read" if read is not None else "estimate")
    return goal, {n: (round(x, 1), round(y, 1)) for n, (x, y) in sorted((lms or {}).items())}


def outcome(messages: list[dict[str, Any]], steps: list[Step], success_radius_m: float,
            refused: Counter[str] | None = None) -> str:
    """The agent's own verdict from ``flight_end`` if it gave one, else the last distance against the radius."""
    ends = payloads(messages, FlightEnd, Counter() if refused is None else refused)
    if ends and ends[-1][1].success is not None:
        return "success" if ends[-1][1].success else "failure"
    last = next((s.distance_m for s in reversed(steps) if s.distance_m is not None), None)
    return "success" if last is not None and last <= success_radius_m else "failure"


def _fmt_m(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0f} m"


def _fmt_xy(xy: tuple[float, float]) -> str:
    x, y = xy
    return f"{abs(x):.0f} m {'east' if x >= 0 else 'west'}, {abs(y):.0f} m {'north' if y >= 0 else 'south'}"


def onboard_analysis(messages: Iterable[dict[str, Any]], refused: Counter[str]) -> MissionAnalysisReport | None:
    """The vehicle's own model analysis of the flight (message ``mission_analysis``), or None.

    Only a model's analysis is taken: the vehicle's rule-based one says less than this analyser does.
    """
    for _, report in reversed(payloads(messages, MissionAnalysisReport, refused)):
        if report.source == "model":
            return report
    return None


def analyse(messages: Iterable[dict[str, Any]], *, vehicle_id: str = "", start_seq: int = 0,
            success_radius_m: float = SUCCESS_RADIUS_M) -> FlightAnalysis | None:
    """The three reflections of one flight's messages (envelopes as dicts); None without agent steps."""
    messages = list(messages)
    refused: Counter[str] = Counter()
    steps = agent_steps(messages, refused)
    if not steps:
        return None
    starts = payloads(messages, FlightStart, refused)
    info = starts[0][1] if starts else FlightStart()
    goal = next((s.goal for s in steps if s.goal), "")
    task_instruction = (info.task_instruction.strip() or info.mission.strip() or goal
                        or f"flight {vehicle_id}#{start_seq}")
    goal = goal or task_instruction
    plans = payloads(messages, Plan, refused)
    master_plan = json.dumps(plans[0][1].body() if plans else {}, sort_keys=True)
    status = outcome(messages, steps, success_radius_m, refused)
    key = key_step(steps)
    k = key.step
    best = best_step(steps)
    first_d = next((s.distance_m for s in steps if s.distance_m is not None), None)
    last_d = next((s.distance_m for s in reversed(steps) if s.distance_m is not None), None)
    trend = f"distance to the target went from {_fmt_m(first_d)} to {_fmt_m(last_d)} in {len(steps)} steps"

    if key.increase_m > 0:
        what = (f"At step {k.step} the agent chose '{k.action}' ({k.reason or 'no reason given'}); the distance to "
                f"the target then rose from {_fmt_m(key.distance_before_m)} to {_fmt_m(key.distance_after_m)} "
                f"(+{key.increase_m:.0f} m), the largest increase of the flight.")
    else:
        what = f"The distance to the target never grew; the last decision was '{k.action}' at step {k.step}."
    if status == "success":
        reflect_reason = f"Success: {trend}. {what}"
    else:
        reflect_reason = f"Failure: {trend}. {what} Avoid that decision in that situation."
    # The atomic lesson pairs one step's situation with that same step's move: a success keeps the
    # move that brought the goal closest (to repeat where the situation recurs), a failure the key
    # move (to avoid there). Pairing the key step's state with the best step's move, as this did
    # before, told a later flight to repeat a move where it had never been made.
    anchor = best if status == "success" and best is not None else k
    refined = {"at_step": anchor.step,
               "avoid": anchor.action if anchor is k and key.increase_m > 0 else None,
               "prefer": anchor.action if anchor is best else None}
    refined_action = json.dumps(refined, sort_keys=True)
    if anchor.strategy in ("search", "locate"):
        decision: NavigateExperience | SearchLocateExperience = SearchLocateExperience(
            search_goal=goal, is_success=status, reflect_reason=reflect_reason, refined_action=refined_action,
            current_state=anchor.current_state or f"step {anchor.step}")
        strategy = anchor.strategy
    else:
        decision = NavigateExperience(navigation_goal=goal, is_success=status, reflect_reason=reflect_reason,
                                      refined_action=refined_action,
                                      current_state=anchor.current_state or f"step {anchor.step}")
        strategy = "navigate"
    task = TaskExperience(task_goal=f"{goal} (Strategy: {strategy})", strategy=strategy, is_success=status,
                          summary=f"{status}: {trend}.")
    where = goal_lesson(steps)
    flown = plans[0][1].body() if plans else {}
    goal_fix, landmarks = where if where is not None else (None, {})
    if status == "success":
        note = f"The plan reached the goal: {trend}. Keep it."
        if goal_fix is not None:
            note += f" The goal ({goal_fix.source}) was at {_fmt_xy(goal_fix.xy_m)} of take-off."
        avoid: tuple[AvoidStep, ...] = ()
    else:
        note = (f"The plan did not reach the goal: {trend}. The key step was {k.step}"
                + (f" ('{k.action}', +{key.increase_m:.0f} m)." if key.increase_m > 0 else "."))
        if goal_fix is not None:
            note += f" Searched in vain around {_fmt_xy(goal_fix.xy_m)} of take-off."
        avoid = (AvoidStep(**refined),)
    onboard = onboard_analysis(messages, refused)
    lesson = None
    if onboard is not None:  # the vehicle's model analysed the flight too: one lesson holds both
        note += f" Onboard analysis: {onboard.text}"
        # The flight id is the key by which the vehicle retires its own record of this analysis.
        lesson = OnboardLesson(info.flight_id, onboard.key_timestep, onboard.reason, onboard.refined_plan)
    plan_refined = RefinedPlan(plan=flown, goal=goal_fix, landmarks=landmarks, avoid=avoid, onboard=lesson).to_text()
    plan = StrategicPlan(task_instruction=task_instruction, master_plan=master_plan, reflection_note=note,
                         plan_refined=plan_refined, status=status)
    return FlightAnalysis(vehicle_id=vehicle_id, start_seq=start_seq, task_instruction=task_instruction,
                          status=status, steps=len(steps), key=key, plan=plan, task=task, decision=decision,
                          refused=dict(refused))

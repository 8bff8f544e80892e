"""The `llm` planner backend: the long-term plan from a language model, geometric everywhere else.

A small model (SmolLM2 via llama.cpp, grammar-constrained JSON) writes the
`PlanOutput` (sub-goals and why) from the task, the geo-instruction and the
lessons in memory. Arithmetic and move choice stay in code (the geometric
experts), since small models are poor at both. Every failure mode ends in
the geometric plan and the mission continues:

* garbage / schema-invalid JSON: the contract retries once, then falls back;
* no answer, a hang or a crash: the worker's deadline raises, caught here;
* a valid plan the experts cannot finish (no way to declare arrival): repaired
  by appending the geometric locate sub-goal, and a plan with nothing but
  locate gets the geometric navigate and search in front.

The call takes seconds on the vehicle's CPU (SmolLM2-135M: ~80 tokens under
the grammar, 3-5 s), so by default no step waits for it: `submit_llm_plan`
runs it on its own thread and the graph flies the geometric plan until the
answer is there, then adopts it at a step boundary (`adopt_llm_plan` in
`onboard.agent.graph`). `agent.llm_plan_wait` asks in the step instead.

With `agent.use_place_anchor_plan` the model answers the Place–Anchor
planner's contract (`PlaceAnchorPlan`, design 002 §11: is the goal in view,
which way to turn, what kind of place to head for and why) instead of
writing sub-goals; `place_anchor_plan` maps that answer onto the sub-goal
plan the experts execute. The sub-goals stay the geometric ones (a 135M
model's sub-goals needed repair often enough, and the experts already hand
over between them by geometry); the model's part is the intent: the heading
it would take (`PlaceIntent.bearing`, a bias for exploring, never a move),
the place type it heads for (the navigate sub-goal's wording and the
discovered-context FIFO) and its reason (the plan's). `goal_flag` is the
model's claim only: the experts act on the working memory's reading of the
goal's name, and a false flag when a sub-goal ends is what re-plans
(002 §6: STOP without the goal, `onboard.agent.replan`).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from onboard.agent.geometric_planner import describe_relations, make_plan
from onboard.agent.goal_description import GoalDescription
from onboard.inference.contracts import PlaceAnchorPlan, PlanOutput, SubGoal


class PlanModel(Protocol):
    """What the backend needs of `onboard.inference.planner_model.PlannerModel`."""

    def ask_sync(self, messages: list[dict[str, Any]], contract: type, fallback) -> Any: ...


# Compact, with one worked example in the contract's own shape: without it SmolLM2-135M filled
# every slot with "search" sub-goals named "navigate"/"search" and a "NONE" desired state; with it
# the plans follow navigate -> search -> locate and the answer is shorter. The example
# names no place, so the model cannot copy a wrong landmark into the plan.
SYSTEM = ("Plan a drone's flight to a place in a city as 1-3 sub-goals. Strategies: navigate (fly to the goal "
          "area), search (look around for the goal's name), locate (read the name close by, arrive). JSON only. "
          'Example: {"sub_goals":[{"goal":"fly to the goal area","strategy":"navigate","desired_state":"near the area"},'
          '{"goal":"look for the name","strategy":"search","desired_state":"name read"},'
          '{"goal":"arrive at the goal","strategy":"locate","desired_state":"arrived"}],'
          '"reason":"fly there, look around, arrive"}')


# Same idea as SYSTEM: one example in the contract's shape, naming no place of this task.
SYSTEM_PLACE = ("You guide a drone to a place in a city. Use the memory below. JSON only: goal_flag (true only if "
                "the goal's name was read), angle (degrees to turn from the current heading: + left, - right, 0 "
                "keep), discovered_context: goal_scene_type (the kind of place to head for next) and why (one short "
                'sentence). Example: {"goal_flag":false,"angle":45,"discovered_context":{"goal_scene_type":'
                '"street towards the landmark","why":"the landmark lies ahead on the left"}}')


@dataclass(frozen=True)
class PlaceIntent:
    """The model's PlaceAnchorPlan answer, with `angle` turned into a compass bearing (front = current heading)."""

    goal_flag: bool
    angle: float  # the model's: degrees from the front, + = left
    bearing: float  # compass degrees the angle points to
    goal_scene_type: str
    why: str


@dataclass(frozen=True)
class LLMPlan:
    plan: PlanOutput
    used_fallback: bool
    repaired: bool = False
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # wall time of the model call(s), retries included
    intent: PlaceIntent | None = None  # the PlaceAnchorPlan answer (use_place_anchor_plan), None otherwise

    @property
    def source(self) -> str:
        return "llm-fallback" if self.used_fallback else "llm-repaired" if self.repaired else "llm"


def plan_messages(task: str, goal: GoalDescription, geoinstruct: str, lessons: list[str],
                  reflections: str, context: str = "", place_anchor: bool = False,
                  front_deg: float = 0.0) -> list[dict[str, str]]:
    """The prompt; with `context` (prompt_context.gather) it replaces the lessons and reflections lines."""
    parts = [f"Task: {task}", f"Goal area: {describe_relations(goal)}.", f"Seen: {geoinstruct}"]
    if place_anchor:
        parts.append(f"Current heading: {front_deg:.0f} deg.")
    if context:
        parts.append(context)
    else:
        if lessons:
            parts.append("Lessons from similar past missions: " + " | ".join(lessons[:3]))
        if reflections:
            parts.append(reflections)
    return [{"role": "system", "content": SYSTEM_PLACE if place_anchor else SYSTEM},
            {"role": "user", "content": "\n".join(parts)}]


def place_anchor_plan(answer: PlaceAnchorPlan, goal: GoalDescription, front_deg: float,
                      lessons: list[str] | None = None) -> tuple[PlanOutput, PlaceIntent]:
    """The sub-goal plan and the intent a PlaceAnchorPlan answer stands for (see the module docstring)."""
    dc = answer.discovered_context
    scene = " ".join(dc.goal_scene_type.split())[:40] or "corridor"
    why = " ".join(dc.why.split())
    intent = PlaceIntent(bool(answer.goal_flag), float(answer.angle), (front_deg - float(answer.angle)) % 360.0,
                         scene, why)
    geo = make_plan(goal, True, lessons).sub_goals
    navigate = SubGoal(f"head for {scene}"[:60], "navigate", geo[0].desired_state)
    return PlanOutput([navigate, geo[1], geo[2]], (why or "the model gave no reason")[:80]), intent


def repair(plan: PlanOutput, goal: GoalDescription) -> tuple[PlanOutput, bool]:
    """Make a schema-valid plan executable: it must end by locating the goal, after getting there."""
    geo = make_plan(goal).sub_goals
    subs = list(plan.sub_goals)
    repaired = False
    if all(g.strategy == "locate" for g in subs):
        subs = [geo[0], geo[1]] + subs
        repaired = True
    if subs[-1].strategy != "locate":
        subs.append(geo[2])
        repaired = True
    return PlanOutput(subs, plan.reason), repaired


def llm_plan(model: PlanModel, task: str, goal: GoalDescription, geoinstruct: str = "",
             lessons: list[str] | None = None, reflections: str = "", *, context: str = "",
             place_anchor: bool = False, front_deg: float = 0.0) -> LLMPlan:
    """Ask the model for the plan (blocking); any failure gives the geometric plan.

    `place_anchor`: the model answers `PlaceAnchorPlan` (its own fallback, the design's
    "not found, keep heading, corridor", counts as a failure here: nothing to adopt).
    """
    geometric = lambda: make_plan(goal, True, lessons)  # noqa: E731
    contract, fallback = (PlaceAnchorPlan, PlaceAnchorPlan.fallback) if place_anchor else (PlanOutput, geometric)
    messages = plan_messages(task, goal, geoinstruct, lessons or [], reflections, context, place_anchor, front_deg)
    t0 = time.monotonic()
    try:
        result = model.ask_sync(messages, contract, fallback)
    except Exception as exc:  # deadline, crashed worker, backend error: never stop the mission
        return LLMPlan(geometric(), True, False, [f"{type(exc).__name__}: {exc}"], time.monotonic() - t0)
    seconds = time.monotonic() - t0
    if result.used_fallback:
        return LLMPlan(geometric(), True, False, list(result.errors), seconds)
    if place_anchor:
        plan, intent = place_anchor_plan(result.value, goal, front_deg, lessons)
        return LLMPlan(plan, False, False, list(result.errors), seconds, intent)
    plan, repaired = repair(result.value, goal)
    return LLMPlan(plan, False, repaired, list(result.errors), seconds)


def submit_llm_plan(model: PlanModel, task: str, goal: GoalDescription, geoinstruct: str = "",
                    lessons: list[str] | None = None, reflections: str = "", **kw: Any) -> "Future[LLMPlan]":
    """`llm_plan` on a thread of its own; the future always ends with an `LLMPlan` (fallback on failure).

    The model's own worker enforces the call deadline, so the thread ends
    within `inference.call_deadline_s` per attempt even when the model hangs.
    """
    fut: Future = Future()
    lessons = list(lessons or [])

    def run() -> None:
        if not fut.set_running_or_notify_cancel():
            return
        t0 = time.monotonic()
        try:
            fut.set_result(llm_plan(model, task, goal, geoinstruct, lessons, reflections, **kw))
        except BaseException as exc:  # llm_plan catches model errors; this is a bug in it: still a fallback
            fut.set_result(LLMPlan(make_plan(goal, True, lessons), True, False, [f"{type(exc).__name__}: {exc}"],
                                   time.monotonic() - t0))

    threading.Thread(target=run, name="llm-plan", daemon=True).start()
    return fut

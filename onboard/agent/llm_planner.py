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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from onboard.agent.geometric_planner import describe_relations, make_plan
from onboard.agent.goal_description import GoalDescription
from onboard.inference.contracts import PlanOutput


class PlanModel(Protocol):
    """What the backend needs of `onboard.inference.planner_model.PlannerModel`."""

    def ask_sync(self, messages: list[dict[str, Any]], contract: type, fallback) -> Any: ...


SYSTEM = ("You plan a drone's city navigation mission. Split it into 1-4 sub-goals, each with a strategy: "
          "'navigate' (fly towards the estimated goal area), 'search' (look around the area for the goal's name), "
          "'locate' (read the goal's name close by and arrive). Keep goals short. In 'reason', summarise your "
          "thinking in one sentence. Answer with JSON only.")


@dataclass(frozen=True)
class LLMPlan:
    plan: PlanOutput
    used_fallback: bool
    repaired: bool = False
    errors: list[str] = field(default_factory=list)


def plan_messages(task: str, goal: GoalDescription, geoinstruct: str, lessons: list[str],
                  reflections: str) -> list[dict[str, str]]:
    parts = [f"Task: {task}", f"The description places the goal {describe_relations(goal)}.",
             f"Current observation: {geoinstruct}"]
    if lessons:
        parts.append("Lessons from similar past missions: " + " | ".join(lessons[:3]))
    if reflections:
        parts.append(reflections)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


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
             lessons: list[str] | None = None, reflections: str = "") -> LLMPlan:
    """Ask the model for the plan; any failure gives the geometric plan."""
    fallback = lambda: make_plan(goal, True, lessons)  # noqa: E731
    try:
        result = model.ask_sync(plan_messages(task, goal, geoinstruct, lessons or [], reflections), PlanOutput, fallback)
    except Exception as exc:  # deadline, crashed worker, backend error: never stop the mission
        return LLMPlan(fallback(), True, False, [f"{type(exc).__name__}: {exc}"])
    if result.used_fallback:
        return LLMPlan(result.value, True, False, list(result.errors))
    plan, repaired = repair(result.value, goal)
    return LLMPlan(plan, False, repaired, list(result.errors))

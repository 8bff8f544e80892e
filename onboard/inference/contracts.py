"""The planner's JSON contracts, shared by the agent and the language-model backends.

Each contract is a frozen dataclass; :mod:`onboard.inference.json_contract`
turns it into a JSON schema (llama.cpp: a GBNF grammar) and validates answers.
Each has a ``fallback()``: the documented answer used when the model fails
twice, chosen to be safe (hold course, keep searching, nothing locked).

Movements are the vehicle's discrete actions (turns are ±30° yaw steps, as in
the Place–Anchor design). The agent may extend ``MOVEMENTS``; the grammar
follows automatically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Movement = Literal["forward", "backward", "turn_left", "turn_right", "ascend", "descend", "stop"]
MOVEMENTS: tuple[str, ...] = Movement.__args__  # type: ignore[attr-defined]
Strategy = Literal["navigate", "search", "locate"]

# Bounded strings keep a small model from rambling past its token budget: the
# grammar closes the string at this length.
_TEXT = {"max_length": 120}
_SHORT = {"max_length": 60}
# The plan is decoded token by token under the grammar (slow for a small model on a
# CPU: docs/BENCHMARKS.md), so its bounds are tight: three sub-goals (navigate, search,
# locate), a short desired state and a one-line reason. A rambling answer is
# capped at about half the tokens the looser bounds (4 sub-goals, 60/60/120) allowed.
_STATE = {"max_length": 40}
_REASON = {"max_length": 80}


@dataclass(frozen=True)
class SubGoal:
    goal: str = field(metadata=_SHORT)
    strategy: Strategy
    desired_state: str = field(metadata=_STATE)


@dataclass(frozen=True)
class PlanOutput:
    """``generate_plan_with_rag``: ordered sub-goals and why."""

    sub_goals: list[SubGoal] = field(metadata={"min_items": 1, "max_items": 3})
    reason: str = field(metadata=_REASON)

    @staticmethod
    def fallback(task: str = "reach the target") -> "PlanOutput":
        """One search sub-goal for the whole task: the agent keeps looking rather than stopping."""
        return PlanOutput([SubGoal(task, "search", "target in view")], "fallback: the planner gave no valid plan")


@dataclass(frozen=True)
class NavigationDecisionOutput:
    """Navigate expert: the next move towards the landmark."""

    movement: Movement
    reason: str = field(metadata=_TEXT)
    next_strategy: Literal["continue_navigate", "next_subtask"]
    confidence: float = field(metadata={"minimum": 0.0, "maximum": 1.0})

    @staticmethod
    def fallback() -> "NavigationDecisionOutput":
        """Hold position (``stop``) with zero confidence; the step counts as ineffective."""
        return NavigationDecisionOutput("stop", "fallback: no valid navigation decision", "continue_navigate", 0.0)


@dataclass(frozen=True)
class SearchOutput:
    """Search expert: the next move, and whether the area is exhausted."""

    movement: Movement
    reason: str = field(metadata=_TEXT)
    decision: Literal["continue_search", "next_subtask"]
    confidence: float = field(metadata={"minimum": 0.0, "maximum": 1.0})

    @staticmethod
    def fallback() -> "SearchOutput":
        """Rotate in place and keep searching: a turn reveals new view without moving into the unknown."""
        return SearchOutput("turn_left", "fallback: no valid search decision", "continue_search", 0.0)


@dataclass(frozen=True)
class LocateOutput:
    """Locate expert (VLM fallback path): the target's position, or keep looking nearby.

    ``selected_pos`` is ``[x, y]`` in the frame the prompt gave (pixels of the
    observation image, or local metres), ``[0, 0]`` when nothing is locked.
    """

    status: Literal["TARGET_LOCKED", "SEARCHING_VICINITY"]
    selected_pos: list[float] = field(metadata={"min_items": 2, "max_items": 2})

    @staticmethod
    def fallback() -> "LocateOutput":
        return LocateOutput("SEARCHING_VICINITY", [0.0, 0.0])


@dataclass(frozen=True)
class DiscoveredContext:
    goal_scene_type: str = field(metadata={"max_length": 40})
    why: str = field(metadata=_TEXT)


@dataclass(frozen=True)
class PlaceAnchorPlan:
    """Place–Anchor planner: is the goal visible, which way to turn, what place to look for.

    ``angle`` is degrees from the panorama's front, positive = left.
    """

    goal_flag: bool
    angle: float = field(metadata={"minimum": -180.0, "maximum": 180.0})
    discovered_context: DiscoveredContext

    @staticmethod
    def fallback() -> "PlaceAnchorPlan":
        """The design's fallback: not found, keep heading, look for a corridor."""
        return PlaceAnchorPlan(False, 0.0, DiscoveredContext("corridor", "fallback"))


@dataclass(frozen=True)
class AnalysisOutput:
    """End-of-mission analysis (ReflectionNav's success / failure analysis and main-plan rewrite).

    ``key_timestep`` is the step whose decision made the outcome; the agent checks it lies within
    the flight (a grammar cannot know how long the flight was). ``refined_plan`` is the plan the
    next attempt at a similar task should start from.
    """

    status: Literal["success", "failure"]
    key_timestep: int = field(metadata={"minimum": 0, "maximum": 999})
    reason: str = field(metadata=_REASON)
    refined_plan: list[SubGoal] = field(metadata={"min_items": 1, "max_items": 3})

    @staticmethod
    def fallback(success: bool = False, key_timestep: int = 0, reason: str = "fallback: no valid analysis",
                 plan: "PlanOutput | None" = None) -> "AnalysisOutput":
        """The known outcome and the plan that was flown: nothing invented, nothing lost."""
        return AnalysisOutput("success" if success else "failure", key_timestep, reason[:_REASON["max_length"]],
                              list((plan or PlanOutput.fallback()).sub_goals))


@dataclass(frozen=True)
class GoalSeen:
    """Confirm (the VLM's contract, not a planner's): does the camera frame show the goal (name, kind, entrance)?

    One piece of evidence beside the names read and the geometry, never the only one. ``confidence``
    is a word, not a number: a grammar holds a model to a word, not to a numeric range.
    """

    shows_goal: bool
    confidence: Literal["low", "medium", "high"]
    seen: str = field(metadata={"max_length": 40})

    @staticmethod
    def fallback() -> "GoalSeen":
        """Not seen, low: an answer that never counts for or against the goal."""
        return GoalSeen(False, "low", "fallback: no valid answer")


PLANNER_CONTRACTS: tuple[type, ...] = (PlanOutput, NavigationDecisionOutput, SearchOutput, LocateOutput, PlaceAnchorPlan,
                                       AnalysisOutput)

"""`AgentState`: the one state the agent graph's nodes read and update.

Static parts are set up once per mission (config, task, memories, the
planner backend); dynamic parts change every step; final parts are set when
the mission ends. Nodes return updates as dicts of dynamic/final field
names, applied by `apply_update`, so each node's effect is explicit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from onboard.agent.corridor_map import CorridorMap
from onboard.agent.frame_log import FrameLog
from onboard.agent.goal_description import GoalDescription
from onboard.vocab.observation import AgentAction, AgentObservation
from onboard.agent.settings import AgentConfig
from onboard.agent.strategy_control import ErrorThresholdController, Reflection
from onboard.agent.street_map import StreetMap
from onboard.agent.working_memory import WorkingMemory
from onboard.inference.contracts import PlanOutput
from onboard.memory.anchor_graph import AnchorGraph
from onboard.memory.reflection_memory import EpisodicMemory, ReflectionWindow


@dataclass
class StaticState:
    config: AgentConfig
    task_instruction: str
    goal: GoalDescription
    memory: WorkingMemory  # landmark map + target estimate (PReP working memory)
    street_map: StreetMap  # the agent's own corridor map (odometry frame)
    anchors: AnchorGraph | None  # Place–Anchor memory; None in the no-anchors ablation
    episodic: EpisodicMemory
    reflections: ReflectionWindow
    controller: ErrorThresholdController
    experience_store: Any = None  # onboard.memory.experience_store.ExperienceStore, for plan RAG
    plan_model: Any = None  # onboard.inference.planner_model.PlannerModel, for the "llm" backend
    reflection_window: int = 3  # reflections that steer choices (memory.reflection_window)
    corridors: CorridorMap | None = None  # the onboard map's corridors (None: no map, or one without corridors)
    vlm: Any = None  # onboard.inference.vlm_asker.VlmAsker, for the "vlm" backend (onboard/agent/vlm_planner.py)


@dataclass
class DynamicState:
    plan: PlanOutput | None = None
    current_task_index: int = 0
    timestep: int = 0
    current_observation: dict[str, Any] = field(default_factory=dict)
    subtask_context: dict[str, Any] = field(default_factory=dict)
    current_state: str = ""
    trajectory_history: list[FrameLog] = field(default_factory=list)
    # bookkeeping the nodes share
    observation: AgentObservation | None = None  # this step's input
    here: int | None = None  # waypoint the drone is at (as commanded and confirmed)
    trail: list[int] = field(default_factory=list)  # waypoints flown, take-off first
    position: np.ndarray = field(default_factory=lambda: np.zeros(2))
    perceived_at: int = -1
    lessons: list[Reflection] = field(default_factory=list)
    hints: tuple[str, ...] = ()
    last_effect: str = ""
    search_anchor: np.ndarray | None = None  # target estimate when the search began
    aim: np.ndarray | None = None  # the target the last move was chosen for (effect classification)
    look_ups: int = 0  # look-ups asked for in this mission (refused ones included)
    looked_up_at_step: int = 0  # the step of the last one
    looked_up_from: list[np.ndarray] = field(default_factory=list)  # where they were asked for (own frame)
    look_lows: int = 0  # look-lows asked for in this mission (refused ones included)
    looked_low_from: list[np.ndarray] = field(default_factory=list)  # where they were asked for (own frame)
    seen_at_cruise: frozenset[str] = frozenset()  # landmarks sighted from the streets (not from a look-up)
    # the drone reached the street sightings' centroid and had looked over the roofs there: never head for it again
    centroid_spent: bool = False
    from_above: bool = False  # this step's sightings were taken from a look-up's altitude
    up_m: float | None = None  # flying over the roofs at this altitude since a look-up (None: at cruise)
    cruise_m: float | None = None  # the altitude the first look-up climbed from (the vehicle's cruise)
    action: AgentAction | None = None
    strategy: str = ""
    handoffs: int = 0
    plan_source: str = ""  # "geometric", "llm", "llm-repaired" or "llm-fallback"
    plan_request: Any = None  # Future[LLMPlan]: the model's plan while it is being written (llm backend, no wait)
    # The model's plan call: wait, requested_step, answered_step, adopted_step (None: never adopted), call_s, source.
    llm_plan: dict[str, Any] = field(default_factory=dict)
    plan_errors: list[str] = field(default_factory=list)
    retrieved: list[dict[str, Any]] = field(default_factory=list)  # past plans retrieved for this mission
    analysis_request: Any = None  # Future[MissionAnalysis]: the model's end-of-mission analysis while it is written
    mission_analysis: Any = None  # onboard.agent.mission_analysis.MissionAnalysis, once the mission ended
    # Living plan (onboard/agent/replan.py): 0 = the first geometric plan, +1 for each model plan adopted.
    plan_version: int = 0
    # Reasons to re-plan that any node may append ("reflection", "landmark:<name>", "search_timeout", ...);
    # the next plan request takes them all (coalesced while one is in flight).
    replan_triggers: list[str] = field(default_factory=list)
    plan_requested_at: int = 0  # step of the last plan request (agent.retrieval_interval counts from it)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)  # every plan call's report; llm_plan is the last
    place_intent: Any = None  # llm_planner.PlaceIntent behind the plan flown (use_place_anchor_plan), else None
    subgoal_at: tuple[int, int] | None = None  # (plan_version, current_task_index) at the end of the last step
    # Branches (onboard/agent/branches.py): aims given up, the branch counted (plan_version, sub-goal index),
    # the step it started, and every timeout (for the summary).
    failed_aims: list[np.ndarray] = field(default_factory=list)
    branch_key: tuple[int, int] | None = None
    branch_since: int = 0
    branch_best_m: float = float("inf")  # the branch's closest approach to its aim so far
    branch_best_at: int = 0  # ... and the step of it
    branch_events: list[dict[str, Any]] = field(default_factory=list)
    # This step's, reset when it starts (FrameLog): {"mode": skip|single|hierarchical|flat|none,
    # "hits": {collection: n}}, which any node that retrieves may update (frame_log.note_retrieval) ...
    retrieval: dict[str, Any] = field(default_factory=dict)
    prompt_items: dict[str, Any] = field(default_factory=dict)  # ... what went into a plan prompt made in it
    step_triggers: list[str] = field(default_factory=list)  # ... and the triggers that prompt answered
    # A vision-language model's answers, handed in between steps (`GraphAgent.note_vlm`; none without a VLM):
    # the newest caption (step of its frame, text), the answers since the last FrameLog, every confirm answer.
    vlm_caption: tuple[int, str] | None = None
    vlm_answers: list[dict[str, Any]] = field(default_factory=list)
    goal_seen: list[dict[str, Any]] = field(default_factory=list)
    goal_placed_at: int | None = None  # the step the goal's name was first read (confirm answers count from it)
    confirm_again: bool = False  # the locate expert doubts the goal (a camera "no"): ask the VLM on the next frame
    # The "vlm" backend (onboard/agent/vlm_planner.py): this step's camera frame (RGB, `GraphAgent.see_frame`),
    # the question in flight (step, strategy, heading of its frame), the decision answer waiting to be taken in,
    # counts by outcome, the source of this step's move and of every step's.
    camera_frame: np.ndarray | None = None
    vlm_request: dict[str, Any] | None = None
    vlm_decision: Any = None
    vlm_plan: dict[str, Any] = field(default_factory=dict)
    vlm_source: str = ""
    vlm_steps: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class FinalState:
    mission_success: bool | None = None
    final_reason: str = ""


@dataclass
class AgentState:
    static: StaticState
    dynamic: DynamicState = field(default_factory=DynamicState)
    final: FinalState = field(default_factory=FinalState)


_DYNAMIC = {f.name for f in fields(DynamicState)}
_FINAL = {f.name for f in fields(FinalState)}


def apply_update(state: AgentState, update: dict[str, Any]) -> AgentState:
    """Write a node's update into the state; unknown keys are bugs and raise."""
    for key, value in update.items():
        if key in _DYNAMIC:
            setattr(state.dynamic, key, value)
        elif key in _FINAL:
            setattr(state.final, key, value)
        else:
            raise KeyError(f"node update names no state field: {key!r}")
    return state

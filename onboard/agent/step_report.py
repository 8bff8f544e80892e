"""One agent step as a telemetry ``agent_step`` payload (and the ``plan`` payload).

The supervisor publishes these while flying and the learning benchmark feeds
the same payloads to the ground station's post-flight analyser, so both paths
produce exactly what the dashboard and the reflection read: ``current_state``,
``decision`` (action + reason), ``pose``, ``distance_estimate_m``, ``goal``,
``strategy``, ``plan_source`` and ``plan_version`` (which plan the step flew), ``retrieval_mode``, ``effect``, ``target_estimate``, ``goal_fix`` (where the goal's name
was read, once it was: the post-flight lesson of where the goal is), the
fused ``landmarks``, the ``anchor_graph`` and the ``search_region`` (the part of the
described region not looked at yet, as the search expert reads it). The ``plan`` payload carries, with
the llm backend, ``llm``: the model's plan call (``requested_step``,
``answered_step``, ``adopted_step``, ``call_s``, ``source``, ``wait``).

Coordinates are the agent's own frame: metres east (``x``) and north (``y``)
of the take-off point.
"""

from __future__ import annotations

import math

import numpy as np

from onboard.agent.agent_state import AgentState
from onboard.agent.frame_log import FrameLog
from onboard.agent.goal_region import REGION_STEP_M
from onboard.agent.hull import convex_hull, fewest_vertices
from contract.messages import (REGION_BOUND_M, REGION_MOST_VERTICES, AgentStep, Anchor, AnchorGraph, LlmPlanCall,
                               Movement, Place, Plan, PlanStep, Pose, RetrievedLesson, SearchRegion)


def _finite(value: object) -> float | None:
    """A number the wire accepts, else None (an unknown distance, not a refused step)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _xy(value: object) -> tuple[float, float] | None:
    if value is None:
        return None
    x, y = (_finite(v) for v in list(value)[:2])  # type: ignore[call-overload]
    return None if x is None or y is None else (round(x, 1), round(y, 1))


def anchor_graph_payload(state: AgentState) -> AnchorGraph | None:
    """Anchors (metres east/north of take-off) and places, as the dashboard draws them."""
    graph = state.static.anchors
    if graph is None:
        return None
    mpu = graph.metres_per_unit
    # The anchor graph's dead reckoning is x forward-at-yaw-0 (north), y left (west).
    anchors = tuple(Anchor(a.anchor_id, round(-a.pose.y * mpu, 1), round(a.pose.x * mpu, 1), a.place_id,
                           tuple(a.neighbours)) for a in graph.anchors.values())
    places = tuple(Place(p.place_id, p.place_type, tuple(p.anchors)) for p in graph.places.values())
    return AnchorGraph(anchors, places)


def search_region_payload(state: AgentState) -> SearchRegion | None:
    """The described region's unseen part as the search covers it, or None where the search has no region.

    The same reading as `experts.map_destinations`: `unseen_region` with the arrival distance as the
    reading-range floor, and nothing while a remembered goal leads the search or once the goal's name
    was read (the search is over, what it left unseen no longer matters). Each grid point stands
    for a cell `REGION_STEP_M` wide, so the outline runs round the cells (a single point is a square,
    not nothing) and the area is the cells' (the hull of a ring-shaped rest would overstate it).
    Cheap enough for every step: the region's points are cached in working memory and only its edge
    columns reach the hull.
    """
    mem = state.static.memory
    if mem.goal_fix is not None or mem.prior is not None:
        return None
    unseen = mem.unseen_region(state.static.config.arrive_within_m)
    if unseen is None or not len(unseen) or not np.isfinite(unseen).all():
        return None
    half = REGION_STEP_M / 2.0
    edge = convex_hull(unseen)
    corners = np.concatenate([edge + (dx, dy) for dx in (-half, half) for dy in (-half, half)])
    ring = np.round(fewest_vertices(convex_hull(corners), REGION_MOST_VERTICES), 1)
    if np.abs(ring).max() > REGION_BOUND_M:
        return None
    return SearchRegion(tuple((float(x), float(y)) for x, y in ring), float(len(unseen)) * REGION_STEP_M ** 2)


def step_payload(state: AgentState, frame: FrameLog, *, with_anchor_graph: bool = True) -> AgentStep:
    """The ``agent_step`` payload of `frame` (normally the newest FrameLog of `state`)."""
    d, s = state.dynamic, state.static
    movement = dict(frame.movement)
    action = movement.get("kind", "")
    if action == "move":
        action = f"move to waypoint {movement.get('node')} bearing {float(movement.get('bearing', 0.0)):.0f}"
    elif action == "look_up" and _finite(movement.get("altitude_m")) is not None:
        action = f"look up from {float(movement['altitude_m']):.0f} m"
    elif action == "look_low" and _finite(movement.get("altitude_m")) is not None:
        action = f"look low from {float(movement['altitude_m']):.0f} m"
    elif action == "come_down" and _finite(movement.get("altitude_m")) is not None:
        action = f"come down from {float(movement['altitude_m']):.0f} m"
    sub_goal = ""
    if d.plan is not None and d.plan.sub_goals:
        sub_goal = d.plan.sub_goals[min(d.current_task_index, len(d.plan.sub_goals) - 1)].goal
    node = movement.get("node")
    move = Movement(str(movement.get("kind", "")), node if type(node) is int else None,
                    _finite(movement.get("bearing"))) if movement else None
    landmarks = {str(k): xy for k, v in frame.map_snapshot.items() if (xy := _xy(v)) is not None}
    x, y, z, yaw = frame.pose
    return AgentStep(step=frame.timestep, current_state=frame.current_state, action=str(action), reason=frame.reason,
                     pose=Pose(float(x), float(y), float(z), float(yaw)),
                     distance_estimate_m=_finite(frame.distance_to_target), goal=sub_goal or s.task_instruction,
                     task_instruction=s.task_instruction, strategy=frame.strategy, plan_source=d.plan_source,
                     movement=move, effect=frame.effect, target_estimate=_xy(s.memory.target()),
                     goal_fix=_xy(s.memory.goal_fix), landmarks=landmarks,
                     anchor_graph=anchor_graph_payload(state) if with_anchor_graph else None,
                     plan_version=frame.plan_version, retrieval_mode=str(frame.retrieval.get("mode", "")),
                     search_region=search_region_payload(state))


def plan_payload(state: AgentState) -> Plan | None:
    """The current long-term plan (``plan`` message), or None before one exists."""
    d = state.dynamic
    if d.plan is None:
        return None
    llm = dict(d.llm_plan)
    call = LlmPlanCall(bool(llm["wait"]), int(llm["requested_step"]), str(llm["source"]), llm.get("answered_step"),
                       llm.get("adopted_step"), _finite(llm.get("call_s"))) if llm else None
    return Plan(goal=state.static.task_instruction, source=d.plan_source, errors=tuple(map(str, d.plan_errors)),
                retrieved=tuple(RetrievedLesson(str(r["uid"]), float(r["similarity"]), str(r["status"]))
                                for r in d.retrieved),
                steps=tuple(PlanStep(g.goal, str(getattr(g.strategy, "value", g.strategy)), g.desired_state)
                            for g in d.plan.sub_goals),
                reason=d.plan.reason, llm=call)

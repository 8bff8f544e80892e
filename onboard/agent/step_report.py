"""One agent step as a telemetry ``agent_step`` payload (and the ``plan`` payload).

The supervisor publishes these while flying and the learning benchmark feeds
the same payloads to the ground station's post-flight analyser, so both paths
produce exactly what the dashboard and the reflection read: ``current_state``,
``decision`` (action + reason), ``pose``, ``distance_estimate_m``, ``goal``,
``strategy``, ``plan_source`` (which plan the step flew), ``effect``, ``target_estimate``, ``goal_fix`` (where the goal's name
was read, once it was: the post-flight lesson of where the goal is), the
fused ``landmarks`` and the ``anchor_graph``. The ``plan`` payload carries, with
the llm backend, ``llm``: the model's plan call (``requested_step``,
``answered_step``, ``adopted_step``, ``call_s``, ``source``, ``wait``).

Coordinates are the agent's own frame: metres east (``x``) and north (``y``)
of the take-off point.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from onboard.agent.agent_state import AgentState
from onboard.agent.frame_log import FrameLog
from contract.messages import agent_step_payload


def anchor_graph_payload(state: AgentState) -> dict[str, Any] | None:
    """Anchors (metres east/north of take-off) and places, as the dashboard draws them."""
    graph = state.static.anchors
    if graph is None:
        return None
    mpu = graph.metres_per_unit
    # The anchor graph's dead reckoning is x forward-at-yaw-0 (north), y left (west).
    anchors = [{"anchor_id": a.anchor_id, "x": round(-a.pose.y * mpu, 1), "y": round(a.pose.x * mpu, 1),
                "place_id": a.place_id, "neighbours": list(a.neighbours)} for a in graph.anchors.values()]
    places = [{"place_id": p.place_id, "place_type": p.place_type, "anchors": list(p.anchors)}
              for p in graph.places.values()]
    return {"anchors": anchors, "places": places}


def step_payload(state: AgentState, frame: FrameLog, *, with_anchor_graph: bool = True) -> dict[str, Any]:
    """The ``agent_step`` payload of `frame` (normally the newest FrameLog of `state`)."""
    d, s = state.dynamic, state.static
    movement = dict(frame.movement)
    action = movement.get("kind", "")
    if action == "move":
        action = f"move to waypoint {movement.get('node')} bearing {float(movement.get('bearing', 0.0)):.0f}"
    sub_goal = ""
    if d.plan is not None and d.plan.sub_goals:
        sub_goal = d.plan.sub_goals[min(d.current_task_index, len(d.plan.sub_goals) - 1)].goal
    est = s.memory.target()
    extra: dict[str, Any] = {
        "goal": sub_goal or s.task_instruction, "task_instruction": s.task_instruction,
        "strategy": frame.strategy, "plan_source": d.plan_source, "movement": movement, "effect": frame.effect,
        "target_estimate": None if est is None else [round(float(v), 1) for v in est],
        "goal_fix": None if s.memory.goal_fix is None else [round(float(v), 1) for v in s.memory.goal_fix],
        "landmarks": frame.map_snapshot,
    }
    if with_anchor_graph:
        extra["anchor_graph"] = anchor_graph_payload(state)
    x, y, z, yaw = frame.pose
    return agent_step_payload(step=frame.timestep, current_state=frame.current_state, action=action,
                              reason=frame.reason, pose={"x": x, "y": y, "z": z, "yaw": yaw},
                              distance_estimate_m=frame.distance_to_target, **extra)


def plan_payload(state: AgentState) -> dict[str, Any] | None:
    """The current long-term plan (``plan`` message), or None before one exists."""
    d = state.dynamic
    if d.plan is None:
        return None
    return {"goal": state.static.task_instruction, "source": d.plan_source, "errors": list(d.plan_errors),
            "retrieved": [{k: r[k] for k in ("uid", "similarity", "status")} for r in d.retrieved],
            "steps": [asdict(g) for g in d.plan.sub_goals], "reason": d.plan.reason,
            "llm": dict(d.llm_plan) or None}

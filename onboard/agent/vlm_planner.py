"""The `vlm` planner backend: the navigate and search experts' move from a vision-language model, asked aside.

The seeds' navigate and search experts look at the agent's maps with a VLM and
answer `NavigationDecisionOutput` / `SearchOutput` (a movement, why, whether
the sub-goal is done, a confidence). Here the question carries three images, in
this order and named so in the prompt: the camera frame, the live landmark map
and the live semantic map (`map_render`), with the expert's prompt built from
the seeds' parts (the sub-goal's context, `current_state`, the lessons).

A call takes seconds on the vehicle's CPU, so no step waits for it (unless
`agent.vlm_plan_wait`, the benchmark's reproducible mode): the question goes to
the VLM's own worker (`onboard.inference.vlm_asker.VlmAsker`, one call in
flight), every step flies the geometric expert's move meanwhile, and the
answer is taken in at the first step boundary after it arrived
(`GraphAgent.note_vlm`). It is used only if it still fits: the same strategy,
a plain move chosen this step. The model's movement is relative to the frame
it saw, so it becomes a compass bearing from that frame's heading (forward,
left, right, back) and the move on offer nearest it, within
`agent.vlm_move_tolerance_deg`, is flown; `stop`, `ascend` and `descend`, or a
bearing no street takes, keep the geometric move (looks and arrival stay the
experts', the safety envelope the bridge's). `next_subtask` hands over to the
next sub-goal, whose expert checks it as after any hand-over. An invalid answer
(the contract refused it twice) and a call that failed keep the geometric move,
counted (`vlm-fallback`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onboard.agent.agent_state import AgentState
from onboard.map.compass import angle_diff
from onboard.vocab.observation import ActionKind, AgentAction, NeighbourMove

STRATEGIES = ("navigate", "search")

# The seeds' expert prompts (000 §4.1, §4.2), with the images named as they arrive; one line of what each
# movement means on a street graph, since the model's "forward" is the camera's.
SYSTEM = {
    "navigate": ("You are the navigate expert of a drone flying over city streets towards a landmark area. "
                 "Image 1: the camera frame (the drone faces the direction it last flew). Image 2: the live "
                 "landmark map (north up; landmarks, the target estimate, the flown path). Image 3: the live "
                 "semantic map (north up; searched area, streets, frontier). forward = the street ahead, turn_left "
                 "/ turn_right = the street to that side, backward = back the way it came. JSON only: movement, "
                 "reason, next_strategy (next_subtask once the area is reached), confidence (0 to 1)."),
    "search": ("You are the search expert of a drone looking for a place's name over city streets. Image 1: the "
               "camera frame (the drone faces the direction it last flew). Image 2: the live landmark map (north "
               "up). Image 3: the live semantic map (north up; searched area, streets, unflown frontier). forward "
               "= the street ahead, turn_left / turn_right = the street to that side, backward = back the way it "
               "came. JSON only: movement, reason, decision (next_subtask once the area is exhausted), confidence "
               "(0 to 1)."),
}
# Degrees from the frame's heading each movement points to (compass, clockwise); the rest name no street.
TURNS = {"forward": 0.0, "turn_right": 90.0, "backward": 180.0, "turn_left": -90.0}


def vlm_backend(state: AgentState) -> bool:
    return state.static.config.planner == "vlm" and state.static.vlm is not None


def decision_prompt(state: AgentState, strategy: str) -> str:
    """The user text of the question: the sub-goal's context, `current_state`, the lessons (the seeds' RAG part)."""
    d, s = state.dynamic, state.static
    ctx = d.subtask_context or {}
    parts = [d.current_state or s.task_instruction,
             f"Sub-goal: {ctx.get('goal', '')}. Last decision: {ctx.get('CoT_summary', '')}"[:300]]
    lessons = [r.get("reflection_note", "") for r in d.retrieved][:2] + s.reflections.recent()[-2:]
    if lessons:
        parts.append("Lessons: " + " | ".join(x[:100] for x in lessons if x))
    parts.append(f"Next {strategy} move?")
    return "\n".join(p for p in parts if p)


def move_for(movement: str, heading: float, moves: tuple[NeighbourMove, ...], tolerance_deg: float) -> NeighbourMove | None:
    """The move on offer a movement names from a frame facing `heading`: nearest the bearing, within the tolerance."""
    if movement not in TURNS or not moves:
        return None
    bearing = (heading + TURNS[movement]) % 360.0
    best = min(moves, key=lambda m: abs(angle_diff(m.bearing, bearing)))
    return best if abs(angle_diff(best.bearing, bearing)) <= tolerance_deg else None


def _count(stats: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`stats` (DynamicState.vlm_plan) with one more of each key: a new dict, for a node's update."""
    out = dict(stats)
    for key in keys:
        out[key] = out.get(key, 0) + 1
    return out


def take_decision(state: AgentState) -> dict[str, Any]:
    """The answer that arrived, applied to this step's action if it still fits; the update (counts, action)."""
    d, s = state.dynamic, state.static
    answer, asked = d.vlm_decision, d.vlm_request
    update: dict[str, Any] = {"vlm_decision": None}
    if answer is None:
        return update
    own = asked is not None and asked["step"] == answer.step
    if own:
        update["vlm_request"] = None
    heading = asked["heading"] if own else d.observation.heading
    if answer.decision is None or answer.used_fallback:  # refused twice, or the call failed: geometric move kept
        return {**update, "vlm_plan": _count(d.vlm_plan, "fallbacks"), "vlm_source": "vlm-fallback"}
    if answer.kind != d.strategy or d.action is None or d.action.kind != ActionKind.MOVE:
        # asked about another strategy, or the expert looks or arrives now
        return {**update, "vlm_plan": _count(d.vlm_plan, "stale"), "vlm_source": "vlm-stale"}
    dec = answer.decision
    move = move_for(dec.movement, heading, d.observation.moves, s.config.vlm_move_tolerance_deg)
    done = getattr(dec, "next_strategy", getattr(dec, "decision", "")) == "next_subtask"
    counts = ["kept" if move is None else "adopted"]  # kept: stop / ascend / descend, or no street that way
    if move is None:
        update["vlm_source"] = "vlm-kept"
    else:
        update["vlm_source"] = "vlm"
        reason = f"vlm {dec.movement} ({dec.confidence:.2f}, step {answer.step}): {dec.reason}"[:200]
        update["action"] = AgentAction.move(move.node, reason)
        update["subtask_context"] = {**d.subtask_context, "CoT_summary": dec.reason[:120], "movement": move.node}
    if done and d.plan is not None and d.current_task_index + 1 < len(d.plan.sub_goals):
        update["current_task_index"] = d.current_task_index + 1  # the next step's expert judges the hand-over
        counts.append("next_subtask")
    return {**update, "vlm_plan": _count(d.vlm_plan, *counts)}


def ask(state: AgentState) -> dict[str, Any]:
    """Send this step's question (frame, both maps, prompt) when none is in flight; the update."""
    from onboard.agent.map_render import render_maps

    d, s = state.dynamic, state.static
    if d.strategy not in STRATEGIES:
        return {}
    if s.vlm.busy:  # a confirm (or a caption) holds the VLM's worker: this step is not asked about
        return {"vlm_plan": _count(d.vlm_plan, "busy")}
    if d.camera_frame is None:
        return {"vlm_plan": _count(d.vlm_plan, "no_frame")}
    landmark, semantic = (np.ascontiguousarray(im[:, :, ::-1]) for im in render_maps(state))  # BGR -> RGB
    prompt = decision_prompt(state, d.strategy)
    if not s.vlm.ask_decision(d.timestep, d.strategy, [d.camera_frame, landmark, semantic], prompt,
                              SYSTEM[d.strategy]):
        return {}
    return {"vlm_plan": _count(d.vlm_plan, "asked"),
            "vlm_request": {"step": d.timestep, "strategy": d.strategy, "heading": float(d.observation.heading)}}


def vlm_step(state: AgentState) -> dict[str, Any]:
    """Node after the expert: take in an answer that arrived, then ask about this step (waiting: answer it now).

    Its parts apply their updates in turn (the second reads what the first changed); the node's own is the
    step's source.
    """
    from onboard.agent.agent_state import apply_update

    d, s = state.dynamic, state.static
    apply_update(state, {"vlm_source": "vlm-pending" if d.vlm_request is not None else "geometric"})
    if d.vlm_decision is not None:
        apply_update(state, take_decision(state))
    if d.vlm_request is None and d.strategy in STRATEGIES and d.action is not None and d.action.kind == ActionKind.MOVE:
        apply_update(state, ask(state))
        if s.config.vlm_plan_wait and d.vlm_request is not None:
            s.vlm.settle(s.vlm.worker.deadline_s)
            for answer in s.vlm.answers():
                note_answer(state, answer)
            if d.vlm_decision is not None:
                apply_update(state, take_decision(state))
    return {"vlm_steps": d.vlm_steps + [(d.timestep, d.vlm_source)]}


def note_answer(state: AgentState, answer: Any) -> None:
    """A decision answer handed in between steps (or in the step, waiting): kept for the next `vlm_step`."""
    d = state.dynamic
    d.vlm_answers = d.vlm_answers + [answer.to_json()]
    if answer.kind in STRATEGIES:
        stats = dict(d.vlm_plan)
        stats["answered"] = stats.get("answered", 0) + 1
        stats["seconds"] = round(stats.get("seconds", 0.0) + answer.seconds, 3)
        d.vlm_plan = stats
        d.vlm_decision = answer


def summary(state: AgentState) -> dict[str, Any]:
    """The mission's VLM decisions: counts by outcome, calls, their seconds, the source of each step's move."""
    d = state.dynamic
    stats = dict(d.vlm_plan)
    calls = stats.get("answered", 0)
    sources: dict[str, int] = {}
    for _, src in d.vlm_steps:
        sources[src] = sources.get(src, 0) + 1
    return {**stats, "s_per_call": round(stats.get("seconds", 0.0) / calls, 3) if calls else None,
            "step_sources": sources}

# Over 400 lines: the graph's nodes and routers are one step's walk (the order below), read together; a node kept apart from its router hides the step.
"""The agent graph: nodes (`state -> update`), routers (`state -> next node`), and one step's walk.

One call of `run_step` takes one observation and walks the graph until this
step's action is final (or the mission ends):

    update_odometry -> should_perceive? -> perceive_and_model
      -> should_generate_plan? -> generate_plan_with_rag | adopt_llm_plan (the model's plan arrived)
      -> execute_subtask_router (builds current_state once) -> navigate | search | locate
         (an expert may hand the step to another sub-goal: back to the router)
      -> vlm_step (the `vlm` backend only: the VLM's answer taken in, the next question asked)
      -> finalize_step (FrameLog, episodic sentence) -> should_continue?
         -> end of step | check_mission_success -> reflect_on_mission -> end

`update_odometry` is proprioception (where the last move took the drone, what
moves are on offer, the move's effect); it runs every step, while
`perceive_and_model` (landmarks, readable names, caption) runs at the
perception interval, and always after a look-up (the navigate expert may
climb over the roofs instead of moving: `looks.look_up_altitude`; the
drone stays over its waypoint, and the next observation's sightings are from
up there).

With the `llm` planner backend the model's plan is written on its own thread
while the steps fly the geometric plan (`agent.llm_plan_wait: false`, the
default): a step never waits for the model. The first step that starts after
the answer arrived adopts it (`adopt_llm_plan`), keeping the strategy under
way; a failed answer leaves the geometric plan, which is the fallback anyway.
Every prompt carries the seeds' context (`onboard.agent.prompt_context`), and
the plan is asked for again on the re-plan triggers (`onboard.agent.replan`:
`should_replan -> request_replan`, between planning and the subtask router);
each adopted plan gets the next `plan_version`, which every FrameLog names.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from onboard.agent import branches, place_memory, replan, vlm_planner
from onboard.agent.agent_state import AgentState, apply_update
from onboard.agent.current_state import build_current_state, compass, geoinstruct, scene_description, with_caption
from onboard.agent.experience_prior import frames_from, lesson_from
from onboard.agent.experts import EXPERTS, move_towards
from onboard.agent.exploring import explore_target
from onboard.agent.frame_log import FrameLog, note_retrieval
from onboard.agent.geometric_planner import make_plan
from onboard.agent.geometry import norm, offset
from onboard.agent.mission_analysis import rule_analysis, submit_analysis
from onboard.agent.llm_planner import LLMPlan
from onboard.vocab.observation import AgentAction, AgentObservation
from onboard.agent.strategy_control import classify_effect, is_stuck

TAKEOFF = -1  # placeholder id of the take-off waypoint until a neighbour names it
END_STEP = "__end_step__"
END_MISSION = "__end_mission__"
MAX_HANDOFFS = 3


# ---------------------------------------------------------------------------------------------- nodes
def _over_the_roofs(state: AgentState) -> float | None:
    """The altitude over the roofs this observation was taken at, None: at cruise.

    The observation says so, not what was asked: a climb or a come-down (straight or on the way, whole or a
    leg) may have been refused, and the vehicle may have come down without being asked (a fleet layer, a
    failsafe). Cruise is the altitude the first look-up left from; before one the drone is at cruise.
    """
    d = state.dynamic
    alt, cruise = d.observation.altitude_m, d.cruise_m
    return alt if alt is not None and cruise is not None and alt > cruise + 0.5 else None


def update_odometry(state: AgentState) -> dict[str, Any]:
    """Confirm the last move (commanded vs achieved), dead-reckon, learn the moves on offer, judge the effect."""
    d, s = state.dynamic, state.static
    obs = d.observation
    ids = {m.node for m in obs.moves}
    trail = list(d.trail) or [TAKEOFF]
    here = d.here if d.here is not None else TAKEOFF
    last = d.trajectory_history[-1].movement if d.trajectory_history else {}
    if last.get("kind") in ("look_up", "come_down", "look_low") and last.get("node") is None:
        # Still over the same waypoint: no move to confirm, dead-reckon or judge. The sightings are from
        # above if the look-up was flown (the observation's altitude is the one asked for), else it was refused;
        # then the drone flies on up there. A look-low's are from the street (names read), a come-down's from
        # cruise.
        s.street_map.observe(here, obs.moves)
        up = d.up_m if last.get("kind") == "look_low" else _over_the_roofs(state)
        hints = ("pattern:STUCK",) if s.anchors is not None and is_stuck(trail) else ()
        return {"here": here, "trail": trail, "position": s.street_map.xy[here].copy(), "hints": hints,
                "last_effect": "", "from_above": last.get("kind") != "look_low" and up is not None, "up_m": up}
    moved = True
    if len(trail) >= 2:
        prev = trail[-2]
        if prev == TAKEOFF:  # the take-off waypoint is the unknown move pointing back at the origin
            base = s.street_map.xy[here]
            back = [m.node for m in obs.moves if m.node not in s.street_map.xy
                    and norm(base + offset(m.bearing, m.length) - s.street_map.xy[TAKEOFF]) < 5.0]
            if back:
                s.street_map.rename(TAKEOFF, back[0])
                trail = [back[0] if n == TAKEOFF else n for n in trail]
                prev = back[0]
        moved = prev in ids or prev == TAKEOFF
        if not moved:  # the commanded move did not happen: still where we were
            trail.pop()
            here = trail[-1]
    s.street_map.observe(here, obs.moves)
    position = s.street_map.xy[here].copy()
    if s.corridors is not None:
        s.corridors.visit(position)
    up = _over_the_roofs(state)
    update: dict[str, Any] = {"here": here, "trail": trail, "position": position, "from_above": up is not None,
                              "up_m": up}
    if up is not None:  # a place looked from over the roofs, as a look-up's
        update["looked_up_from"] = d.looked_up_from + [position.copy()]
    hints: tuple[str, ...] = ()
    if len(trail) >= 2 and d.trajectory_history:
        last = d.trajectory_history[-1]
        if s.anchors is not None and moved:
            hints = place_memory.record_move(s.anchors, float(last.movement.get("bearing", 0.0)), here)
        aim = d.aim
        before = norm(aim - s.street_map.xy[trail[-2]]) if aim is not None and moved else None
        after = norm(aim - position) if aim is not None else None
        effect = classify_effect(moved, before, after, s.config.min_progress_m)
        update["last_effect"] = effect.value
        reflection = s.controller.record(effect, d.timestep, trail)
        if reflection is not None and s.config.use_reflection:
            s.reflections.add(reflection.text)
            update["lessons"] = (d.lessons + [reflection])[-s.reflection_window:]
            update["replan_triggers"] = d.replan_triggers + ["reflection"]
    elif s.anchors is not None and not d.trajectory_history:
        place_memory.start(s.anchors, here)
    if s.anchors is not None and is_stuck(trail):
        hints = tuple(dict.fromkeys(hints + ("pattern:STUCK",)))
    update["hints"] = hints
    return update


def perceive_and_model(state: AgentState) -> dict[str, Any]:
    """Landmark fixes into the working memory, the goal's name if readable, caption and geo-instruction."""
    d, s = state.dynamic, state.static
    obs = d.observation
    before, from_fleet = set(s.memory.landmark_map()), set(s.memory.peer_landmarks)
    if obs.shared is not None:
        s.memory.share(obs.shared, s.config.fleet_spread_floor_m)
    s.memory.observe(d.timestep, d.position, obs.landmarks)
    update: dict[str, Any] = {}
    fixed = [n for n in s.memory.landmark_map() if n not in before and n in s.goal.landmarks]
    fixed += [n for n in s.memory.peer_landmarks if n not in from_fleet | before and n in s.goal.landmarks
              and n not in fixed]  # another vehicle placed it: the plan's premises changed as much
    if fixed:  # a landmark of the description placed: the plan's premises changed
        update["replan_triggers"] = d.replan_triggers + [f"landmark:{n}" for n in fixed]
        if s.anchors is not None:
            for n in fixed:
                s.anchors.record_discovered_context(s.memory.goal_fix is not None, f"landmark {n}"[:40],
                                                    f"{n} fixed at step {d.timestep}")
    if not d.from_above:  # from a look-up's altitude no name is readable: it says nothing of where the goal is not
        s.memory.looked(d.position, [p.distance for p in obs.pois])
        s.memory.read_signs(d.position, obs.pois)
        s.memory.passed(d.timestep, d.position)
        if obs.landmarks:
            update["seen_at_cruise"] = d.seen_at_cruise | {x.name for x in obs.landmarks}
    goal_pois = [p for p in obs.pois if s.goal.names_goal(p.name)]
    if goal_pois:
        p = max(goal_pois, key=lambda p: (len(p.name), -p.distance))
        if s.memory.goal_fix is None:
            update["goal_placed_at"] = d.timestep
        s.memory.see_goal(d.position, p.bearing, p.distance)
    s.memory.reached_prior_in_vain(d.position, s.config.arrive_within_m)
    return {**update, "perceived_at": d.timestep,
            "current_observation": {"scene_description": with_caption(scene_description(obs), d.vlm_caption),
                                    "geoinstruct": geoinstruct(obs, d.position, s.memory.target())}}


def generate_plan_with_rag(state: AgentState) -> dict[str, Any]:
    """Long-term plan; past plans for a similar task are retrieved when a store is given.

    Their reflection notes are cited in the plan; the positions they carry seed the
    working memory (remembered landmarks; the goal itself when a very similar task
    read its name), placed in the own frame by the landmarks seen now. Backend "llm"
    with a model: the model writes the plan (geometric plan on any failure); without
    `llm_plan_wait` the request goes to the model and this step flies the geometric plan.
    """
    s, d = state.static, state.dynamic
    lessons: list[str] = []
    retrieved: list[dict[str, Any]] = []
    if s.experience_store is not None:
        hits = s.experience_store.retrieve_plans(s.task_instruction)
        lessons = [h.record.reflection_note for h in hits]
        retrieved = [{"uid": getattr(h, "uid", ""), "similarity": round(float(getattr(h, "similarity", 0.0)), 3),
                      "task_instruction": getattr(h.record, "task_instruction", ""),
                      "status": getattr(h.record, "status", ""), "reflection_note": h.record.reflection_note}
                     for h in hits]
        frames = frames_from([ln for h in hits if (ln := lesson_from(h)) is not None],
                             s.config.experience_reuse_similarity)
        if frames:
            s.memory.set_priors(frames, s.config.prior_conflict_m)
        goal = next((f for f in frames if f.goal_xy is not None), None)
        if goal is not None:
            lessons.insert(0, f"reused goal read on a past flight (sim {goal.similarity:.2f})")
    update: dict[str, Any] = {}
    if s.experience_store is not None:
        update["retrieval"] = note_retrieval(d.retrieval, "" if replan.llm_backend(state) else "flat",
                                             {"strategic_plan_memory": len(retrieved)})
    plan = make_plan(s.goal, s.config.use_plan, lessons, search=s.config.use_search_subgoal)
    if replan.llm_backend(state):  # the geometric plan is flown until the model's is adopted (at once when waiting)
        update.update(replan.ask_for_plan(state, ["start", *replan.due(state)], lessons,
                                          update.get("retrieval", d.retrieval)))
    return {**update, "plan": plan, "current_task_index": 0, "plan_source": "geometric", "plan_errors": [],
            "retrieved": retrieved, "subtask_context": {"goal": plan.sub_goals[0].goal, "CoT_summary": plan.reason, "movement": None}}


_STRATEGY_ORDER = {"navigate": 0, "search": 1, "locate": 2}


def continue_index(plan, index: int, new_plan) -> int:
    """Where to pick up in `new_plan` while `plan` is at sub-goal `index`: progress is kept.

    The first sub-goal with the strategy under way; else the first one further on
    (navigate -> search -> locate: never back to navigate from a search); else the first.
    """
    current = plan.sub_goals[index].strategy
    subs = new_plan.sub_goals
    same = next((i for i, g in enumerate(subs) if g.strategy == current), None)
    if same is not None:
        return same
    later = next((i for i, g in enumerate(subs) if _STRATEGY_ORDER[g.strategy] > _STRATEGY_ORDER[current]), None)
    return later if later is not None else 0


def adopt_llm_plan(state: AgentState) -> dict[str, Any]:
    """The model's plan arrived: take it in at this step boundary, or keep the geometric plan if it failed."""
    d, s = state.dynamic, state.static
    answer: LLMPlan = d.plan_request.result()
    report = {**d.llm_plan, "answered_step": d.timestep, "call_s": round(answer.seconds, 3), "source": answer.source}
    update: dict[str, Any] = {"plan_request": None, "llm_plan": report, "llm_calls": d.llm_calls[:-1] + [report],
                              "plan_source": answer.source, "plan_errors": list(answer.errors)}
    if answer.used_fallback:  # the fallback is the plan being flown (geometric or the last adopted): nothing to switch
        if d.plan_version > 0:
            update["plan_source"] = d.plan_source
        return update
    index = continue_index(d.plan, d.current_task_index, answer.plan)
    sub = answer.plan.sub_goals[index]
    report.update(adopted_step=d.timestep, version=d.plan_version + 1)
    if answer.intent is not None:
        intent = answer.intent
        report["intent"] = {"goal_flag": intent.goal_flag, "angle": intent.angle, "bearing": round(intent.bearing, 1),
                            "goal_scene_type": intent.goal_scene_type}
        if s.anchors is not None:  # the planner's discovered context goes into the FIFO (002 §5.1.4)
            s.anchors.record_discovered_context(answer.intent.goal_flag, answer.intent.goal_scene_type,
                                                answer.intent.why[:120])
    update.update(plan=answer.plan, current_task_index=index, plan_version=d.plan_version + 1,
                  place_intent=answer.intent, subgoal_at=(d.plan_version + 1, index),  # hand-overs count from here
                  subtask_context={"goal": sub.goal, "CoT_summary": answer.plan.reason, "movement": None})
    if sub.strategy == "search" and d.plan.sub_goals[d.current_task_index].strategy != "search":
        target = s.memory.target()  # the search starts here, as when navigate hands over
        update["search_anchor"] = None if target is None else target.copy()
    return update


def execute_subtask_router(state: AgentState) -> dict[str, Any]:
    """Fail the branch over or time it out if due (`branches.check`), build the `current_state` string for
    this step and name the strategy to dispatch to."""
    update = branches.check(state)
    apply_update(state, update)
    d, s = state.dynamic, state.static
    sub = d.plan.sub_goals[d.current_task_index]
    obs = d.current_observation
    return {**update, "strategy": sub.strategy,
            "current_state": build_current_state(obs.get("scene_description", ""), obs.get("geoinstruct", ""),
                                                 s.task_instruction, sub.goal, sub.strategy)}


def finalize_step(state: AgentState) -> dict[str, Any]:
    """Commit the action: FrameLog, episodic sentence, waypoint trail, timestep + 1."""
    d, s = state.dynamic, state.static
    action = d.action
    aim = branches.aim(state)
    moving = action.node is not None and action.kind in ("move", "come_down", "look_up")  # may fly to a neighbour
    if aim is None and moving:
        aim = explore_target(state)[0]
    dist = norm(s.memory.target() - d.position) if s.memory.target() is not None else None
    update: dict[str, Any] = {"timestep": d.timestep + 1, "handoffs": 0, "aim": aim}
    movement: dict[str, Any] = {"kind": action.kind}
    yaw = d.trajectory_history[-1].pose[3] if d.trajectory_history else 0.0
    if moving:
        m = next(m for m in d.observation.moves if m.node == action.node)
        movement.update(node=m.node, bearing=m.bearing, length=m.length)
        yaw = m.bearing
        arrived = d.position + offset(m.bearing, m.length)
        s.episodic.record_move(tuple(np.round(d.position).tolist()), [compass(o.bearing) for o in d.observation.moves],
                               compass(m.bearing), tuple(np.round(arrived).tolist()), action.reason)
        update.update(here=m.node, trail=d.trail + [m.node])
    if action.kind in ("look_up", "look_low"):
        movement.update(altitude_m=action.altitude_m)
    elif action.kind == "come_down" and d.up_m is not None:
        movement.update(altitude_m=d.up_m)
        if action.altitude_m is not None:
            movement.update(to_m=action.altitude_m)
    frame = FrameLog(d.timestep, d.current_state, d.strategy, movement, action.reason,
                     (float(d.position[0]), float(d.position[1]), 0.0, float(yaw)),
                     None if dist is None else round(dist, 1), d.last_effect,
                     {n: [round(float(v), 1) for v in p] for n, p in s.memory.landmark_map().items()},
                     {n: m.why for n, m in s.memory.map_dropped.items() if m.step == d.timestep},
                     d.plan_version, dict(d.retrieval), dict(d.prompt_items), list(d.step_triggers),
                     list(d.vlm_answers))
    update["trajectory_history"] = d.trajectory_history + [frame]
    update["vlm_answers"] = []
    moved_on = replan.subgoal_trigger(state)
    if moved_on:
        update["replan_triggers"] = d.replan_triggers + moved_on
    update["subgoal_at"] = (d.plan_version, d.current_task_index)
    return update


def check_mission_success(state: AgentState) -> dict[str, Any]:
    """The agent's own verdict: it declared arrival with the goal's name read within reach."""
    d = state.dynamic
    if d.action is not None and d.action.kind == "arrive":
        return {"mission_success": True, "final_reason": "success"}
    return {"mission_success": False, "final_reason": "timeout"}


def reflect_on_mission(state: AgentState) -> dict[str, Any]:
    """Main-plan reflection: the rule-based analysis at once; with a model, the model's analysis is started too.

    The model's answer is awaited after the mission (`GraphAgent.finish_mission`), never in a step: until
    then the rule-based analysis is the mission's, and it is the one kept when the model fails or is late.
    """
    d, s, f = state.dynamic, state.static, state.final
    effects = [e.value for e in s.controller.effects]
    frames = d.trajectory_history
    rule = rule_analysis(bool(f.mission_success), f.final_reason, frames, effects, d.plan)
    if s.config.use_mission_analysis and s.plan_model is not None:
        request = submit_analysis(s.plan_model, s.task_instruction, bool(f.mission_success), f.final_reason,
                                  list(frames), effects, d.plan)
        return {"analysis_request": request, "mission_analysis": rule}
    s.reflections.add(rule.text)
    return {"mission_analysis": rule}


# ---------------------------------------------------------------------------------------------- routers
def should_generate_plan(state: AgentState) -> str:
    d = state.dynamic
    if d.plan is None:
        return "generate_plan_with_rag"
    if d.plan_request is not None and d.plan_request.done():
        return "adopt_llm_plan"
    return replan.should_replan(state)


def should_perceive(state: AgentState) -> str:
    d, s = state.dynamic, state.static
    if d.perceived_at < 0 or d.from_above or d.timestep - d.perceived_at >= s.config.perceive_every_steps:
        return "perceive_and_model"
    return should_generate_plan(state)


def route_subtask(state: AgentState) -> str:
    return state.dynamic.plan.sub_goals[state.dynamic.current_task_index].strategy


def after_expert(state: AgentState) -> str:
    """The expert chose an action: finalize (the vlm backend's answer first); it handed the step over: dispatch
    again (bounded)."""
    if state.dynamic.action is None:
        return "handoff"
    return "vlm_step" if vlm_planner.vlm_backend(state) else "finalize_step"


def should_continue(state: AgentState) -> str:
    d = state.dynamic
    if d.action.kind == "arrive" or d.observation.steps_left <= 0:
        return "check_mission_success"
    return END_STEP


def handoff(state: AgentState) -> dict[str, Any]:
    """Count hand-overs; past `MAX_HANDOFFS` the navigate expert decides without a plan switch."""
    return {"handoffs": state.dynamic.handoffs + 1}


def route_handoff(state: AgentState) -> str:
    return "execute_subtask_router" if state.dynamic.handoffs <= MAX_HANDOFFS else "fallback_navigate"


def fallback_navigate(state: AgentState) -> dict[str, Any]:
    """Too many hand-overs in one step (a plan the experts cannot follow): head for the target."""
    s = state.static
    target = s.memory.target()
    if target is None:
        target = explore_target(state)[0]
    action, _ = move_towards(state, target)
    return {"action": action, "strategy": "navigate"}


NODES: dict[str, Callable[[AgentState], dict[str, Any]]] = {
    "update_odometry": update_odometry, "perceive_and_model": perceive_and_model,
    "generate_plan_with_rag": generate_plan_with_rag, "adopt_llm_plan": adopt_llm_plan,
    "request_replan": replan.request_replan,
    "execute_subtask_router": execute_subtask_router,
    **EXPERTS, "vlm_step": vlm_planner.vlm_step, "handoff": handoff, "fallback_navigate": fallback_navigate, "finalize_step": finalize_step,
    "check_mission_success": check_mission_success, "reflect_on_mission": reflect_on_mission,
}
ROUTERS: dict[str, Callable[[AgentState], str]] = {
    "update_odometry": should_perceive,
    "perceive_and_model": should_generate_plan,
    "generate_plan_with_rag": replan.after_request,
    "request_replan": replan.after_request,
    "adopt_llm_plan": replan.should_replan,
    "execute_subtask_router": route_subtask,
    **{name: after_expert for name in EXPERTS},
    "vlm_step": lambda s: "finalize_step",
    "handoff": route_handoff,
    "fallback_navigate": lambda s: "finalize_step",
    "finalize_step": should_continue,
    "check_mission_success": lambda s: "reflect_on_mission",
    "reflect_on_mission": lambda s: END_MISSION,
}


def run_step(state: AgentState, observation: AgentObservation) -> tuple[AgentAction, list[str]]:
    """Walk the graph for one observation; returns this step's action and the nodes visited."""
    apply_update(state, {"observation": observation, "action": None, "retrieval": {}, "prompt_items": {},
                         "step_triggers": []})
    node, path = "update_odometry", []
    while node not in (END_STEP, END_MISSION):
        path.append(node)
        apply_update(state, NODES[node](state))
        node = ROUTERS[node](state)
    return state.dynamic.action, path

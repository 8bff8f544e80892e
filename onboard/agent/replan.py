"""The `llm` backend's plan is a living thing: when to ask the model again, and the asking itself.

Triggers (from the seeds: 002 §6 "STOP without the goal", the strategy tree's
reflections, new landmarks in the world model, the search timeout, and
000's `retrieval_interval`) are strings appended to `DynamicState.replan_triggers`
by whichever node notices them; `retrieval_interval` steps after the last request
count as one more. A step never waits for the model (unless
`agent.llm_plan_wait`, the benchmark's reproducible mode): the request runs on
its own thread, one at a time, and triggers that arrive meanwhile stay queued,
so they coalesce into the next request, made at the first step boundary after
the answer was adopted (`adopt_llm_plan` in `onboard.agent.graph`).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from onboard.agent import prompt_context
from onboard.agent.agent_state import AgentState
from onboard.agent.frame_log import note_retrieval
from onboard.agent.llm_planner import SYSTEM, SYSTEM_PLACE, llm_plan, submit_llm_plan
from onboard.agent.prompt_context import estimate_tokens, front_deg


def llm_backend(state: AgentState) -> bool:
    s = state.static
    return s.config.planner == "llm" and s.plan_model is not None and s.config.use_plan


def due(state: AgentState) -> list[str]:
    """The triggers a request made now would answer; [] when none is due."""
    d, s = state.dynamic, state.static
    if s.memory.goal_fix is not None:  # the goal's name was read: what is left (locate) is geometry, in code
        return []
    triggers = list(dict.fromkeys(d.replan_triggers))
    every = s.config.retrieval_interval
    if every > 0 and d.timestep - d.plan_requested_at >= every:
        triggers.append("interval")
    return triggers


def should_replan(state: AgentState) -> str:
    d, s = state.dynamic, state.static
    if llm_backend(state) and s.config.use_replan and d.plan_request is None and d.plan is not None and due(state):
        return "request_replan"
    return "execute_subtask_router"


def after_request(state: AgentState) -> str:
    """An answer already there (the waiting mode) is adopted in this step; else fly on."""
    d = state.dynamic
    return "adopt_llm_plan" if d.plan_request is not None and d.plan_request.done() else "execute_subtask_router"


def ask_for_plan(state: AgentState, triggers: list[str], lessons: list[str],
                 retrieval: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the prompt (context fitted to `agent.llm_prompt_tokens`) and send it; the update records the request.

    With `agent.llm_plan_wait` the answer is awaited here and handed over as a
    finished future, so adopting it is the same node either way.
    """
    d, s = state.dynamic, state.static
    cfg = s.config
    update: dict[str, Any] = {}
    context, items = "", {}
    retrieval = d.retrieval if retrieval is None else retrieval
    place = cfg.use_place_anchor_plan
    front = front_deg(state)
    if cfg.use_prompt_context:
        fixed = estimate_tokens((SYSTEM_PLACE if place else SYSTEM) + s.task_instruction
                                + d.current_observation.get("geoinstruct", "")) + 40
        ctx = prompt_context.gather(state, cfg.llm_prompt_tokens, fixed)
        context = ctx.text()
        items = {**ctx.items(), "dropped": list(ctx.dropped), "tokens": fixed + ctx.tokens}
        retrieval = note_retrieval(retrieval, ctx.retrieval["mode"], ctx.retrieval["hits"])
        lessons = list(ctx.lessons) + [x for x in lessons if x not in ctx.lessons]
    else:
        items = {"reflections": [t[:60] for t in s.reflections.recent()], "lessons": [x[:60] for x in lessons]}
    ask = (s.plan_model, s.task_instruction, s.goal, d.current_observation.get("geoinstruct", ""), lessons,
           s.reflections.format_for_prompt())
    kw = {"context": context, "place_anchor": place, "front_deg": front}
    report = {"wait": cfg.llm_plan_wait, "requested_step": d.timestep, "answered_step": None, "adopted_step": None,
              "call_s": None, "source": "pending", "triggers": list(triggers), "version": None,
              "prompt_tokens": items.get("tokens")}
    if cfg.llm_plan_wait:
        fut: Future = Future()
        fut.set_result(llm_plan(*ask, **kw))
    else:
        fut = submit_llm_plan(*ask, **kw)
    update.update(plan_request=fut, llm_plan=report, llm_calls=d.llm_calls + [report], plan_requested_at=d.timestep,
                  replan_triggers=[], prompt_items=items, step_triggers=list(triggers), retrieval=retrieval)
    return update


def request_replan(state: AgentState) -> dict[str, Any]:
    """Ask the model for a new plan on the triggers due (node; the geometric plan's lessons stay cited)."""
    return ask_for_plan(state, due(state), [r["reflection_note"] for r in state.dynamic.retrieved])


def subgoal_trigger(state: AgentState) -> list[str]:
    """At a step's end: the plan moved on to another sub-goal by itself (not by adopting a new plan).

    Navigate handing over to search without the goal's name read is the Place–Anchor
    planner's "STOP without the goal" (002 §6); any other hand-over is a sub-goal reached.
    """
    d, s = state.dynamic, state.static
    now = (d.plan_version, d.current_task_index)
    before = d.subgoal_at
    if before is None or before[0] != now[0] or before[1] == now[1] or d.plan is None:
        return []
    old, new = d.plan.sub_goals[before[1]].strategy, d.plan.sub_goals[now[1]].strategy
    if s.memory.goal_fix is None and old == "navigate" and new == "search":
        return ["stop_without_goal"]
    return [f"subgoal:{old}>{new}"]

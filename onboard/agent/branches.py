"""Branches of the plan: the sub-goal timeouts.

A branch is one sub-goal of the plan flown towards one aim. 000 ends a search
after `search_timeout` steps without locating and tries what comes next. Here:

* the aims, in order: the working memory's target (every relation fused), then
  each relation alone (the landmark plus that relation's offset or ray): where
  one of the description's relations puts the goal when another one is off; aims
  within `search_radius_m` of an earlier one are the same branch. The described
  landmarks themselves are no aims: the goal is where the relation's offset
  says, and the landmark is hundreds of metres from it (failing over to the
  landmark lost three single-relation flights of the ordinary test split);
* a branch fails after `search_timeout` steps of search, or after
  `navigate_timeout` steps of navigate without getting closer to its aim than
  before (`use_search_timeout`: a long way is no failure, a stalled one is); its aim is remembered as failed and the next
  aim not near a failed one is flown (navigate if it lies outside the search
  radius, search around it otherwise);
* with every aim failed (a one-relation description has one) the failed aims are
  forgotten and the count restarts: a new round from the best estimate, in the
  same sub-goal. (Handing a far navigate over to search instead lost flights that
  only took a detour: the controller's own avoid list is the remedy there.)

Once the goal's name is read there is nothing to fail over to: locate is geometry.

The seeds' strategy tree (001 §3.3.2) also failed a branch past `max_errors`
failed moves or `max_loops` loops (the threshold controller's reflections).
That failover was built and deleted (2026-11-26): on the 100 ordinary dev tasks,
perfect and `prep` perception, every flight was the same with it on or off
(38 failovers in 32 flights, mostly while exploring or with one relation,
where there is no other branch). The timeouts stay as the `llm` planner's
re-plan triggers and as the bound on a search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onboard.agent.agent_state import AgentState, apply_update
from onboard.agent.geometry import norm


def _index_of(state: AgentState, strategy: str) -> int | None:
    plan = state.dynamic.plan
    return next((i for i, g in enumerate(plan.sub_goals) if g.strategy == strategy), None) if plan else None


def alternatives(state: AgentState) -> list[np.ndarray]:
    """The branch aims in order of preference (see the module docstring), one per place."""
    s = state.static
    mem, goal = s.memory, s.goal
    out: list[np.ndarray] = []
    target = mem.target()
    if target is not None:
        out.append(target)
    for r in goal.relations:
        known = [lp[0] for n in r.landmarks if (lp := mem.landmark(n)) is not None]
        if len(known) != len(r.landmarks):
            continue
        if r.kind == "between":
            out.append((known[0] + known[1]) / 2.0)
        elif r.kind == "offset":
            out.append(known[0] + r.offset())
        else:
            out.append(known[0] + r.unit() * s.config.ray_default_m)
    kept: list[np.ndarray] = []
    for p in out:
        if all(norm(p - q) > s.config.search_radius_m for q in kept):
            kept.append(np.asarray(p, dtype=float))
    return kept


def _untried(state: AgentState, failed: list[np.ndarray]) -> np.ndarray | None:
    radius = state.static.config.search_radius_m
    return next((a for a in alternatives(state) if all(norm(a - f) > radius for f in failed)), None)


def aim(state: AgentState) -> np.ndarray | None:
    """Where the navigate and search experts head: the target, or the first branch aim not failed yet."""
    d, s = state.dynamic, state.static
    target = s.memory.target()
    if s.memory.goal_fix is not None or not d.failed_aims:
        return target
    nxt = _untried(state, d.failed_aims)
    return target if nxt is None else nxt


def _due(state: AgentState, strategy: str) -> str:
    """Why the current branch fails now ("" if it does not)."""
    d, c = state.dynamic, state.static.config
    if c.use_search_timeout:
        if strategy == "search" and c.search_timeout > 0 and d.timestep - d.branch_since >= c.search_timeout:
            return "search_timeout"
        if strategy == "navigate" and c.navigate_timeout > 0 and d.timestep - d.branch_best_at >= c.navigate_timeout:
            return "navigate_timeout"
    return ""


def _progress(state: AgentState) -> dict[str, Any]:
    """The branch's closest approach to its aim so far: navigate's timeout counts the steps since it improved."""
    d, s = state.dynamic, state.static
    target = aim(state)
    if target is None:
        return {"branch_best_at": d.timestep}  # exploring: nothing to time out against
    dist = norm(target - d.position)
    if dist < d.branch_best_m - s.config.min_progress_m:
        return {"branch_best_m": dist, "branch_best_at": d.timestep}
    return {}


def check(state: AgentState) -> dict[str, Any]:
    """At the subtask router: start counting a new branch, or fail the current one and pick the next.

    Returns the update (possibly empty). Called on every dispatch of a step; a
    failed branch restarts the count, so a second dispatch in the same step does
    not fail it again.
    """
    d, s = state.dynamic, state.static
    key = (d.plan_version, d.current_task_index)
    if d.branch_key != key:
        return {"branch_key": key, "branch_since": d.timestep, "branch_best_at": d.timestep,
                "branch_best_m": float("inf")}
    if s.memory.goal_fix is not None or d.plan is None:
        return {}
    strategy = d.plan.sub_goals[d.current_task_index].strategy
    if strategy == "locate":
        return {}
    progress = _progress(state)
    if progress:
        apply_update(state, progress)
    why = _due(state, strategy)
    if not why:
        return progress
    current = aim(state)
    update: dict[str, Any] = {"branch_since": d.timestep, "branch_best_at": d.timestep,
                              "branch_best_m": float("inf"),
                              "replan_triggers": d.replan_triggers + [why]}
    event: dict[str, Any] = {"step": d.timestep, "why": why, "from": strategy}
    if current is None:  # exploring: no aim to give up, only the count restarts
        update["branch_events"] = d.branch_events + [{**event, "to": strategy, "aim": None}]
        return update
    failed = d.failed_aims + [current]
    nxt = _untried(state, failed)
    if nxt is not None:
        near = norm(nxt - d.position) <= s.config.search_radius_m
        to = "search" if near and _index_of(state, "search") is not None else "navigate"
        update["failed_aims"] = failed
    else:  # every aim tried: a new round from the best estimate, in the sub-goal it is in
        to, nxt = strategy, s.memory.target()
        update["failed_aims"] = []
    index = _index_of(state, to)
    if index is None:
        index = d.current_task_index
        to = strategy
    update.update(current_task_index=index, branch_key=(d.plan_version, index),
                  search_anchor=None if nxt is None or to != "search" else np.asarray(nxt, dtype=float).copy())
    update["branch_events"] = d.branch_events + [{**event, "to": to, "aim": None if nxt is None else
                                                  [round(float(v), 1) for v in nxt]}]
    return update

"""The navigate, search and locate experts of the geometric backend.

Each expert is a plain function `state -> update`. It either chooses this
step's action (and says whether its sub-goal is done: `next_subtask`), or
hands the step to another sub-goal without moving (`current_task_index`
changed, `action` None) so the subtask router dispatches again.

* navigate: head for the working-memory target; done when the estimate is
  within the search radius (hand to search) or the goal's name was read
  (hand to locate). With no estimate yet it explores (see `explore_target`),
  and where the vehicle offers it, climbs over the roofs and explores up
  there while the described landmarks stay unseen (`looks.look_up_altitude`),
  coming down to cruise to read names (`looks.come_down_due`). Where to explore
  is `exploring.py`.
* search: frontier search around the estimate (closeness weighted more than
  route length: a spiral of unflown streets nearest the estimate), restricted
  to the frontier waypoints that show part of the described region not yet
  looked at (`WorkingMemory.unseen_region`, `geometric_planner.lookouts`): "500 m
  east of X" is an arc across the compass sector, so the search sweeps the arc
  instead of ringing its middle. Once all of it was looked at, the plain spiral
  again. Back to navigate when the estimate jumps away (re-evaluated on new
  sightings). Where the vehicle reads names with its own camera (it offers a
  look-low), each search waypoint first gets a look-around from low over the
  street, where shop lettering is readable (`looks.look_low_altitude`).
* locate: the goal's name was read: TARGET_LOCKED within the arrival
  distance (arrive), else fly towards the read position; SEARCHING_VICINITY
  hands back to search if the name was never read.

With an onboard map (`StaticState.corridors`) every move is costed by the
shortest corridor route on from where it ends (`corridor_map`), and the
destinations come from the map (`map_destinations`): the described region
is known before take-off, so navigate already heads for its near edge and
the sweep goes on from there; locate may arrive at the map waypoint nearest
the read goal when no corridor passes closer (`_goal_in_reach`). Without a map
locate does the same on the agent's own street map: over known links it flies
the known waypoints not flown yet within twice the read range of the read goal,
then arrives at the known waypoint nearest it (`_towards_read_goal`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from onboard.agent import branches
from onboard.agent.agent_state import AgentState
from onboard.agent.exploring import between_end_missing, centroid_spent, explore_target
from onboard.agent.geometric_planner import choose_move, lookouts
from onboard.agent.geometry import norm
from onboard.agent.goal_confidence import goal_confidence
from onboard.agent.looks import come_down, come_down_due, look_low, look_up
from onboard.agent.place_memory import visit_counts
from onboard.agent.strategy_control import STUCK_WINDOW, would_ababa
from onboard.inference.contracts import LocateOutput, NavigationDecisionOutput, SearchOutput
from onboard.vocab.observation import AgentAction


def _avoid(state: AgentState) -> frozenset[int]:
    """Waypoints not to fly to now: active reflections' lists, and the loop hints' way back."""
    d, s = state.dynamic, state.static
    avoid: set[int] = set()
    if s.config.use_reflection:
        for r in d.lessons:
            if r.active(d.timestep):
                avoid |= r.avoid
    if s.anchors is not None:
        if "pattern:ABABA" in d.hints and len(d.trail) >= 2:
            avoid.add(d.trail[-2])
        avoid |= {m.node for m in d.observation.moves if would_ababa(d.trail, m.node)}
        if "pattern:STUCK" in d.hints:
            avoid |= set(d.trail[-STUCK_WINDOW:])
    return frozenset(avoid)


def map_destinations(state: AgentState, target: np.ndarray, searching: bool) -> tuple[list[int] | None, float, bool]:
    """With an onboard map: the map waypoints a route may end at, the weight of their distance to `target`,
    and whether they are lookouts over ground not looked at yet.

    Lookouts: the unflown waypoints within reading range of the part of the
    described region not looked at yet (`CorridorMap.lookouts`). With a map the
    region is known before take-off, so navigate already heads for its nearest
    lookouts (`map_sweep_closeness` weighs how much nearer the estimate they
    should be) and the sweep starts at the region's near edge rather than at
    its middle. Where no region can be said (a "between" relation) the search
    sweeps the ground within `map_search_disc_m` of the estimate, nearest the
    estimate first (`search_closeness_weight`). Nothing left to look at, or a
    remembered goal: navigate heads for the waypoints within the search radius
    of the target, search for every unflown waypoint, nearest the estimate first.
    """
    s = state.static
    c, cm, mem = s.config, s.corridors, s.memory
    if mem.prior is None:
        floor = c.arrive_within_m
        unseen = mem.unseen_region(floor)
        if unseen is not None and len(unseen):
            worth = cm.lookouts(unseen, mem.read_range(floor))
            if worth:
                return sorted(worth), c.map_sweep_closeness, True
        elif unseen is None and searching:
            worth = cm.lookouts(mem.unseen_around(target, c.map_search_disc_m, floor), mem.read_range(floor))
            if worth:
                return sorted(worth), c.search_closeness_weight, True
    if not searching:
        return (cm.near(target, c.search_radius_m) or None), 1.0, False
    return cm.unvisited(), c.search_closeness_weight, False


def move_towards(state: AgentState, target: np.ndarray, closeness: float = 1.0,
                 worth_seeing: frozenset[int] | None = None,
                 map_dests: tuple[list[int] | None, float] | None = None) -> tuple[AgentAction, str]:
    """The move the planner chooses towards `target`; with an onboard map, along its corridors.

    `map_dests` (destinations and weight, see `map_destinations`; default: navigate's)
    is used only with a map; without one `worth_seeing` restricts the frontier
    waypoints a search may end at.
    """
    d, s = state.dynamic, state.static
    visits = visit_counts(s.anchors) if s.anchors is not None else None
    previous = d.trail[-2] if len(d.trail) >= 2 else None
    to_go = None
    if s.corridors is not None:
        dests, weight = map_dests or map_destinations(state, target, searching=False)[:2]
        to_go = partial(s.corridors.rest_of_route, s.corridors.cost_to_go(target, weight, dests))
    choice = choose_move(d.here, d.observation.moves, target, s.street_map, s.config, visits=visits,
                         avoid=_avoid(state), previous=previous, closeness=closeness, worth_seeing=worth_seeing,
                         to_go=to_go)
    return AgentAction.move(choice.move.node, choice.reason), choice.reason


def _index_of(state: AgentState, strategy: str) -> int | None:
    plan = state.dynamic.plan
    return next((i for i, g in enumerate(plan.sub_goals) if g.strategy == strategy), None) if plan else None


def _nearest_known(state: AgentState, point: np.ndarray) -> int | None:
    """The waypoint of the agent's own street map nearest `point` (flown or seen on offer), None if none."""
    sm = state.static.street_map
    return min(sm.xy, key=lambda n: norm(sm.xy[n] - point)) if sm.xy else None


def _goal_in_reach(state: AgentState) -> tuple[bool, float | None]:
    """Whether the goal's name was read and the drone is close enough to declare arrival, and how far it is.

    Within `arrive_within_m`; also, when the goal was read within the range names
    were read from on this flight (`WorkingMemory.read_range`), at the waypoint
    nearest the read position: with an onboard map the map's (no corridor gets
    closer); without one the nearest its own street map knows, once it has flown
    every known waypoint within that range of the goal (one not flown may have
    streets beyond it that pass closer; arriving at the first read cost three
    public tasks). A goal in the middle of a block can be 45-50 m from every
    corridor; without this the drone flew off to unflown streets ever further
    away looking for a nearer one (ordinary dev d096: read 49 m away, ended 411 m away).
    """
    d, s = state.dynamic, state.static
    if s.memory.goal_fix is None:
        return False, None
    dist = norm(s.memory.goal_fix - d.position)
    if dist <= s.config.arrive_within_m:
        return True, dist
    if dist > s.memory.read_range(s.config.arrive_within_m):
        return False, dist
    cm = s.corridors
    if cm is not None:
        here = cm.snap(d.position)
        return here is not None and here == cm.nearest(s.memory.goal_fix), dist
    fix = s.memory.goal_fix
    return d.here is not None and d.here == _nearest_known(state, fix) and not _unflown_near(state, fix), dist


def _unflown_near(state: AgentState, fix: np.ndarray) -> list[int]:
    """Known waypoints not flown yet within twice this flight's read range of the read goal, nearest it first.

    Twice: from each of them a sign within read range of the read goal can be read, a
    second sign of a like name among them (public t023: "Red shoe" read first, 130 m
    from the goal "Red Shoe").
    """
    sm, mem = state.static.street_map, state.static.memory
    reach = 2.0 * mem.read_range(state.static.config.arrive_within_m)
    near = [n for n in sm.frontier() if norm(sm.xy[n] - fix) <= reach]
    return sorted(near, key=lambda n: norm(sm.xy[n] - fix))


def navigate(state: AgentState) -> dict[str, Any]:
    d, s = state.dynamic, state.static
    locate_i = _index_of(state, "locate")
    if s.memory.goal_fix is not None:
        if locate_i is not None:
            return {"current_task_index": locate_i, "action": None, "strategy": "navigate"}
        reach, dist = _goal_in_reach(state)
        if reach:
            return {"action": AgentAction.arrive(f"goal name read {dist:.0f} m away"), "strategy": "navigate"}
    if come_down_due(state):
        return come_down(state, "navigate", "a described landmark placed and the goal estimate near", navigate)
    target = branches.aim(state)
    if target is not None and s.memory.goal_fix is None and between_end_missing(state):
        target = None  # the known end is no place to fly to: explore for the other one (see between_end_missing)
    if target is not None and s.memory.goal_fix is None and norm(target - d.position) <= s.config.search_radius_m:
        search_i = _index_of(state, "search")
        if search_i is not None:
            return {"current_task_index": search_i, "action": None, "search_anchor": target.copy(),
                    "strategy": "navigate"}
    looking = look_up(state, "navigate")
    if looking is not None and not s.config.look_up_on_the_way:
        return looking
    spent = {}
    if target is None:
        spent = {"centroid_spent": True} if centroid_spent(state) else {}
        target, why = explore_target(state)
        action, reason = move_towards(state, target)
        reason = f"{why}; {reason}"
    else:
        action, reason = move_towards(state, target)
    if looking is not None:  # climbing on the way there (one sloped leg)
        up = looking["action"]
        return {**spent, **looking,
                "action": AgentAction.look_up(up.altitude_m, f"{up.reason}; on the way {reason}"[:200], action.node)}
    decision = NavigationDecisionOutput("forward", reason[:120], "continue_navigate", 1.0)
    return {**spent, "action": AgentAction.move(action.node, reason), "strategy": "navigate",
            "subtask_context": {"goal": d.plan.sub_goals[d.current_task_index].goal, "CoT_summary": decision.reason,
                                "movement": action.node}}


def search(state: AgentState) -> dict[str, Any]:
    d, s = state.dynamic, state.static
    if s.memory.goal_fix is not None:
        locate_i = _index_of(state, "locate")
        return {"current_task_index": locate_i if locate_i is not None else d.current_task_index + 1,
                "action": None, "strategy": "search"}
    if d.up_m is not None and not between_end_missing(state):
        return come_down(state, "search", "searching for the goal's name", search)
    target = branches.aim(state)
    if target is None:  # nothing to search around (a false landmark was rejected): navigate again
        return {"current_task_index": _index_of(state, "navigate") or 0, "action": None, "strategy": "search"}
    anchor = d.search_anchor if d.search_anchor is not None else target
    if norm(target - anchor) > s.config.replan_jump_m:
        return {"current_task_index": _index_of(state, "navigate") or 0, "action": None,
                "search_anchor": None, "strategy": "search"}
    looking = look_up(state, "search") or look_low(state, "search")
    if looking is not None:
        return looking
    worth, map_dests, sweeping = None, None, False
    if s.corridors is not None:
        dests, weight, sweeping = map_destinations(state, target, searching=True)
        map_dests = (dests, weight)
    elif s.memory.prior is None:  # a remembered goal is searched around as a point
        floor = s.config.arrive_within_m
        unseen = s.memory.unseen_region(floor)
        if unseen is not None and s.memory.extend_ray(floor, s.config.ray_extend_unseen_share):
            target, unseen = branches.aim(state), s.memory.unseen_region(floor)  # further along the ray
        if unseen is not None:
            worth = lookouts(s.street_map, unseen, s.memory.read_range(floor)) or None
        sweeping = worth is not None
    action, reason = move_towards(state, target, closeness=s.config.search_closeness_weight, worth_seeing=worth,
                                  map_dests=map_dests)
    how = "sweeping the unseen part of the described area" if sweeping else "searching around the estimate"
    why = f"{how}: {reason}"
    out = SearchOutput("forward", why[:120], "continue_search", 1.0)
    return {"action": AgentAction.move(action.node, out.reason), "strategy": "search",
            "subtask_context": {"goal": d.plan.sub_goals[d.current_task_index].goal, "CoT_summary": out.reason,
                                "movement": action.node}}


def _towards_read_goal(state: AgentState, fix: np.ndarray) -> tuple[AgentAction, str] | None:
    """Without a map: the first hop over known links to the known waypoint nearest the read goal.

    The planner's own costing heads for unflown waypoints (a frontier search);
    once the goal's position is read, the way there is over streets already
    known: first to the known waypoints not flown yet around it (see
    `_goal_in_reach`), nearest it first, then to the nearest known. None with a map (its
    corridors route), or when there is nowhere to go or no known way there.
    """
    d, s = state.dynamic, state.static
    if s.corridors is not None or d.here is None:
        return None
    # the streets not flown yet around it first (a nearer corridor or a like-named sign), then the nearest
    best = next(iter(_unflown_near(state, fix)), None)
    if best is None:
        best = _nearest_known(state, fix)
    if best is None or best == d.here:
        return None
    _, first = s.street_map.routes_from(d.here)
    hop = first.get(best)
    if hop is None or hop not in {m.node for m in d.observation.moves}:
        return None
    return AgentAction.move(hop, ""), f"to the known waypoint nearest the read goal ({norm(s.street_map.xy[best] - fix):.0f} m from it)"


def locate(state: AgentState) -> dict[str, Any]:
    d, s = state.dynamic, state.static
    if d.up_m is not None:
        return come_down(state, "locate", "the goal's name read", locate)
    reach, dist = _goal_in_reach(state)
    if dist is None:
        out = LocateOutput.fallback()  # SEARCHING_VICINITY: the name was never read
        search_i = _index_of(state, "search")
        return {"current_task_index": search_i if search_i is not None else 0, "action": None,
                "strategy": "locate", "subtask_context": {**d.subtask_context, "locate": out.status}}
    fix = s.memory.goal_fix
    conf = goal_confidence(state)  # the VLM's confirm answers weighed in (none without a VLM)
    seen = conf.text()
    doubt = reach and conf.doubted and dist > s.config.arrive_within_m
    if reach and not doubt:
        out = LocateOutput("TARGET_LOCKED", [float(fix[0]), float(fix[1])])
        return {"action": AgentAction.arrive(f"{out.status}: goal name read {dist:.0f} m away{seen and '; ' + seen}"),
                "strategy": "locate",
                "subtask_context": {**d.subtask_context, "locate": out.status, **({"goal_seen": seen} if seen else {})}}
    action, reason = _towards_read_goal(state, fix) or move_towards(state, fix)
    if doubt:  # read from afar and the camera says no: closer, and another look (goal_confidence)
        reason = f"{seen}: another look; {reason}"
    return {"action": AgentAction.move(action.node, f"goal read {dist:.0f} m away; {reason}"), "strategy": "locate",
            "subtask_context": {**d.subtask_context, "locate": "SEARCHING_VICINITY"},
            **({"confirm_again": True} if doubt else {})}


EXPERTS = {"navigate": navigate, "search": search, "locate": locate}

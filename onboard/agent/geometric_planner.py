"""The deterministic `geometric` planner backend: the long-term plan and the choice of move.

Long-term plan (what a planner model would produce as `PlanOutput`):
navigate towards the target estimate -> search around it -> locate the goal
(read its name close by and declare arrival). Without the plan (ablation
`geometric-no-plan`) there is one navigate sub-goal for the whole task.

Short-term choice among the moves on offer: each move is costed by the best
continuation it opens in the agent's own street map (route over known links
to a waypoint not yet flown + straight line from there to the target,
weighted by `closeness`), plus how far its bearing is from the bearing to the
target, plus revisits, plus the waypoints that active reflections or the
ABABA hint say to avoid. Without place/anchor memory (ablation) the agent
forgets where it has been: a move costs its length plus the straight line
from its end to the target, and a U-turn is discouraged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from onboard.agent.current_state import compass
from onboard.agent.geometry import bearing_of, norm, offset
from onboard.map.compass import angle_diff
from onboard.agent.goal_description import GoalDescription
from onboard.vocab.observation import NeighbourMove
from onboard.agent.settings import AgentConfig
from onboard.agent.street_map import StreetMap
from onboard.inference.contracts import PlanOutput, SubGoal

UTURN_PENALTY_M = 80.0
DEAD_END_M = 10_000.0


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_relations(goal: GoalDescription) -> str:
    """A short phrase of where the description puts the goal ("300 m NE of Kiasma")."""
    parts = []
    for r in goal.relations:
        if r.kind == "between":
            parts.append(f"between {r.landmarks[0]} and {r.landmarks[1]}")
        else:
            d = f"{r.distance:.0f} m " if r.distance else ""
            parts.append(f"{d}{compass(45.0 * (r.direction or 0))} of {r.landmarks[0]}")
    return "; ".join(parts) or "unknown area"


def make_plan(goal: GoalDescription, use_plan: bool = True, lessons: list[str] | None = None,
              search: bool = True) -> PlanOutput:
    """The geometric long-term plan; `lessons` (retrieved past plans' notes) are cited in the reason;
    `search`: with the search sub-goal (the `use_search_subgoal` ablation)."""
    where = describe_relations(goal)
    if not use_plan:
        return PlanOutput([SubGoal(_short(f"reach the goal: {where}"), "navigate", "goal name read within reach")],
                          "single reactive sub-goal (no long-term plan)")
    reason = "estimate from landmarks; words are rough: search around it, read the name"
    if lessons:
        reason = f"past lesson: {_short(lessons[0], 70)}; {reason}"
    return PlanOutput([
        SubGoal(_short(f"fly to the area {where}"), "navigate", "target estimate within search radius"),
        *([SubGoal("search the streets around the estimate", "search", "goal name readable")] if search else []),
        SubGoal("read the goal's name close by and arrive", "locate", "goal within arrival distance"),
    ], _short(reason, 120))


@dataclass(frozen=True)
class MoveChoice:
    move: NeighbourMove
    cost: float
    reason: str


def choose_move(here: int, moves: tuple[NeighbourMove, ...], target: np.ndarray, street_map: StreetMap,
                cfg: AgentConfig, *, visits: dict[int, int] | None, avoid: frozenset[int] = frozenset(),
                previous: int | None = None, closeness: float = 1.0,
                worth_seeing: frozenset[int] | None = None,
                to_go: Callable[[np.ndarray], float | None] | None = None) -> MoveChoice:
    """The cheapest move towards `target` (own frame); `visits` None = no place memory.

    `worth_seeing` (a search's lookouts): only these frontier waypoints are
    destinations; the route to them may pass any known waypoint.
    `to_go` (with an onboard map, `CorridorMap.rest_of_route`): the cost of the
    rest of the way from a move's end point; a move it knows costs its length
    plus that (plus revisits and avoid lists: the map route already knows the
    way, so no bearing term), a move it does not know (None) is costed as without a map.
    """
    pos = street_map.xy[here]
    to_target = target - pos
    brg = bearing_of(to_target)
    if visits is not None:
        dist, first = street_map.routes_from(here)
        best: dict[int, float] = {}
        for f in street_map.frontier():
            if f in first and (worth_seeing is None or f in worth_seeing):
                c = dist[f] + closeness * norm(street_map.xy[f] - target)
                if c < best.get(first[f], float("inf")):
                    best[first[f]] = c
    costs = []
    for m in moves:
        end = pos + offset(m.bearing, m.length)
        rest = None if to_go is None else to_go(end)
        if rest is not None:
            c = m.length + rest
            if visits is not None:
                c += cfg.revisit_penalty_m * visits.get(m.node, 0)
            elif m.node == previous and len(moves) > 1:
                c += UTURN_PENALTY_M
            if m.node in avoid:
                c += cfg.avoid_penalty_m
            costs.append(c)
            continue
        if visits is not None:
            # no unflown waypoint beyond this move: a dead end as far as the map knows
            c = best.get(m.node, m.length + closeness * norm(end - target) + (DEAD_END_M if best else 0.0))
            c += cfg.revisit_penalty_m * visits.get(m.node, 0)
        else:
            c = m.length + closeness * norm(end - target)
            if m.node == previous and len(moves) > 1:
                c += UTURN_PENALTY_M
        if norm(to_target) > 1.0:
            c += cfg.bearing_weight_m_per_deg * angle_diff(m.bearing, brg)
        if m.node in avoid:
            c += cfg.avoid_penalty_m
        costs.append(c)
    i = int(np.argmin(costs))
    m = moves[i]
    why = f"target {norm(to_target):.0f} m {compass(brg)}; {compass(m.bearing)} is the best way on"
    if m.node in avoid:
        why += " (despite a reflection: no other way)"
    return MoveChoice(m, float(costs[i]), why)


def lookouts(street_map: StreetMap, unseen: np.ndarray, read_range_m: float) -> frozenset[int]:
    """Frontier waypoints within reading range of some unseen point of the goal's region.

    Only from these can a search read a name it has not had the chance to read:
    the other frontier waypoints show ground already looked at, or ground the
    description rules out (nearer or further than the stated distance, outside
    the compass sector).
    """
    front = street_map.frontier()
    if not len(unseen) or not front:
        return frozenset()
    xy = np.array([street_map.xy[n] for n in front])
    d2 = (xy[:, None, 0] - unseen[None, :, 0]) ** 2 + (xy[:, None, 1] - unseen[None, :, 1]) ** 2
    return frozenset(n for n, ok in zip(front, np.any(d2 <= read_range_m ** 2, axis=1)) if ok)

"""The navigate and search experts retrieve their own collection and the move chooser uses what they find.

000 §4.1-4.2: each expert queries its atomic collection (navigate:
`navigate_experience_memory`, search: `search_and_locate_memory`) with the
step's full `current_state` string. Here that happens every
`agent.retrieval_interval` steps and whenever the sub-goal changes, with at most
`agent.max_key_experiences` hits at cosine >= `agent.expert_retrieval_similarity`
(each outcome partition searched on its own, the best of both kept).

The current_state names the landmarks in view with their distances and
bearings, so a hit that similar says "a past flight stood here". What it
recorded (the ground's `refined_action`, `ground_station.flight_analysis`):

* a SUCCESS experience (001 keeps only these as atomic lessons to repeat): the
  move that brought the goal closer (`prefer`, "... bearing 90") - moves along
  it cost `expert_move_bonus_m` less;
* a FAILURE experience (000 keeps failures for reflection): the move after which
  the distance grew the most (`avoid`) - moves along it cost that much more.

A hint holds while the drone is within `search_radius_m` of where it was
retrieved (the place it matched); "along" is within 45 degrees. A record whose
action names no bearing (older or hand-written ones) is counted as a hit and
steers nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from contract.records import NAVIGATE_EXPERIENCE, SEARCH_AND_LOCATE
from onboard.agent.agent_state import AgentState
from onboard.agent.frame_log import note_retrieval
from onboard.agent.geometry import norm
from onboard.agent.observation import NeighbourMove
from onboard.map.compass import angle_diff

ALONG_DEG = 45.0
COLLECTION = {"navigate": NAVIGATE_EXPERIENCE, "search": SEARCH_AND_LOCATE}
_BEARING = re.compile(r"bearing\s+(-?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class ExpertHint:
    uid: str
    collection: str
    success: bool
    similarity: float
    bearing: float | None  # success: the move to repeat; failure: the move to avoid (None: none named)
    at: tuple[float, float]  # where it was retrieved (own frame): the place its state matched


def action_bearing(action: Any) -> float | None:
    """The compass bearing an action string names ("move to waypoint 12 bearing 90"), if any."""
    if isinstance(action, (int, float)):
        return float(action) % 360.0
    m = _BEARING.search(action) if isinstance(action, str) else None
    return None if m is None else float(m.group(1)) % 360.0


def hint_from(hit: Any, position: np.ndarray) -> ExpertHint:
    rec = hit.record
    success = getattr(rec, "is_success", "") == "success"
    try:
        refined = json.loads(rec.refined_action)
    except (TypeError, ValueError):
        refined = {}
    if not isinstance(refined, dict):
        refined = {}
    bearing = action_bearing(refined.get("prefer") if success else refined.get("avoid"))
    if bearing is None:
        bearing = action_bearing(refined.get("bearing"))
    return ExpertHint(hit.uid, hit.collection, success, round(float(hit.similarity), 3), bearing,
                      (float(position[0]), float(position[1])))


def due(state: AgentState) -> bool:
    d, s = state.dynamic, state.static
    if not s.config.use_expert_retrieval or s.experience_store is None or not d.current_state:
        return False
    every = s.config.retrieval_interval
    return (d.expert_asked_at < 0 or d.expert_key != (d.plan_version, d.current_task_index)
            or (every > 0 and d.timestep - d.expert_asked_at >= every))


def refresh(state: AgentState, strategy: str) -> dict[str, Any]:
    """Retrieve for `strategy`'s expert when due: the update (hints in force, FrameLog hits); {} when not due."""
    if strategy not in COLLECTION or not due(state):
        return {}
    d, s = state.dynamic, state.static
    collection = COLLECTION[strategy]
    k, sim = max(1, s.config.max_key_experiences), s.config.expert_retrieval_similarity
    # One search per outcome partition, so failures never crowd out the successes to repeat (and back).
    hits = [h for outcome in ("success", "failure")
            for h in s.experience_store.search(d.current_state, collection, k=k, outcome=outcome, threshold=sim)]
    hits = sorted(hits, key=lambda h: -h.similarity)[:k]
    hints = [hint_from(h, d.position) for h in hits]
    return {"expert_hints": hints, "expert_asked_at": d.timestep,
            "expert_key": (d.plan_version, d.current_task_index),
            # no mode of its own: the FrameLog's mode names the plan prompt's retrieval; the hits say this one
            "retrieval": note_retrieval(d.retrieval, "", {collection: len(hints)})}


def bias(state: AgentState, hints: list[ExpertHint]) -> Callable[[NeighbourMove], float] | None:
    """Extra cost of each move from the hints in force here; None when none steers."""
    d, s = state.dynamic, state.static
    here = [h for h in hints if h.bearing is not None
            and norm(np.array(h.at) - d.position) <= s.config.search_radius_m]
    if not here:
        return None
    amount = s.config.expert_move_bonus_m

    def cost(move: NeighbourMove) -> float:
        c = 0.0
        for h in here:
            if angle_diff(move.bearing, h.bearing) <= ALONG_DEG:
                c += -amount if h.success else amount
        return c

    return cost

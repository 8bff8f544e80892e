"""Where the navigate expert explores while it has no estimate of the goal to head for.

Towards the centroid of the landmarks seen from the streets (until a look-up near
it showed none of the description's: `centroid_spent`), towards the missing end
of a "between" when one end is placed (`between_end_missing`), else out along the
frontier of the streets flown (`frontier_target`). The experts (`experts.py`) and
the look-up rules (`looks.py`) ask here.
"""

from __future__ import annotations

import numpy as np

from onboard.agent.agent_state import AgentState
from onboard.agent.geometry import norm, offset


def explore_target(state: AgentState) -> tuple[np.ndarray, str]:
    """Where to look for the described landmarks before any was seen.

    After look-ups in vain, towards the edge of what they covered (`frontier_target`); else:

    Prominent landmarks (the ones descriptions use) cluster in the centre, so
    head for the centroid of every landmark recognised so far from the streets
    (at cruise altitude: a look-up's wide view of everything within range says
    where the drone has looked, not where prominent landmarks cluster; counting
    them scored lower on the ordinary dev tasks), until that cluster is spent
    (`centroid_spent`). Once there,
    fly outward from the take-off point: the views from the take-off area
    showed no described landmark, so new views lie away from it. (The earlier
    fallback, "along the last heading", turned back towards the centroid every
    other step and circled the take-off area; outward exploration scored better
    on the public tasks: docs/BENCHMARKS.md, "Why the defaults".) Before
    the first move there is no outward direction: fly north-ish along the
    first street.
    """
    d, s = state.dynamic, state.static
    everything = s.memory.landmark_map()
    frontier = frontier_target(state, everything)
    if frontier is not None:
        return frontier, "exploring towards the landmark farthest from where the drone looked over the roofs"
    c = street_centroid(state)
    if c is not None and not d.centroid_spent and norm(c - d.position) > s.config.search_radius_m:
        return c, "exploring towards the landmarks seen so far"
    if norm(d.position) > 1.0:
        return d.position + d.position / norm(d.position) * s.config.explore_reach_m, "exploring outward from take-off"
    heading = 0.0
    if len(d.trajectory_history) and d.trajectory_history[-1].movement.get("bearing") is not None:
        heading = float(d.trajectory_history[-1].movement["bearing"])
    if d.place_intent is not None:  # the llm planner's heading (PlaceAnchorPlan angle): a bias, not a move
        return d.position + offset(d.place_intent.bearing, s.config.explore_reach_m), "exploring the planner's heading"
    return d.position + offset(heading, s.config.explore_reach_m), "exploring along the heading"


def street_centroid(state: AgentState) -> np.ndarray | None:
    """The centroid of the landmarks seen from the streets so far (fused positions); None before any."""
    d, mem = state.dynamic, state.static.memory
    seen = [p for n, p in mem.landmark_map().items() if n in d.seen_at_cruise]
    return np.mean(np.array(seen), axis=0) if seen else None


def centroid_spent(state: AgentState) -> bool:
    """Whether the street sightings' centroid is spent as a place to explore towards: reached (within the
    search radius) after a look-up within `look_up_spacing_m` of here showed none of the described landmarks.

    The centroid follows the drone: each street it flies shows landmarks round it, so once there,
    chasing the new centroid circled one cluster for the rest of the mission (ordinary dev d049).
    A cluster the drone has looked over from above without the landmark is not where it is. Spent,
    the explorer goes on outward (or to the frontier). Decided on the ordinary dev split with the
    public set as the floor, as were the alternatives (spent after a number of steps instead):
    docs/BENCHMARKS.md, "Why the defaults".
    """
    d, c = state.dynamic, state.static.config
    if d.centroid_spent:
        return True
    centre = street_centroid(state)
    return (centre is not None and norm(centre - d.position) <= c.search_radius_m
            and any(norm(d.position - v) <= c.look_up_spacing_m for v in d.looked_up_from))


def between_end_missing(state: AgentState) -> bool:
    """Whether a "between" relation has one end placed and not the other, and nothing else bounds the goal.

    One end of "between X and Y" says only that the goal lies towards the other end, however far
    that is: the point estimate is the known end, no place to spiral round or search around, so
    navigate explores for the missing end (as before any landmark was seen) and looks for it over
    the roofs. Decided on the ordinary dev split under `prep` (docs/BENCHMARKS.md, the "between"
    change, which lost on the held-out test split and stays). A relation with a distance whose
    landmark is placed says where the goal is; then not. (The same rule for a ray without a
    distance, one of two placed, cost the public set more than it gained on dev: not taken.)
    """
    mem, goal = state.static.memory, state.static.goal
    placed = [r for r in goal.relations if all(mem.placed(n) for n in r.landmarks)]
    if any(r.kind == "offset" for r in placed):
        return False
    return any(r.kind == "between" and any(mem.placed(n) for n in r.landmarks) and r not in placed
               for r in goal.relations)


def frontier_target(state: AgentState, landmarks: dict[str, np.ndarray]) -> np.ndarray | None:
    """After `explore_frontier_after_look_ups` look-ups in vain, the landmark farthest from every place looked from.

    A look-up shows every landmark within view range (500 m here) over the roofs; when several
    showed none of the description's, the landmark it lacks lies beyond what they covered, and the
    landmarks seen farthest from them mark where the covered ground ends: heading there, the next
    look-up covers new ground. Earlier (after one look-up) cost the public tasks, whose landmarks
    cluster in the centre where the streets' own sightings lead (figures: docs/BENCHMARKS.md).
    None before that, when every landmark seen is within `look_up_spacing_m` of a place looked from
    (take-off counts), or when the switch is 0.
    """
    d, c = state.dynamic, state.static.config
    after = c.explore_frontier_after_look_ups
    if after <= 0 or len(d.looked_up_from) < after or not landmarks:
        return None
    views = [np.zeros(2), *d.looked_up_from]
    def reach(p: np.ndarray) -> float:
        return min(norm(p - v) for v in views)
    far = max(landmarks.values(), key=reach)
    return far if reach(far) > c.look_up_spacing_m else None

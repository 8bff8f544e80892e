"""Looks from another altitude, as the experts decide them: look up, come down, look low.

Over the roofs the drone sights landmarks the blocks hide but reads no name, so
the navigate expert climbs while the described landmarks stay unseen
(`look_up_altitude`) and comes back down once it has something to head for
(`come_down_due`), on the way where it moves on (`come_down`); where the vehicle
reads names with its own camera, the search expert looks low over each street
first (`look_low_altitude`). The vehicle's own rules on what it flies are in
`onboard/mission/look_offers.py`; these only decide what to ask for.
"""

from __future__ import annotations

from typing import Any, Callable

from onboard.agent import branches
from onboard.agent.agent_state import AgentState
from onboard.agent.exploring import between_end_missing
from onboard.agent.geometry import norm
from onboard.vocab.observation import AgentAction


def come_down_due(state: AgentState) -> bool:
    """Whether the drone, flying over the roofs, should come back down to cruise here.

    Up there it sights landmarks over the blocks but reads no name, so it stays
    up only while it explores: it comes down once a landmark of the
    description is placed and the goal estimate is within `come_down_within_m`
    (or there is none to fly to), or the goal's name was read. Under `prep` the
    first fixes, from far off, are noisy: staying up until the estimate is near,
    re-sighting the landmark on the way, did better than coming down at once
    (docs/BENCHMARKS.md, "Why the defaults"). Search and locate always come down.
    """
    d, s = state.dynamic, state.static
    if d.up_m is None:
        return False
    if s.memory.goal_fix is not None:
        return True
    if look_up_altitude(state) is not None:  # half way up a climb in legs with a described landmark unplaced
        return False
    if not any(s.memory.placed(n) for n in s.goal.landmarks):
        return False
    target = branches.aim(state)
    return target is None or norm(target - d.position) <= s.config.come_down_within_m


def come_down(state: AgentState, strategy: str, why: str,
               expert: Callable[[AgentState], dict[str, Any]]) -> dict[str, Any]:
    """Back to cruise: on the way to the waypoint `expert` would fly to from cruise here (one leg of
    `vertical_legs`; the next step comes down the rest), or straight down.

    A goto to the next waypoint at cruise altitude flies one sloped leg, the
    hypotenuse, instead of the vertical leg and then the move (55 m down and
    an 80 m move: 97 m instead of 135). So the expert decides as if already
    down; its move becomes the descent, its hand-over to another expert is
    taken (that one comes down in turn), and anything else (an arrival, a
    look) waits for the next step after coming straight down here.
    """
    d = state.dynamic
    up = d.up_m
    d.up_m = None
    try:
        out = expert(state)
    finally:
        d.up_m = up
    action = out.get("action")
    if action is None:
        return out
    if action.kind == "move":
        to = None  # down to cruise, or by one leg of the look-up's height (`vertical_legs`) while more is left
        if d.cruise_m is not None:
            c, ceiling = state.static.config, d.observation.look_up_ceiling_m
            top = c.look_up_alt_m if ceiling is None else min(c.look_up_alt_m, ceiling)
            to = up - leg_m(state, max(top, up))
            to = to if to > d.cruise_m + 0.5 else None
        where = "to cruise" if to is None else f"to {to:.0f} m"
        return {**out, "action": AgentAction.come_down(f"down from {up:.0f} m {where}: {why}; on the way "
                                                       f"{action.reason}"[:200], action.node, to)}
    return {"action": AgentAction.come_down(f"back to cruise from {up:.0f} m: {why}"), "strategy": strategy}


def look_up_altitude(state: AgentState) -> float | None:
    """The altitude to look up from here, or None: not now.

    A look-up (climb at this waypoint, turn, and fly on up there until a
    come-down, `come_down_due`) shows landmarks the blocks hide at cruise
    altitude. It is worth its climb only while the description's landmarks
    are unseen: the agent looks up when none of them has a position (live fix
    or map), or only one end of a "between" has (`between_end_missing`), and
    the goal's name was not read, after `look_up_after_steps` steps (counted
    from take-off or the last look-up), at most `max_look_ups` times, never
    within `look_up_spacing_m` of a place looked from over the roofs before
    (every waypoint flown up there counts). Only where the observation offers
    it (names a ceiling); the altitude is `look_up_alt_m`, kept under that
    ceiling, and must be above the altitude the drone flies at.

    Flying on up there, rather than coming straight back down (the round trip
    of the earlier look-up), sees the landmarks from every waypoint for one
    climb (docs/BENCHMARKS.md, "Exploring over the roofs"). The altitude and
    the trigger: see `AgentConfig`.
    """
    d, s = state.dynamic, state.static
    c, obs = s.config, d.observation
    if not c.use_look_up or obs.look_up_ceiling_m is None:
        return None
    wanted = s.goal.landmarks
    if not wanted or s.memory.goal_fix is not None:
        return None
    top = min(c.look_up_alt_m, obs.look_up_ceiling_m)
    if d.up_m is not None:  # up there: only the rest of a climb flown in legs (`vertical_legs`)
        last = d.trajectory_history[-1].movement if d.trajectory_history else {}
        # the last leg flown (a refused one leaves the drone where it was: no asking again)
        climbing = last.get("kind") == "look_up" and abs(float(last["altitude_m"]) - d.up_m) <= 0.5
        # on up while any described landmark is unplaced: half way up shows less than the top (dev d059, a
        # ray: one end placed from 62 m, the other not, and the search swept the wrong side)
        if not climbing or d.cruise_m is None or not top > d.up_m + 0.5 or all(s.memory.placed(n) for n in wanted):
            return None
        return min(top, d.up_m + leg_m(state, top))
    if any(s.memory.placed(n) for n in wanted) and not between_end_missing(state):
        return None
    if d.look_ups >= c.max_look_ups:
        return None
    since = d.timestep - (d.looked_up_at_step if d.look_ups else 0)
    if since < c.look_up_after_steps:
        return None
    if any(norm(d.position - p) < c.look_up_spacing_m for p in d.looked_up_from):
        return None
    if obs.altitude_m is not None and not top > obs.altitude_m:
        return None
    cruise = obs.altitude_m if obs.altitude_m is not None else d.cruise_m
    if cruise is None or not c.look_up_on_the_way:
        return top
    return min(top, cruise + (top - cruise) / max(1, c.vertical_legs))


def leg_m(state: AgentState, top: float) -> float:
    """The height of one vertical leg: the climb from cruise to `top` in `vertical_legs` equal parts."""
    return (top - state.dynamic.cruise_m) / max(1, state.static.config.vertical_legs)


def look_up(state: AgentState, strategy: str) -> dict[str, Any] | None:
    """This step's look-up (see `look_up_altitude`), or None; navigate's, and search's round one end of a "between"."""
    d, s = state.dynamic, state.static
    alt = look_up_altitude(state)
    if alt is None:
        return None
    unseen = ", ".join(n for n in s.goal.landmarks if not s.memory.placed(n))
    if d.up_m is not None:  # the next leg of the climb: the same look-up
        return {"action": AgentAction.look_up(alt, f"{unseen} not seen yet: climbing on to {alt:.0f} m"),
                "strategy": strategy}
    cruise = d.observation.altitude_m if d.observation.altitude_m is not None else d.cruise_m
    return {"action": AgentAction.look_up(alt, f"{unseen} not seen yet: looking over the roofs from {alt:.0f} m"),
            "strategy": strategy, "look_ups": d.look_ups + 1, "looked_up_at_step": d.timestep,
            "looked_up_from": d.looked_up_from + [d.position.copy()], "cruise_m": cruise}


def look_low_altitude(state: AgentState) -> float | None:
    """The altitude to look low from here, or None: not now.

    A camera reads a shop front's name from much lower than cruise (at 25 m
    over the streets its letters are a few pixels tall and seen steeply from
    above); a look-low (descend at this waypoint, turn, come back to cruise)
    is worth its step while searching for a goal whose name has not been read,
    at waypoints more than `look_low_spacing_m` from every earlier one, at most
    `max_look_lows` times. Only where the observation offers it (names a floor:
    a vehicle whose own camera reads the names); never below that floor, and
    only below the altitude the drone flies at.
    """
    d, s = state.dynamic, state.static
    c, obs = s.config, d.observation
    if c.look_low_alt_m <= 0 or obs.look_low_floor_m is None or d.look_lows >= c.max_look_lows:
        return None
    if s.memory.goal_fix is not None:
        return None
    if any(norm(d.position - p) < c.look_low_spacing_m for p in d.looked_low_from):
        return None
    alt = max(c.look_low_alt_m, obs.look_low_floor_m)
    if obs.altitude_m is not None and not alt < obs.altitude_m:
        return None
    return alt


def look_low(state: AgentState, strategy: str) -> dict[str, Any] | None:
    """This step's look-low (see `look_low_altitude`), or None."""
    d = state.dynamic
    alt = look_low_altitude(state)
    if alt is None:
        return None
    return {"action": AgentAction.look_low(alt, f"goal not read yet: reading the shop fronts from {alt:.0f} m"),
            "strategy": strategy, "look_lows": d.look_lows + 1, "looked_low_from": d.looked_low_from + [d.position.copy()]}

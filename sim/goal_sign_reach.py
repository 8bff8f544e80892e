"""Can a camera on the corridor graph read a task's goal? A rule of thumb for camera navigation, per task.

The oracle "sees" a POI from any waypoint within its POI range with a line of
sight; a camera reads a sign only from in front of it, big enough and not
squashed by a grazing view. Before asking why camera flights fail, this says
for each task whether its goal can be read from anywhere the drone may fly:

* ``no_sign``: the goal is hung on no facade (not a shop front, or no facade
  within reach of its position: `sim.world.signage`);
* ``reachable``: some waypoint within ``range_m`` in front of the sign's facade
  sees it, from cruise altitude and aimed at it, at least 90 % unhidden with
  lettering at least `RESOLVABLE_SENSOR_PX` tall and `RESOLVABLE_ADVANCE_PX`
  wide (the renderer's truth of that view: occlusion counted);
* otherwise ``unreadable``: signs seen only along their facade, or too small.

The camera's pitch decides what is in the frame: 25 m up, a street-level sign
closer than about 25 m is below the frame of a camera pitched 15 degrees down.
A gimbal can tilt, so the report is per pitch and for any of them.

Nothing is read here (no model). It is an estimate, not a bound: the reader
sometimes reads lettering below `RESOLVABLE_SENSOR_PX`, and a look-around view
that is not aimed at the sign can show it less slanted than the aimed one (of
the 6 goals the first 12 dev camera flights read, 4 are "unreadable" here at
the mounting pitch). ``no_sign`` is exact: no camera finds those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Lettering this wide per character in the sensor's frame: the narrowest cell of a legible bitmap font (5x7).
RESOLVABLE_ADVANCE_PX = 5.0


@dataclass(frozen=True)
class GoalReach:
    task: str
    goal: str
    status: str  # reachable | unreadable | no_sign
    waypoints_in_front: int  # within range, in front of the facade
    readable_from: list[int]  # of those, the waypoints the aimed view resolves it from
    best_letter_px: float
    best_advance_px: float


def goal_reach(world, renderer, task_id: str, goal: str, range_m: float, resolvable_px: float,
               altitude_m: float | None = None, pitch_deg: float | None = None) -> GoalReach:
    """`altitude_m`: the camera's height for the views (None: cruise); `pitch_deg`: its pitch (None: the camera's)."""
    from onboard.map.compass import bearing_deg

    signs = [s for s in renderer.signs if s.kind == "poi" and s.name == goal]
    if not signs:
        return GoalReach(task_id, goal, "no_sign", 0, [], 0.0, 0.0)
    g = world.graph
    front, readable, best_px, best_adv = 0, [], 0.0, 0.0
    for sign in signs:
        d = np.hypot(*(g.xy - sign.centre[:2]).T)
        for k in np.flatnonzero(d <= range_m):
            v = sign.centre[:2] - g.xy[k]
            if float(np.dot(-v, sign.normal)) <= 0.0:
                continue  # behind the facade
            front += 1
            _img, truths = renderer.render_view(int(k), bearing_deg(float(v[0]), float(v[1])), altitude_m, pitch_deg)
            t = next((t for t in truths if t.name == goal and t.visible_fraction >= 0.9), None)
            if t is None:
                continue
            adv = t.squash * t.letter_px
            best_px, best_adv = max(best_px, t.letter_px), max(best_adv, adv)
            if t.letter_px >= resolvable_px and adv >= RESOLVABLE_ADVANCE_PX:
                readable.append(int(k))
    return GoalReach(task_id, goal, "reachable" if readable else "unreadable", front, readable,
                     round(best_px, 1), round(best_adv, 1))


def reach_report(world, renderer, pitches: list[float], tasks: list, range_m: float, resolvable_px: float,
                 altitude_m: float | None = None) -> dict:
    """Per task (`sim.benchmark.tasks.Task`) and in sum: how many goals a camera on the graph can read.

    `pitches`: the camera pitches (deg) to try; a goal is reachable when some pitch reads it.
    `altitude_m`: the camera's height (None: cruise), as a descent to read would take it.
    """
    per = {p: [goal_reach(world, renderer, t.id, t.goal_name, range_m, resolvable_px, altitude_m, p) for t in tasks]
           for p in pitches}
    any_pitch = []
    for rows in zip(*per.values()):
        best = next((r for r in rows if r.status == "reachable"), rows[0])
        any_pitch.append(best.status)
    counts = {s: sum(st == s for st in any_pitch) for s in ("reachable", "unreadable", "no_sign")}
    return {"tasks": len(tasks), "range_m": range_m, "resolvable_px": resolvable_px,
            "altitude_m": world.cruise_alt if altitude_m is None else altitude_m,
            "resolvable_advance_px": RESOLVABLE_ADVANCE_PX, "any_pitch": counts,
            "per_pitch": {str(p): {s: sum(r.status == s for r in rows) for s in counts} for p, rows in per.items()},
            "rows": {str(p): [r.__dict__ for r in rows] for p, rows in per.items()}}

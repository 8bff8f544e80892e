"""Serialise the place–anchor memory into the planner's Navigation Context.

Two forms of the same content: :func:`navigation_context_dict` (plain data,
for a JSON prompt or the telemetry log) and
:func:`render_navigation_context` (compact text for a language model).
Only recent places and anchors are listed, so the prompt stays bounded on a
long flight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onboard.memory.anchor_graph import AnchorGraph

RULES = (
    "Use this memory to avoid revisiting explored places. "
    "Treat same-space candidates as hints: positions are dead-reckoned and drift. "
    "If an avoid hint is present, choose a direction that leaves the current place."
)


def navigation_context_dict(graph: "AnchorGraph") -> dict[str, Any]:
    cfg = graph.cfg
    m = graph.metres_per_unit
    current = graph.anchors[graph.current_anchor]
    place = graph.places.get(graph.current_place) if graph.current_place is not None else None
    places = sorted(graph.places.values(), key=lambda p: p.place_id)[-cfg.context_recent_places:]
    anchors = sorted(graph.anchors.values(), key=lambda a: a.anchor_id)[-cfg.context_recent_anchors:]
    return {
        "localisation": {
            "step": graph.step_count,
            "pose": {"x_m": round(graph.pose.x * m, 2), "y_m": round(graph.pose.y * m, 2),
                     "yaw_deg": round(graph.pose.yaw_deg, 1)},
            "current_place_id": graph.current_place,
            "current_place_type": place.place_type if place else None,
            "current_anchor_id": graph.current_anchor,
            "neighbours": list(current.neighbours),
            "same_space_candidates": [
                {"anchor_id": c.anchor_id, "distance_m": round(c.distance * m, 2), "place_id": c.place_id}
                for c in graph.localisation_candidates()
            ],
        },
        "places": [
            {"place_id": p.place_id, "place_type": p.place_type, "objects": list(p.objects),
             "description": p.description, "anchors": list(p.anchors)}
            for p in places
        ],
        "anchors": [
            {"anchor_id": a.anchor_id, "x_m": round(a.pose.x * m, 2), "y_m": round(a.pose.y * m, 2),
             "place_id": a.place_id, "neighbours": list(a.neighbours)}
            for a in anchors
        ],
        "discovered_context": [
            {"idx": r.idx, "goal_flag": r.goal_flag, "goal_scene_type": r.goal_scene_type, "why": r.why,
             "avoid_hint": r.avoid_hint}
            for r in graph.discovered.records()
        ],
        "avoid_hints": graph.avoid_hints(),
        "rules": RULES,
    }


def render_navigation_context(graph: "AnchorGraph") -> str:
    d = navigation_context_dict(graph)
    loc = d["localisation"]
    pose = loc["pose"]
    where = f"place P{loc['current_place_id']} ({loc['current_place_type']})" if loc["current_place_id"] is not None \
        else "no place confirmed yet"
    lines = [
        "## Navigation Context",
        f"Localisation: step {loc['step']}, pose x={pose['x_m']:.1f} m y={pose['y_m']:.1f} m yaw={pose['yaw_deg']:.0f} deg, "
        f"{where}, anchor A{loc['current_anchor_id']} (neighbours: {_ids('A', loc['neighbours'])})",
    ]
    cands = loc["same_space_candidates"]
    lines.append("Same-space candidates (hints, not merged): "
                 + (", ".join(f"A{c['anchor_id']} at {c['distance_m']:.1f} m" for c in cands) if cands else "none"))
    lines.append("Places (oldest first):")
    for p in d["places"] or []:
        extra = f"; objects: {', '.join(p['objects'])}" if p["objects"] else ""
        desc = f"; {p['description']}" if p["description"] else ""
        lines.append(f"- P{p['place_id']} {p['place_type']}: anchors {_ids('A', p['anchors'])}{extra}{desc}")
    if not d["places"]:
        lines.append("- none yet")
    lines.append("Recent anchors:")
    for a in d["anchors"]:
        place = f"P{a['place_id']}" if a["place_id"] is not None else "-"
        lines.append(f"- A{a['anchor_id']} ({a['x_m']:.1f} m, {a['y_m']:.1f} m) {place} -> {_ids('A', a['neighbours'])}")
    lines.append("Discovered context (1 = oldest):")
    for r in d["discovered_context"] or []:
        hint = f" avoid={r['avoid_hint']}" if r["avoid_hint"] else ""
        lines.append(f"{r['idx']}. goal_flag={str(r['goal_flag']).lower()} goal_scene_type={r['goal_scene_type']} "
                     f"why={r['why']}{hint}")
    if not d["discovered_context"]:
        lines.append("- none yet")
    lines.append("Avoid hints: " + (", ".join(d["avoid_hints"]) if d["avoid_hints"] else "none"))
    lines.append("Rules: " + d["rules"])
    return "\n".join(lines)


def _ids(prefix: str, ids: list[int]) -> str:
    return ", ".join(f"{prefix}{i}" for i in ids) if ids else "none"

"""One `FrameLog` per step: what the agent saw, decided and where it was, for reflection and replay.

Besides the move, each frame says which plan the step followed (`plan_version`)
and, on steps that asked the model for a plan, why (`replan_triggers`) and what
the prompt carried (`prompt`: short ids per section, cut sections, tokens), so
a replay can tell a plan that changed the flight from one that came too late.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class FrameLog:
    timestep: int
    current_state: str
    strategy: str  # navigate | search | locate
    movement: dict[str, Any]  # {"kind": "move"|"arrive"|"look_up"|"come_down"|"look_low", "node": id, "bearing": deg, "altitude_m": m}
    reason: str
    pose: tuple[float, float, float, float]  # x, y, z, yaw (own frame; yaw = bearing of the move, deg)
    distance_to_target: float | None  # to the working-memory target, None while unknown
    effect: str = ""  # effect of the previous move (SUCCESS / FAILURE / INEFFECTIVE), "" on the first step
    map_snapshot: dict[str, list[float]] = field(default_factory=dict)  # landmark -> [x, y] as fused so far
    map_dropped: dict[str, str] = field(default_factory=dict)  # onboard-map landmarks dropped at this step -> why
    plan_version: int = 0  # the plan this step followed: 0 the first geometric plan, +1 per model plan adopted
    # This step's retrievals: {"mode": skip|single|hierarchical|flat|none, "hits": {collection: n}}; {} = none.
    retrieval: dict[str, Any] = field(default_factory=dict)
    # A plan prompt made at this step: section -> short ids of its items, "dropped" sections, "tokens" (estimate).
    prompt: dict[str, Any] = field(default_factory=dict)
    replan_triggers: list[str] = field(default_factory=list)  # why that prompt was made ("start" for the first)
    # A vision-language model's answers handed in before this step: kind, step of the frame, seconds, text.
    vlm: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def note_retrieval(current: dict[str, Any], mode: str, hits: dict[str, int]) -> dict[str, Any]:
    """`current` (a step's `retrieval`) with one more retrieval: hits add up, the modes are joined."""
    merged = dict(current.get("hits", {}))
    for name, n in hits.items():
        merged[name] = merged.get(name, 0) + int(n)
    modes = [m for m in str(current.get("mode", "")).split("+") if m]
    if mode and mode not in modes:  # "": hits that pick no mode (the plan priors' search beside the prompt's)
        modes.append(mode)
    return {"mode": "+".join(modes), "hits": merged}

"""One `FrameLog` per step: what the agent saw, decided and where it was, for reflection and replay."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class FrameLog:
    timestep: int
    current_state: str
    strategy: str  # navigate | search | locate
    movement: dict[str, Any]  # {"kind": "move"|"arrive"|"look_up", "node": id, "bearing": deg, "altitude_m": m}
    reason: str
    pose: tuple[float, float, float, float]  # x, y, z, yaw (own frame; yaw = bearing of the move, deg)
    distance_to_target: float | None  # to the working-memory target, None while unknown
    effect: str = ""  # effect of the previous move (SUCCESS / FAILURE / INEFFECTIVE), "" on the first step
    map_snapshot: dict[str, list[float]] = field(default_factory=dict)  # landmark -> [x, y] as fused so far
    map_dropped: dict[str, str] = field(default_factory=dict)  # onboard-map landmarks dropped at this step -> why

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

"""Feeding the Place–Anchor memory (`onboard.memory.anchor_graph`) from waypoint moves.

The anchor graph dead-reckons from discrete actions (turns, forward steps).
A waypoint move becomes: turns of 45 degrees to the move's compass octant,
then one forward step of one waypoint spacing; so every move drops an anchor.
Places are semantic regions confirmed from the scene type; on the street
graph the finest place is the waypoint itself (as the benchmark's ABABA
metric counts them), so the scene type is "waypoint <id>", confirmed at
once (dwell 1). Visit counts and the `pattern:ABABA` hint then come from the
memory module rather than from a second bookkeeping here.
"""

from __future__ import annotations

from collections import Counter

from onboard.memory.anchor_graph import AnchorGraph
from onboard.memory.settings import AnchorGraphConfig

TURN_DEG = 45.0


def waypoint_anchor_config(spacing_m: float = 50.0) -> AnchorGraphConfig:
    return AnchorGraphConfig(forward_step_units=1.0, step_length_m=spacing_m, turn_angle_deg=TURN_DEG,
                             anchor_every_forward_steps=1, place_period_steps=1, place_dwell_observations=1,
                             localisation_radius=0.8)


def place_type(node: int) -> str:
    return f"waypoint {node}"


def record_move(anchors: AnchorGraph, bearing: float, arrived: int) -> tuple[str, ...]:
    """Turn to the move's octant, fly forward, observe the waypoint; returns the avoid hints."""
    want = (-round(bearing / TURN_DEG) * TURN_DEG + 180.0) % 360.0 - 180.0  # yaw: + = left of north
    turn = (want - anchors.pose.yaw_deg + 180.0) % 360.0 - 180.0
    for _ in range(int(round(abs(turn) / TURN_DEG))):
        anchors.step("turn_left" if turn > 0 else "turn_right")
    return anchors.step("forward", scene_type=place_type(arrived)).avoid_hints


def start(anchors: AnchorGraph, node: int) -> None:
    """Observe the take-off waypoint as the first place."""
    anchors.step("stop", scene_type=place_type(node))


def visit_counts(anchors: AnchorGraph) -> dict[int, int]:
    """Times each waypoint was confirmed as the current place."""
    c = Counter(p.place_type for p in anchors.places.values())
    return {int(t.split()[1]): n for t, n in c.items()}

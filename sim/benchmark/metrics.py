"""Episode metrics and their aggregation.

SPL follows Anderson et al. 2018 ("On Evaluation of Embodied Navigation
Agents"): S * l / max(p, l) with l the shortest-path length and p the length
flown. ABABA and STUCK follow the Place-Anchor design's loop hints, with
places = graph nodes: ABABA is counted at each step where the last five
positions read A,B,A,B,A (A != B); STUCK at each step where the last W
positions hold at most `stuck_unique_max` distinct nodes (the design's "<= 1"
cannot happen on a graph where every move changes node, so circling inside
three nodes is what counts here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WINDOW = 10
STUCK_UNIQUE_MAX = 3


def spl(success: bool, shortest_m: float, path_m: float) -> float:
    if not success:
        return 0.0
    if shortest_m <= 0:
        return 1.0
    return float(shortest_m / max(path_m, shortest_m))


def count_ababa(trajectory: list[int]) -> int:
    n = 0
    for i in range(4, len(trajectory)):
        a, b, c, d, e = trajectory[i - 4:i + 1]
        if a == c == e and b == d and a != b:
            n += 1
    return n


def count_stuck(trajectory: list[int], window: int = WINDOW, unique_max: int = STUCK_UNIQUE_MAX) -> int:
    return sum(1 for i in range(window, len(trajectory) + 1) if len(set(trajectory[i - window:i])) <= unique_max)


def unique_ratio(trajectory: list[int], window: int = WINDOW) -> float:
    """Distinct nodes among the last `window` positions, over the window length."""
    tail = trajectory[-window:]
    return len(set(tail)) / len(tail) if tail else 1.0


def mean_unique_ratio(trajectory: list[int], window: int = WINDOW) -> float:
    """`unique_ratio` averaged over every full window of the episode (1.0 if too short)."""
    if len(trajectory) < window:
        return unique_ratio(trajectory, window)
    return float(np.mean([len(set(trajectory[i - window:i])) / window for i in range(window, len(trajectory) + 1)]))


@dataclass
class Summary:
    n: int
    sr: float
    spl: float
    steps_over_min: float
    ababa: float
    stuck: float
    unique_ratio: float
    wall_ms_per_step: float
    look_ups: float = 0.0  # mean look-ups flown per episode
    climb_m: float = 0.0  # mean vertical metres of look-ups per episode (counted in the path length)

    def to_json(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def summarise(records: list[dict]) -> Summary:
    """Mean of the per-episode metrics (records as written to the results JSON)."""
    if not records:
        return Summary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    m = lambda k: float(np.mean([r[k] for r in records]))  # noqa: E731
    total_steps = sum(r["steps"] for r in records)
    return Summary(
        n=len(records), sr=m("success"), spl=m("spl"), steps_over_min=m("steps_over_min"),
        ababa=m("ababa"), stuck=m("stuck"), unique_ratio=m("unique_ratio"),
        wall_ms_per_step=1000.0 * sum(r["wall_s"] for r in records) / max(1, total_steps),
        look_ups=float(np.mean([r.get("look_ups", 0) for r in records])),
        climb_m=float(np.mean([r.get("climb_m", 0.0) for r in records])),
    )

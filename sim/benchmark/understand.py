"""Read a goal description back into geometry: what a model-free agent can know.

The benchmark's baselines need a goal estimate without a language model: the
relations come from the vehicle's own reader, and the arithmetic that turns
them into a point (offsets, midpoints, where rays cross) is here. Landmark
names come from a gazetteer (the agent knows the city's landmarks by name, as
PReP's fine-tuned perception did).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


DEFAULT_RAY_M = 150.0  # a direction without a distance: assume it is this far


@dataclass(frozen=True)
class Relation:
    """The goal relative to landmarks: an offset vector, a direction ray, or a midpoint."""

    kind: str  # "offset", "ray", "between"
    landmarks: tuple[str, ...]
    direction: int | None = None  # 0..7 compass index
    distance: float | None = None  # metres

    def vector(self) -> np.ndarray:
        """Unit (or scaled) east-north vector of the direction."""
        r = math.radians(45.0 * (self.direction or 0))
        return np.array([math.sin(r), math.cos(r)]) * (self.distance if self.distance else 1.0)


def parse_relations(description: str, landmark_names: list[str]) -> list[Relation]:
    """All landmark relations stated in `description`, as the vehicle's own reader reads them.

    One reader for the baselines, the generator's check and the agent
    (`onboard.agent.goal_description`): a second parser would let the benchmark
    and the vehicle disagree about what a task says.
    """
    from onboard.agent.goal_description import parse_goal_description

    return [Relation(r.kind, r.landmarks, r.direction, r.distance)
            for r in parse_goal_description(description, landmark_names).relations]


def estimate_goal(relations: list[Relation], positions: dict[str, np.ndarray]) -> np.ndarray | None:
    """Goal position from relations, given positions of (some of) their landmarks.

    Offsets give points, "between" gives a midpoint, and two or more rays meet
    where their lines pass closest (least squares). Points are averaged.
    Returns None when no usable landmark position is known.
    """
    points: list[np.ndarray] = []
    rays: list[tuple[np.ndarray, np.ndarray]] = []
    for r in relations:
        if not all(n in positions for n in r.landmarks):
            continue
        if r.kind == "between":
            points.append((positions[r.landmarks[0]] + positions[r.landmarks[1]]) / 2.0)
        elif r.kind == "offset":
            points.append(positions[r.landmarks[0]] + r.vector())
        else:
            rays.append((positions[r.landmarks[0]], r.vector()))
    if len(rays) >= 2:
        a = np.zeros((2, 2))
        b = np.zeros(2)
        for p, v in rays:
            n = np.eye(2) - np.outer(v, v)  # projector onto the line's normal
            a += n
            b += n @ p
        if abs(np.linalg.det(a)) > 1e-6:
            points.append(np.linalg.solve(a, b))
        else:
            points.extend(p + v * DEFAULT_RAY_M for p, v in rays)
    elif len(rays) == 1:
        p, v = rays[0]
        points.append(p + v * DEFAULT_RAY_M)
    if not points:
        return None
    return np.mean(points, axis=0)

"""What a retrieved past plan says about this flight: where the goal was, and where landmarks were.

The ground station's post-flight analyser writes, into a strategic plan's
``plan_refined`` JSON, where that flight put the goal (``goal.xy_m``: where it
read the goal's name, or on failure the estimate it searched in vain) and the
landmark map it fused (``landmarks``), both in *that* flight's take-off frame.
This flight's take-off point may differ, so the remembered frame is brought
into the own frame by the landmarks both flights saw: compass bearings are
absolute, so the frames differ by a translation, estimated as the median of
(live position - remembered position) over the common landmarks. With no
common landmark there is no honest way to place the memory: nothing is used.

Only what the telemetry carried is used; nothing here knows the simulator.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PlanLesson:
    """One retrieved strategic plan, read for positions (remembered frame)."""

    similarity: float
    status: str  # 'success' | 'failure'
    goal_xy: np.ndarray | None
    goal_source: str  # 'name read' | 'estimate' | ''
    landmarks: dict[str, np.ndarray] = field(default_factory=dict)
    note: str = ""
    arrived_from: np.ndarray | None = None  # the waypoint the flight declared arrival from

    @property
    def aim(self) -> np.ndarray | None:
        """Where to fly: the waypoint that worked (on the streets), else the goal read off them."""
        return self.arrived_from if self.arrived_from is not None else self.goal_xy

    @property
    def goal_was_read(self) -> bool:
        return self.status == "success" and self.goal_source == "name read" and self.goal_xy is not None


def _xy(value: Any) -> np.ndarray | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return np.array([float(value[0]), float(value[1])])
    return None


def lesson_from(hit: Any) -> PlanLesson | None:
    """Read a retrieval hit (``Retrieved[StrategicPlan]``); None when its plan carries no positions.

    Older records (``plan_refined`` = the plain plan, or without goal/landmarks) give None.
    """
    record = getattr(hit, "record", None)
    try:
        doc = json.loads(getattr(record, "plan_refined", "") or "null")
    except (TypeError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    goal = doc.get("goal") if isinstance(doc.get("goal"), dict) else {}
    lms = doc.get("landmarks") if isinstance(doc.get("landmarks"), dict) else {}
    landmarks = {str(n): xy for n, v in lms.items() if (xy := _xy(v)) is not None}
    goal_xy = _xy(goal.get("xy_m"))
    if goal_xy is None and not landmarks:
        return None
    return PlanLesson(similarity=float(getattr(hit, "similarity", 0.0)), status=str(getattr(record, "status", "")),
                      goal_xy=goal_xy, goal_source=str(goal.get("source", "")), landmarks=landmarks,
                      note=str(getattr(record, "reflection_note", "")), arrived_from=_xy(goal.get("arrived_from_xy_m")))


def frame_shift(remembered: dict[str, np.ndarray], live: dict[str, np.ndarray]) -> np.ndarray | None:
    """Translation from the remembered frame to the own frame, by the landmarks both know; None if none."""
    common = sorted(set(remembered) & set(live))
    if not common:
        return None
    dx = [float(live[n][0] - remembered[n][0]) for n in common]
    dy = [float(live[n][1] - remembered[n][1]) for n in common]
    return np.array([statistics.median(dx), statistics.median(dy)])


@dataclass(frozen=True)
class Priors:
    """What the retrieved plans give this flight, in the own frame."""

    goal_xy: np.ndarray | None  # where a very similar past task read the goal's name and arrived
    goal_similarity: float
    landmarks: dict[str, np.ndarray]  # remembered landmark positions (live fixes override them)
    used: int  # plans that could be placed in the own frame


def priors_from(lessons: list[PlanLesson], live: dict[str, np.ndarray], reuse_similarity: float) -> Priors:
    """Place every lesson in the own frame; the goal prior only from a read goal of a very similar task.

    The prior is the waypoint that flight declared arrival from (a point on the
    streets that worked), or the goal's read position in older records: flying to
    the read position itself, often inside a block, took longer routes (t002: SPL
    0.98 on the first flight, 0.88 with the read position as the prior).

    The best-matching lesson wins for the goal and for each landmark (lessons come best first).
    """
    goal, goal_sim, landmarks, used = None, 0.0, {}, 0
    for lesson in lessons:
        shift = frame_shift(lesson.landmarks, live)
        if shift is None:
            continue
        used += 1
        if goal is None and lesson.goal_was_read and lesson.similarity >= reuse_similarity:
            goal, goal_sim = lesson.aim + shift, lesson.similarity
        for name, xy in lesson.landmarks.items():
            landmarks.setdefault(name, xy + shift)
    return Priors(goal, goal_sim, landmarks, used)

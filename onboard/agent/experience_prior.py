"""What a retrieved past plan says about this flight: where the goal was, and where landmarks were.

The ground station's post-flight analyser writes, into a strategic plan's
``plan_refined`` (``contract.payloads.plan_refined.RefinedPlan``), where that flight put the goal (``goal.xy_m``: where it
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

import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contract.payloads.base import PayloadError
from contract.payloads.plan_refined import RefinedPlan


@dataclass(frozen=True)
class PlanLesson:
    """One retrieved strategic plan, read for positions (remembered frame)."""

    similarity: float
    status: str  # 'success' | 'failure'
    goal_xy: np.ndarray | None
    goal_source: str  # 'name read' | 'estimate' | ''
    landmarks: dict[str, np.ndarray] = field(default_factory=dict)
    note: str = ""

    @property
    def goal_was_read(self) -> bool:
        return self.status == "success" and self.goal_source == "name read" and self.goal_xy is not None


def lesson_from(hit: Any) -> PlanLesson | None:
    """Read a retrieval hit (``Retrieved[StrategicPlan]``); None when its plan carries no positions.

    Older records (``plan_refined`` = the plain plan, or without goal/landmarks) give None, and so
    does one that is not a refined plan at all.
    """
    record = getattr(hit, "record", None)
    try:
        refined = RefinedPlan.from_text(getattr(record, "plan_refined", "") or "")
    except PayloadError:
        return None
    landmarks = {n: np.array(xy, dtype=float) for n, xy in refined.landmarks.items()}
    goal_xy = None if refined.goal is None else np.array(refined.goal.xy_m, dtype=float)
    if goal_xy is None and not landmarks:
        return None
    return PlanLesson(similarity=float(getattr(hit, "similarity", 0.0)), status=str(getattr(record, "status", "")),
                      goal_xy=goal_xy, goal_source="" if refined.goal is None else refined.goal.source,
                      landmarks=landmarks, note=str(getattr(record, "reflection_note", "")))


def frame_shift(remembered: dict[str, np.ndarray], live: dict[str, np.ndarray]) -> np.ndarray | None:
    """Translation from the remembered frame to the own frame, by the landmarks both know; None if none."""
    common = sorted(set(remembered) & set(live))
    if not common:
        return None
    dx = [float(live[n][0] - remembered[n][0]) for n in common]
    dy = [float(live[n][1] - remembered[n][1]) for n in common]
    return np.array([statistics.median(dx), statistics.median(dy)])


@dataclass(frozen=True)
class RememberedFrame:
    """One past flight's positions, in its own take-off frame; the working memory places it in this one."""

    landmarks: dict[str, np.ndarray]
    goal_xy: np.ndarray | None = None  # set only for the goal prior (a read goal of a very similar task)
    similarity: float = 0.0


def frames_from(lessons: list[PlanLesson], reuse_similarity: float) -> list[RememberedFrame]:
    """Every lesson with a landmark map as a frame; the best read goal of a very similar task keeps its goal.

    Lessons come best first; only one frame carries a goal. The frames are placed
    by the working memory from its live landmark fixes, again whenever they change:
    at take-off, under noisy perception, a few fixes can put the frame tens of
    metres off, and a prior that far off is reached without the goal's name in
    reading range.

    Tried and left out (docs/BENCHMARKS.md, "Why the defaults"): aiming at the
    pose the flight declared arrival from rather than the read goal, and
    retracing the flown route with its loops cut out (it fixes dead ends but
    repeats the first flight's detours).
    """
    out: list[RememberedFrame] = []
    goal_taken = False
    for lesson in lessons:
        if not lesson.landmarks:
            continue
        use_goal = not goal_taken and lesson.goal_was_read and lesson.similarity >= reuse_similarity
        goal_taken = goal_taken or use_goal
        out.append(RememberedFrame(lesson.landmarks, lesson.goal_xy if use_goal else None, lesson.similarity))
    return out

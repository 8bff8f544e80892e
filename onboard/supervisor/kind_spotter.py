"""The detector on the look-around's frames, when the description asks for a kind of thing.

Camera perception reads signs; a goal that is a kind ("a person by the
fountain", "the red kiosk") has none, so the configured detector (the
supervisor's detector worker: `supervisor.camera` set and
`detect_every_steps` > 0; `inference.detector` says which model) is asked for
that kind in each look-around frame, and what it finds goes to the same fusion
as the read signs (`SightingFusion.add_detected`). Only then: without a kind in
the description, or without a detector, no frame is detected on and nothing
changes; with both, one detector call per frame, on the detector's worker
under its deadline, so a stuck model costs a view its detections, not the
flight its loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.camera_sightings import CameraView, ViewRead
from onboard.perception.kind_sightings import detections_read
from onboard.perception.types import Detection
from onboard.vocab.goal_kind import GoalKind, goal_kind

Detect = Callable[[np.ndarray, Sequence[str]], Awaitable["list[Detection] | None"]]


@dataclass
class KindSpotter:
    """Asks `detect` for the goal's kind in a view and places what it finds (`detections_read`)."""

    kind: GoalKind
    intr: CameraIntrinsics
    detect: Detect
    detect_ms: list[float] = field(default_factory=list)  # per frame detected on

    async def spot(self, view: CameraView) -> ViewRead:
        if view.image is None:
            return ViewRead(view.index, view.heading_deg, (), {}, ok=False)
        t0 = time.perf_counter()
        found = await self.detect(view.image, [self.kind.phrase])
        self.detect_ms.append((time.perf_counter() - t0) * 1000)
        return detections_read(found or [], view, self.kind, self.intr, {"detect": self.detect_ms[-1]})


def worker_detect(detector: Any) -> Detect:
    """`detect` through the supervisor's detector worker (a `RestartingWorker` of a `PerceptionPipeline`)."""
    async def detect(image: np.ndarray, prompts: Sequence[str]) -> list[Detection] | None:
        return await detector.call(lambda p: p.worker.call_async(p.detector.detect, image, list(prompts),
                                                                 deadline_s=p.deadline_s))
    return detect


def kind_spotter_for(instruction: str, names_goal: Callable[[str], bool], detector: Any,
                     intr: CameraIntrinsics) -> KindSpotter | None:
    """A spotter when the instruction asks for a kind the agent takes for its goal and a detector is configured."""
    kind = goal_kind(instruction)
    if kind is None or detector is None or not names_goal(kind.word):
        return None
    return KindSpotter(kind, intr, worker_detect(detector))

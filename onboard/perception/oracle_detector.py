"""The simulator's oracle detector: ground truth through the Detector interface.

Benchmarks of the agent must separate navigation skill from detector skill,
so the simulator can hand perception the true objects in view. ``onboard``
never imports ``sim``: the simulator implements :class:`GroundTruthSource`
(or passes plain ``(label, box)`` data) and this class only filters it.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from onboard.perception.types import Box, Detection


class GroundTruthSource(Protocol):
    def visible_objects(self, image: np.ndarray) -> Sequence[tuple[str, Box]]:
        """The labelled pixel boxes of the objects in the frame this image was rendered from."""
        ...


class StaticGroundTruth:
    """Plain data as a source: the objects of the current frame, set by whoever renders it."""

    def __init__(self, objects: Sequence[tuple[str, Box]] = ()) -> None:
        self.objects = list(objects)

    def visible_objects(self, image: np.ndarray) -> Sequence[tuple[str, Box]]:
        return self.objects


class OracleDetector:
    def __init__(self, source: GroundTruthSource, score: float = 1.0) -> None:
        self.source = source
        self.score = score

    def detect(self, image: np.ndarray, prompts: Sequence[str] = ()) -> list[Detection]:
        words = [p.strip().lower() for p in prompts if p.strip()]
        found = []
        for label, box in self.source.visible_objects(image):
            name = label.lower()
            if not words or any(w == name or w in name or name in w for w in words):
                found.append(Detection(label, self.score, tuple(float(v) for v in box)))
        return found

"""What perception hands to the agent, and the interfaces its backends implement.

Images are RGB ``uint8`` arrays of shape (H, W, 3) everywhere in perception;
boxes are pixel ``(x0, y0, x1, y1)`` in that image's frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Detection:
    label: str
    score: float
    box: Box


class Detector(Protocol):
    def detect(self, image: np.ndarray, prompts: Sequence[str]) -> list[Detection]:
        """Objects matching ``prompts`` (open vocabulary where the backend allows)."""
        ...


class Segmenter(Protocol):
    def segment(self, image: np.ndarray, boxes: Sequence[Box]) -> list[np.ndarray]:
        """One boolean (H, W) mask per box."""
        ...


class PerceptionError(RuntimeError):
    """A perception backend got input it cannot handle; names what was wrong."""


def check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        got = f"{getattr(image, 'dtype', type(image).__name__)} {getattr(image, 'shape', '')}"
        raise PerceptionError(f"expected an RGB uint8 (H, W, 3) image, got {got}")

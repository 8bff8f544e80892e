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


@dataclass(frozen=True)
class ReadText:
    """A line of text read in an image: what it says, how sure the recogniser is, where it is."""

    text: str
    confidence: float  # mean probability of the characters read
    box: Box
    quad: tuple[tuple[float, float], ...]  # corners tl, tr, br, bl (the line may be in perspective)


@dataclass(frozen=True)
class TextSighting:
    """A name read on a sign, placed relative to the vehicle.

    ``name`` is a known name (gazetteer, map) when the sign spells it exactly
    (case and diacritics aside), otherwise the text as read, so that
    ``GoalDescription.names_goal(name)`` (what the agent already asks of a
    sighting) locks the goal only on an exact read. A read one slip away from a
    known name keeps its own text and names the known one in ``close_to``: a
    reason to look closer, never a goal (a shop one letter off, or another
    branch, is another place).
    """

    name: str
    bearing_deg: float
    range_m: float | None
    range_method: str | None  # "map-footprint", "ground-plane" or None
    confidence: float  # match confidence: recogniser confidence, lowered per slip
    box: Box
    text: str = ""  # as read
    close_to: str | None = None
    slips: int = 0

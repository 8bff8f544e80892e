"""Scene descriptions for the agent's ``scene_description``.

With a VLM configured (GGUF + mmproj), :class:`VlmCaptioner` asks it for one
sentence about the aerial view. Without one (the default: no registry ships a
VLM), :class:`DetectionCaptioner` composes the sentence from the localised
detections, which is what the planner could otherwise only guess at.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol, Sequence

import numpy as np

from onboard.map.compass import compass8

CAPTION_PROMPT = (
    "You are the camera of a drone. Describe this aerial view in one sentence: "
    "the kind of place, the notable objects and where they are in the image."
)


class Captioner(Protocol):
    def caption(self, image: np.ndarray, objects: Sequence) -> str:
        ...


class DetectionCaptioner:
    """A caption composed from detections (no vision-language model needed)."""

    def caption(self, image: np.ndarray, objects: Sequence) -> str:
        if not objects:
            return "No objects of interest detected in view."
        counts = Counter(o.label for o in objects)
        listed = ", ".join(f"{n} {label}{'s' if n > 1 else ''}" for label, n in counts.most_common())
        near = min(objects, key=lambda o: (o.range_m is None, o.range_m or 0.0))
        where = f"bearing {near.bearing_deg:03.0f}° ({compass8(near.bearing_deg)})"
        if near.range_m is not None:
            where += f" at about {near.range_m:.0f} m"
        return f"In view: {listed}; the nearest {near.label} is {where}."


class VlmCaptioner:
    """One-sentence captions from a llama.cpp vision-language model."""

    def __init__(self, vlm, *, max_tokens: int = 80, prompt: str = CAPTION_PROMPT) -> None:
        self.vlm = vlm  # onboard.inference.llama_backend.LlamaVisionModel
        self.max_tokens = max_tokens
        self.prompt = prompt

    def caption(self, image: np.ndarray, objects: Sequence) -> str:
        text = self.vlm.chat_with_images(self.prompt, [image], max_tokens=self.max_tokens).strip()
        return text.split("\n")[0] if text else DetectionCaptioner().caption(image, objects)

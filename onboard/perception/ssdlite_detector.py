"""The SSDLite-MobileNetV2 person detector (``ssdlite-person`` in the manifest).

A closed-vocabulary backend: it knows only "person", which is what a search
and rescue drone most often looks for, and it is the one detector with real
weights in a registry package. Prompts that name no class it knows return no
detections rather than a wrong class.

The ONNX graph (tf2onnx of the TF Object Detection API export) does its own
NMS; it takes a uint8 NHWC RGB batch and returns ``num_detections``,
``detection_boxes`` (normalised ymin, xmin, ymax, xmax), ``detection_scores``
and ``detection_classes`` (1-based COCO ids).
"""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from onboard.inference.ort_session import OrtSession
from onboard.perception.types import Detection, check_image

# What prompts may call the one class this model knows.
SYNONYMS = {"person": ("person", "people", "pedestrian", "human", "man", "woman", "child", "hiker", "astronaut")}


class SsdliteDetector:
    def __init__(
        self,
        session: OrtSession,
        *,
        labels: dict[int, str] | None = None,
        input_size: tuple[int, int] = (300, 300),
        score_threshold: float = 0.35,
    ) -> None:
        self.session = session
        self.labels = labels or {1: "person"}
        self.input_size = input_size
        self.score_threshold = score_threshold
        self.input_name = session.input_names[0]

    def wanted_labels(self, prompts: Sequence[str]) -> set[str]:
        if not prompts:
            return set(self.labels.values())
        words = {w.strip(" .").lower() for p in prompts for w in p.replace(",", " ").split()}
        return {label for label in self.labels.values() if words & set(SYNONYMS.get(label, (label,)))}

    def preprocess(self, image: np.ndarray) -> np.ndarray:
        check_image(image)
        return cv2.resize(image, self.input_size, interpolation=cv2.INTER_LINEAR)[None]

    def postprocess(self, outputs: list[np.ndarray], width: int, height: int, wanted: set[str]) -> list[Detection]:
        num, boxes, scores, classes = outputs
        found = []
        for i in range(int(num[0])):
            score = float(scores[0, i])
            label = self.labels.get(int(classes[0, i]))
            if score < self.score_threshold or label not in wanted:
                continue
            y0, x0, y1, x1 = (float(v) for v in boxes[0, i])
            found.append(Detection(label, score, (x0 * width, y0 * height, x1 * width, y1 * height)))
        return found

    def detect(self, image: np.ndarray, prompts: Sequence[str] = ()) -> list[Detection]:
        wanted = self.wanted_labels(prompts)
        if not wanted:
            return []
        outputs = self.session.run({self.input_name: self.preprocess(image)})
        return self.postprocess(outputs, image.shape[1], image.shape[0], wanted)

"""Where text is in an image: PP-OCRv5's DB detector (``ppocrv5-det`` in the manifest).

DB (differentiable binarisation) predicts, per pixel, the probability of being
inside a shrunk text region; a text line is a connected blob of that map. The
blob is shrunk on purpose (neighbouring words and lines would otherwise merge),
so each box is grown back ("unclipped") by ``area * ratio / perimeter``, the
inverse of the shrink used in training. For the rotated rectangles kept here
that growth is exact: the rectangle gains ``d`` on every side.

The network wants sides that are multiples of 32 (five stride-2 stages); the
longest side is limited to ``max_side`` because cost grows with the pixel
count and a facade name that is readable at all is many pixels tall.
Colour order is BGR with ImageNet mean/std, as PaddleOCR trained it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from onboard.inference.ort_session import OrtSession
from onboard.inference.quantize import CALIBRATION_DIR, QuantizeError
from onboard.perception.image_ops import normalise_nchw
from onboard.perception.types import check_image

# ImageNet statistics in the model's (BGR) channel order, as PaddleOCR applies them.
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
MAX_CANDIDATES = 1000


@dataclass(frozen=True)
class TextBox:
    """One detected text line: corners (4, 2) clockwise from top-left in image pixels, and DB's score."""

    quad: np.ndarray
    score: float

    @property
    def height(self) -> float:
        """The shorter side: letter height for horizontal text."""
        q = self.quad
        return float(min(np.linalg.norm(q[0] - q[3]), np.linalg.norm(q[0] - q[1])))

    @property
    def box(self) -> tuple[float, float, float, float]:
        x, y = self.quad[:, 0], self.quad[:, 1]
        return float(x.min()), float(y.min()), float(x.max()), float(y.max())


def input_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """(W, H) for the network: the image scaled down so its long side is at most max_side, sides rounded to 32."""
    scale = min(1.0, max_side / max(width, height))
    return max(32, int(round(width * scale / 32)) * 32), max(32, int(round(height * scale / 32)) * 32)


def db_input(image: np.ndarray, max_side: int) -> np.ndarray:
    """An RGB frame as the detector's (1, 3, H, W) input; INT8 calibration feeds it the same way."""
    check_image(image)
    w, h = input_size(image.shape[1], image.shape[0], max_side)
    resized = cv2.resize(image, (w, h), interpolation=cv2.INTER_LINEAR)
    return normalise_nchw(resized[:, :, ::-1], MEAN, STD, scale=1.0 / 255.0)


def calibration_feeds(max_side: int, directory: Path = CALIBRATION_DIR / "text") -> list[np.ndarray]:
    """The detector's inputs for the city views in `directory` (RGB, as the reader's frames): its INT8 calibration."""
    feeds = [db_input(cv2.cvtColor(cv2.imread(str(p), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB), max_side)
             for p in sorted(directory.glob("*.jpg"))]
    if not feeds:
        raise QuantizeError(f"no calibration views in {directory}")
    return feeds


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Corners as top-left, top-right, bottom-right, bottom-left (recognition crops in that order)."""
    pts = pts[np.argsort(pts[:, 0])]
    left, right = pts[:2], pts[2:]
    tl, bl = left[np.argsort(left[:, 1])]
    tr, br = right[np.argsort(right[:, 1])]
    return np.array([tl, tr, br, bl], np.float32)


class DbTextDetector:
    def __init__(
        self,
        session: OrtSession,
        *,
        max_side: int = 960,
        threshold: float = 0.3,
        box_threshold: float = 0.6,
        unclip_ratio: float = 1.5,
        min_height_px: float = 8.0,
    ) -> None:
        self.session = session
        self.input_name = session.input_names[0]
        self.max_side = max_side
        self.threshold = threshold
        self.box_threshold = box_threshold
        self.unclip_ratio = unclip_ratio
        self.min_height_px = min_height_px

    def preprocess(self, image: np.ndarray, max_side: int | None = None) -> np.ndarray:
        return db_input(image, max_side or self.max_side)

    def probability_map(self, image: np.ndarray, max_side: int | None = None) -> np.ndarray:
        return self.session.run({self.input_name: self.preprocess(image, max_side)})[0][0, 0]

    def boxes(self, prob: np.ndarray, width: int, height: int) -> list[TextBox]:
        """Text lines from a probability map, in the original image's pixels."""
        mh, mw = prob.shape
        sx, sy = width / mw, height / mh
        bitmap = (prob > self.threshold).astype(np.uint8)
        contours, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        found = []
        for contour in contours[:MAX_CANDIDATES]:
            (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
            if min(rw, rh) < 3:
                continue
            quad = cv2.boxPoints(((cx, cy), (rw, rh), angle))
            score = self._mean_inside(prob, quad)
            if score < self.box_threshold:
                continue
            d = rw * rh * self.unclip_ratio / (2 * (rw + rh))
            grown = cv2.boxPoints(((cx, cy), (rw + 2 * d, rh + 2 * d), angle))
            grown[:, 0] = np.clip(grown[:, 0] * sx, 0, width - 1)
            grown[:, 1] = np.clip(grown[:, 1] * sy, 0, height - 1)
            tb = TextBox(order_corners(grown), score)
            if tb.height >= self.min_height_px:
                found.append(tb)
        # reading order: top to bottom, then left to right
        return sorted(found, key=lambda b: (round(b.quad[0, 1] / 10), b.quad[0, 0]))

    @staticmethod
    def _mean_inside(prob: np.ndarray, quad: np.ndarray) -> float:
        h, w = prob.shape
        x0, y0 = np.clip(np.floor(quad.min(0)).astype(int), 0, [w - 1, h - 1])
        x1, y1 = np.clip(np.ceil(quad.max(0)).astype(int), 0, [w - 1, h - 1])
        mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
        cv2.fillPoly(mask, [np.round(quad - [x0, y0]).astype(np.int32)], 1)
        return float(cv2.mean(prob[y0:y1 + 1, x0:x1 + 1], mask)[0])

    def detect(self, image: np.ndarray, max_side: int | None = None) -> list[TextBox]:
        """Text lines in `image`, found on a copy whose longest side is at most `max_side` (default: the
        detector's own; a picture already drawn at the detector's scale passes its own longest side)."""
        return self.boxes(self.probability_map(image, max_side), image.shape[1], image.shape[0])

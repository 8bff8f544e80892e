"""What a text line says: PP-OCRv5's CTC recogniser (``ppocrv5-rec`` in the manifest).

A line is cut out with a perspective warp of its four corners (a facade seen
at an angle is a trapezoid; an axis-aligned crop would cut letters off), scaled
to the network's height of 48 px, and read as one class per time step; the
CTC rule (merge repeats, drop the blank) turns those into characters. Class 0
is the blank, then the charset file's lines, then a space: PaddleOCR's order,
which the network was trained with, so the charset must be exactly the file
pinned in the manifest (a shifted charset reads every letter as another one).

Lines go through in batches of similar width, sorted by aspect ratio, so the
padding each batch carries (and pays for) stays small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from onboard.inference.manifest import ModelFileError
from onboard.inference.ort_session import OrtSession

HEIGHT = 48
# The widest line the network is fed (aspect 25:1): longer lines are squeezed rather than cut.
MAX_WIDTH = 1200


@dataclass(frozen=True)
class LineRead:
    text: str
    confidence: float  # mean probability of the characters read (0 for an empty read)


def load_charset(path: str | Path) -> list[str]:
    """CTC classes: blank, the file's characters in order, space."""
    path = Path(path)
    try:
        # "\n" only: the charset holds characters that str.splitlines() would take for line breaks
        chars = [c.rstrip("\r") for c in path.read_text(encoding="utf-8").split("\n")]
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"OCR charset {path} cannot be read: {exc}") from exc
    if chars and chars[-1] == "":
        chars.pop()
    if not chars or any(not c for c in chars):  # one symbol a line (flags are several code points)
        raise ModelFileError(f"OCR charset {path} is not one symbol per line")
    return ["", *chars, " "]


def crop_line(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """The line straightened: its corners (tl, tr, br, bl) warped to a rectangle; tall crops turned upright.

    `size` (w, h): the rectangle's, when the quad's own sides misstate the line's shape (a line on a
    facade seen aslant: its true width for its height comes from the facade's rectified picture).
    """
    if size is None:
        w = int(round(max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[3] - quad[2]))))
        h = int(round(max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2]))))
    else:
        w, h = size
    w, h = max(w, 1), max(h, 1)
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    crop = cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
    return np.rot90(crop) if h >= 1.5 * w else crop


class CtcTextRecognizer:
    def __init__(self, session: OrtSession, charset: list[str], *, batch_size: int = 8) -> None:
        self.session = session
        self.input_name = session.input_names[0]
        classes = session.outputs()[session.output_names[0]][1][-1]
        if isinstance(classes, int) and classes != len(charset):
            raise ModelFileError(f"OCR charset has {len(charset)} classes with blank and space, "
                                 f"the recogniser {session.path} outputs {classes}")
        self.charset = charset
        self.batch_size = batch_size

    def batch(self, crops: list[np.ndarray]) -> np.ndarray:
        """[N, 3, 48, W] float32 (BGR, (x/255 - 0.5) / 0.5), lines left-aligned, zero padding right."""
        widths = [min(MAX_WIDTH, max(HEIGHT // 4, math.ceil(HEIGHT * c.shape[1] / c.shape[0]))) for c in crops]
        out = np.zeros((len(crops), 3, HEIGHT, max(widths)), np.float32)
        for i, (crop, w) in enumerate(zip(crops, widths)):
            resized = cv2.resize(crop, (w, HEIGHT), interpolation=cv2.INTER_LINEAR)
            out[i, :, :, :w] = resized[:, :, ::-1].transpose(2, 0, 1) * (2.0 / 255.0) - 1.0
        return out

    def decode(self, probs: np.ndarray) -> list[LineRead]:
        """Greedy CTC: the best class per step, repeats merged, blanks dropped."""
        best = probs.argmax(axis=2)
        score = probs.max(axis=2)
        reads = []
        for idx, p in zip(best, score):
            keep = np.ones(len(idx), bool)
            keep[1:] = idx[1:] != idx[:-1]
            keep &= idx != 0
            text = "".join(self.charset[i] for i in idx[keep])
            reads.append(LineRead(text, float(p[keep].mean()) if keep.any() else 0.0))
        return reads

    def read(self, crops: list[np.ndarray]) -> list[LineRead]:
        order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / crops[i].shape[0])
        reads: list[LineRead | None] = [None] * len(crops)
        for k in range(0, len(order), self.batch_size):
            chunk = order[k:k + self.batch_size]
            probs = self.session.run({self.input_name: self.batch([crops[i] for i in chunk])})[0]
            for i, r in zip(chunk, self.decode(probs)):
                reads[i] = r
        return [r for r in reads if r is not None]

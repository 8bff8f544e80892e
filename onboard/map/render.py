"""A top-down picture of a whole onboard map: buildings, corridors and named landmarks (`aerie map render`).

For a person checking a map before it flies: do the corridors cover the
streets, are the landmarks where they should be, did a build parameter leave
gaps. North is up; buildings are shaded by height (darker is taller), the
landmarks a description can name are orange and labelled where labels do not
overlap, corridor links are blue lines with a dot per waypoint, and named
places (POIs, possibly out of date) are small purple dots.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from onboard.map.onboard_map import OnboardMap
from onboard.vocab.text_fold import ascii_text

# Colours (BGR).
BACKGROUND = (246, 246, 242)
STRIP = (225, 225, 225)
TEXT = (40, 40, 40)
OUTLINE = (120, 120, 120)
LANDMARK = (0, 140, 255)
LANDMARK_OUTLINE = (0, 90, 190)
CORRIDOR = (200, 120, 30)
WAYPOINT = (150, 80, 20)
POI = (150, 80, 140)
TALL_M = 40.0        # buildings this tall or taller get the darkest shade
MARGIN_M = 20.0      # around the map's content
STRIP_H = 56         # title and scale strip under the map, pixels
_FONT = cv2.FONT_HERSHEY_SIMPLEX


class _Frame:
    """North-up metres (east, north) -> pixels, fitting the map's content into `size` on its longer side."""

    def __init__(self, m: OnboardMap, size: int):
        pts = [m.graph.xy] + [b.footprint for b in m.buildings]
        allp = np.vstack([p for p in pts if len(p)]) if any(len(p) for p in pts) else np.zeros((1, 2))
        self.lo = allp.min(axis=0) - MARGIN_M
        span = allp.max(axis=0) + MARGIN_M - self.lo
        self.scale = size / max(float(span.max()), 1.0)
        self.width = max(1, int(math.ceil(span[0] * self.scale)))
        self.height = max(1, int(math.ceil(span[1] * self.scale)))

    def px(self, xy: np.ndarray) -> np.ndarray:
        """(k, 2) metres -> (k, 2) int32 pixels (column, row)."""
        a = np.atleast_2d(np.asarray(xy, dtype=float))
        cols = (a[:, 0] - self.lo[0]) * self.scale
        rows = self.height - (a[:, 1] - self.lo[1]) * self.scale
        return np.round(np.column_stack([cols, rows])).astype(np.int32)


def _shade(height: float) -> tuple[int, int, int]:
    g = int(round(225 - 120 * min(1.0, max(0.0, height) / TALL_M)))
    return (g, g, g)


def _scale_bar_m(px_per_m: float, width: int) -> float:
    """The longest 1, 2 or 5 x 10^k metres that fits in a quarter of the width."""
    fit = width * 0.25 / px_per_m
    return max([b * 10 ** e for e in range(0, 6) for b in (1, 2, 5) if b * 10 ** e <= fit] or [1.0])


def _labels(img: np.ndarray, frame: _Frame, m: OnboardMap) -> int:
    """Landmark names at their centroids, larger footprints first, skipping any that would overlap; how many."""
    from onboard.map.city import polygon_area

    taken: list[tuple[int, int, int, int]] = []
    drawn = 0
    for b in sorted(m.landmarks, key=lambda b: -polygon_area(b.footprint)):
        text = ascii_text(b.name or "")[:40]
        if not text:
            continue
        (tw, th), _ = cv2.getTextSize(text, _FONT, 0.4, 1)
        c, r = frame.px(b.centroid)[0]
        box = (int(c - tw / 2) - 2, int(r - th / 2) - 3, int(c + tw / 2) + 2, int(r + th / 2) + 3)
        if box[0] < 0 or box[1] < 0 or box[2] >= img.shape[1] or box[3] >= img.shape[0]:
            continue
        if any(box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3] for t in taken):
            continue
        taken.append(box)
        cv2.rectangle(img, box[:2], box[2:], (255, 255, 255), -1)
        cv2.putText(img, text, (box[0] + 2, box[3] - 3), _FONT, 0.4, TEXT, 1, cv2.LINE_AA)
        drawn += 1
    return drawn


def render_map(m: OnboardMap, size: int = 1600, labels: bool = True) -> np.ndarray:
    """The map as a BGR image, `size` pixels on the longer side of the map area plus a strip for title and scale."""
    frame = _Frame(m, size)
    img = np.empty((frame.height + STRIP_H, frame.width, 3), np.uint8)
    img[:] = BACKGROUND
    landmark_ids = {b.id for b in m.landmarks}
    for b in m.buildings:
        pts = frame.px(b.footprint)
        colour = LANDMARK if b.id in landmark_ids else _shade(b.height)
        cv2.fillPoly(img, [pts], colour, cv2.LINE_AA)
        cv2.polylines(img, [pts], True, LANDMARK_OUTLINE if b.id in landmark_ids else OUTLINE, 1, cv2.LINE_AA)
    g = m.graph
    nodes = frame.px(g.xy)
    for a, b in g.edges():
        cv2.line(img, tuple(map(int, nodes[a])), tuple(map(int, nodes[b])), CORRIDOR, 2, cv2.LINE_AA)
    for c, r in nodes:
        cv2.circle(img, (int(c), int(r)), 3, WAYPOINT, -1, cv2.LINE_AA)
    for c, r in frame.px(np.array([p.xy for p in m.pois])) if m.pois else ():
        cv2.circle(img, (int(c), int(r)), 1, POI, -1)
    if labels:
        _labels(img, frame, m)
    _strip(img, frame, m)
    return img


def _strip(img: np.ndarray, frame: _Frame, m: OnboardMap) -> None:
    """Title, counts, north arrow and scale bar under the map area."""
    top = frame.height
    img[top:] = STRIP
    h = m.header
    title = (f"{m.name}: {m.graph.n_nodes} waypoints ({h.network_type}), {len(m.buildings)} buildings, "
             f"{len(m.landmarks)} landmarks, {len(m.pois)} named places  |  {h.extract_name} {h.extract_sha256[:12]}")
    cv2.putText(img, ascii_text(title), (8, top + 20), _FONT, 0.45, TEXT, 1, cv2.LINE_AA)
    length = _scale_bar_m(frame.scale, frame.width)
    bar = int(round(length * frame.scale))
    x1 = frame.width - 10
    x0, y = x1 - bar, top + 44
    cv2.line(img, (x0, y), (x1, y), TEXT, 2)
    for x in (x0, x1):
        cv2.line(img, (x, y - 5), (x, y + 2), TEXT, 1)
    cv2.putText(img, f"{length:.0f} m", (x0, y - 8), _FONT, 0.4, TEXT, 1, cv2.LINE_AA)
    nx = 16
    cv2.arrowedLine(img, (nx, top + 50), (nx, top + 30), TEXT, 1, cv2.LINE_AA, tipLength=0.35)
    cv2.putText(img, "N", (nx + 6, top + 44), _FONT, 0.4, TEXT, 1, cv2.LINE_AA)

"""One sign in one frame: warped into the image in perspective, and its ground truth.

The panel texture is mapped onto the four projected corners with the plane's
homography (`cv2.warpPerspective`), only over the quad's bounding box, from
the mip level nearest above the size it covers. Every sign also writes its
number into an id buffer that every later polygon overwrites, so after the
frame is finished the buffer says how much of each sign the painter's order
left visible: the ground truth describes the picture, not a separate
visibility rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.map.compass import bearing_deg
from sim.world.sign_texture import SignTexture, layout
from sim.world.signage import Sign


@dataclass(frozen=True)
class SignTruth:
    """A sign in a rendered frame, as a text-reading benchmark scores it.

    Pixel coordinates are OpenCV's (x right, y down; integer values are pixel centres); quads run
    top-left, top-right, bottom-right, bottom-left as the text reads. Bearing and distances are from
    the camera to the panel's centre.
    """

    name: str
    kind: str  # "poi" (shop front) or "building" (the building's own name)
    category: str  # the POI's kind (cafe, clothes, ...) or the building's
    quad: tuple[tuple[float, float], ...]  # the lettering: first glyph to last, cap top (accents aside) to descenders
    bbox: tuple[int, int, int, int]  # the lettering's quad clipped to the frame: x0, y0, x1, y1 (x1, y1 exclusive)
    panel_quad: tuple[tuple[float, float], ...]  # the whole panel
    visible_fraction: float  # share of the panel's projected area in the frame and not hidden by nearer buildings
    letter_px: float  # projected cap height at the lettering's centre, pixels
    letter_m: float  # cap height on the wall, metres
    world_xyz: tuple[float, float, float]  # panel centre, metres east, north, up
    bearing_deg: float  # horizontal bearing camera -> sign, degrees clockwise from north
    distance_m: float  # horizontal distance camera -> sign, metres
    slant_m: float  # straight-line distance camera -> sign, metres
    building_id: int

    @property
    def squash(self) -> float:
        """The letters' width across the frame for their height (the lettering's top edge's horizontal extent
        over its characters): about 0.7 for a sign seen square-on, less for one seen along its facade."""
        return abs(self.quad[1][0] - self.quad[0][0]) / max(1, len(self.name)) / max(self.letter_px, 1e-6)


def in_brief(truths: list[SignTruth]) -> tuple[tuple[str, float, float], ...]:
    """(name, visible share, lettering px) per sign of a frame: what a judge keeps of a frame's truth."""
    return tuple((t.name, round(float(t.visible_fraction), 3), round(float(t.letter_px), 1)) for t in truths)


def _area(q: np.ndarray) -> float:
    x, y = q[:, 0], q[:, 1]
    return abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))) / 2.0


def warp_sign(img: np.ndarray, ids: np.ndarray, number: int, tex: SignTexture, quad: np.ndarray,
              shade: float) -> bool:
    """Draw the panel `tex` onto the projected `quad` (4, 2) and mark its pixels `number` in `ids`."""
    import cv2

    h_img, w_img = img.shape[:2]
    x0, y0 = (int(max(0, math.floor(v))) for v in quad.min(axis=0))
    x1 = int(min(w_img, math.ceil(quad[:, 0].max()) + 1))
    y1 = int(min(h_img, math.ceil(quad[:, 1].max()) + 1))
    if x1 <= x0 or y1 <= y0:
        return False
    tall = max(np.hypot(*(quad[3] - quad[0])), np.hypot(*(quad[2] - quad[1])))
    level = tex.levels[0]
    for lv in tex.levels[1:]:
        if lv.shape[0] < tall:
            break
        level = lv
    th, tw = level.shape[:2]
    src = np.float32([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]])
    dst = (quad - np.array([x0, y0])).astype(np.float32)
    H = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(level, H, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) * (1.0 / 255.0)
    roi = img[y0:y1, x0:x1]
    lit = warped[:, :, :3].astype(np.float32) * shade
    roi[...] = (roi + (lit - roi) * alpha + 0.5).astype(np.uint8)
    cv2.fillConvexPoly(ids, np.round(quad * 16).astype(np.int32), int(number), lineType=cv2.LINE_8, shift=4)
    return True


def sign_points(sign: Sign) -> np.ndarray:
    """(10, 3) world points a frame projects for a sign: panel corners, lettering corners, cap top and baseline.

    Corners run top-left, top-right, bottom-right, bottom-left; the cap points are at the lettering's middle.
    """
    lay = layout(sign.name, sign.style.face)
    tx0, ty0, tx1, ty1 = (v / d for v, d in zip(lay.text_box, (lay.width, lay.height) * 2))
    cap_top, baseline = ty0, (lay.text_box[1] + lay.cap_px) / lay.height
    mid = (tx0 + tx1) / 2
    fractions = ((tx0, ty0), (tx1, ty0), (tx1, ty1), (tx0, ty1), (mid, cap_top), (mid, baseline))
    return np.vstack([sign.corners, [sign.panel_point(fx, fy) for fx, fy in fractions]])


def sign_truth(sign: Sign, pts_px: np.ndarray, eye: np.ndarray, visible_px: int, frame: tuple[int, int]) -> SignTruth:
    """Ground truth of a sign drawn in a frame; `pts_px` (10, 2) is its `sign_points` projected."""
    panel_px, quad, cap = pts_px[:4], pts_px[4:8], pts_px[8:]
    w, h = frame
    bx0, by0 = np.clip(np.floor(quad.min(axis=0)), 0, [w, h]).astype(int)
    bx1, by1 = np.clip(np.ceil(quad.max(axis=0)) + 1, 0, [w, h]).astype(int)
    d = sign.centre - eye
    return SignTruth(
        name=sign.name, kind=sign.kind, category=sign.category,
        quad=tuple((round(float(x), 2), round(float(y), 2)) for x, y in quad),
        bbox=(int(bx0), int(by0), int(bx1), int(by1)),
        panel_quad=tuple((round(float(x), 2), round(float(y), 2)) for x, y in panel_px),
        visible_fraction=round(min(1.0, visible_px / max(_area(panel_px), 1e-6)), 3),
        letter_px=round(float(np.hypot(*(cap[1] - cap[0]))), 2), letter_m=round(sign.letter_m, 3),
        world_xyz=(round(float(sign.centre[0]), 2), round(float(sign.centre[1]), 2), round(float(sign.centre[2]), 2)),
        bearing_deg=round(bearing_deg(float(d[0]), float(d[1])), 2),
        distance_m=round(float(np.hypot(d[0], d[1])), 2), slant_m=round(float(np.linalg.norm(d)), 2),
        building_id=sign.building_id)

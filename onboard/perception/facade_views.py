"""Facades in a frame, warped to face the camera: where a sign seen aslant can be read upright.

A shop sign on a wall seen along the street is squashed across the frame (its letters a third as
wide as tall, or less) and PP-OCR, trained on text seen square-on, finds none of it: on the reading
bench 0 of 25 such signs (2026-11-26). The vehicle knows enough to undo the squash: the map's
building footprints say where each wall is, the pose and intrinsics say where the camera is and
how it looks, so the wall's plane, and with it the homography from a fronto-parallel picture of the
wall to the frame, is known exactly. Text is flat on that plane, so one homography straightens all
of it.

`facade_pieces` finds the walls worth it: walls facing the camera, turned at least
``min_angle_deg`` away from it (a wall seen square-on reads as it is), within ``max_range_m``,
clipped to what is in front of the camera and inside its horizontal field of view, cut where the
map says a nearer building hides them, and only the sign band (``band_m`` above the ground, where
shop fronts hang). A wall whose far end is several times as far as its near end is split, each
piece drawn at the scale its own distance gives, so a far letter is not paid for at a near one's
resolution. Each `FacadePiece` carries its homography; `TextReader` warps the frame with it, finds
text there, and reads each line from the frame itself.

Bad input is skipped, never raised: a NaN pose, a degenerate footprint edge, a wall behind the
camera or edge-on to it gives no piece.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose, project_points


@dataclass(frozen=True)
class RectifySettings:
    """Which facades are warped and how big (`inference.text_rectify_*`)."""

    min_angle_deg: float = 30.0  # walls turned less than this from the sight line are read in the frame alone
    max_range_m: float = 100.0  # farther walls' signs are too small to read at all
    band_m: tuple[float, float] = (1.5, 6.0)  # the wall's sign band, metres above the ground
    scale: float = 1.0  # a picture's pixels a metre over the frame's own at the piece's (mean) distance
    max_pixels: int = 150_000  # the detector's input pixels for all pieces of one view together, nearest first
    max_depth_ratio: float = 2.5  # a piece's far end at most this many times its near end's distance
    overlap_m: float = 6.0  # pieces of one wall overlap so a sign across the cut is whole in one
    near_m: float = 1.0  # points nearer the camera plane than this are cut off
    min_band_px: float = 12.0  # the band's height in the frame at the piece's near end, least worth warping


@dataclass(frozen=True)
class FacadePiece:
    """A stretch of one wall's sign band as a fronto-parallel picture.

    ``homography`` maps the picture's pixels (x along the wall as read from the street, y down from the
    band's top) to the frame's; the picture is ``size`` (width, height) pixels at ``px_per_m``.
    """

    edge: int  # index of the wall in the facade source (FootprintRanger's edges)
    homography: np.ndarray  # (3, 3) picture -> frame
    size: tuple[int, int]
    px_per_m: float
    angle_deg: float  # the wall's turn from the sight line at the piece's middle (0 = square-on)
    near_m: float  # horizontal distance of the piece's nearest point
    far_m: float

    def to_frame(self, pts: np.ndarray) -> np.ndarray:
        """Picture pixels (k, 2) -> frame pixels (k, 2)."""
        p = np.column_stack([pts, np.ones(len(pts))]) @ self.homography.T
        return p[:, :2] / p[:, 2:3]


def _interval(lo: float, hi: float, alpha: float, beta: float) -> tuple[float, float]:
    """[lo, hi] cut to where alpha + beta * s >= 0."""
    if abs(beta) < 1e-12:
        return (lo, hi) if alpha >= 0 else (1.0, 0.0)
    s = -alpha / beta
    return (max(lo, s), hi) if beta > 0 else (lo, min(hi, s))


def _finite_pose(pose: CameraPose) -> bool:
    return all(math.isfinite(v) for v in (pose.north, pose.east, pose.down, pose.yaw_deg, pose.pitch_deg,
                                          pose.roll_deg, pose.ground_down))


def facade_pieces(walls, intr: CameraIntrinsics, pose: CameraPose, settings: RectifySettings = RectifySettings(),
                  det_scale: float = 0.6) -> list[FacadePiece]:
    """The sign bands of the walls in view seen aslant, nearest first, as pictures to read.

    `walls`: a `FootprintRanger` (its edges ``a``, ``b`` (east, north), ``top`` heights and outward
    ``normal``; `range_along` tells what hides what). `det_scale`: the frame detector's scale (its input
    over the frame): a piece is drawn at the frame's density and found at the frame detector's scale,
    so the pixel budget counts it at that scale.
    """
    if not _finite_pose(pose) or not len(getattr(walls, "a", ())) or not (intr.fx > 0 and intr.fy > 0):
        return []
    lo_z, hi_z = settings.band_m
    eye = np.array([pose.east, pose.north])
    alt = pose.altitude_m
    if not (math.isfinite(alt) and hi_z > lo_z):
        return []
    a, b, top, normal = walls.a, walls.b, walls.top, walls.normal
    e = b - a
    length = np.hypot(e[:, 0], e[:, 1])
    mid = (a + b) / 2
    to_eye = eye - mid
    dist = np.hypot(to_eye[:, 0], to_eye[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        cos_turn = np.einsum("ij,ij->i", normal, to_eye) / dist
    near = dist - length / 2 <= settings.max_range_m
    cand = np.flatnonzero((length > 1.0) & np.isfinite(cos_turn) & (cos_turn > 1e-3) & (top > lo_z + 0.5) & near)
    near = np.flatnonzero(near)  # the walls that may hide a candidate
    yaw = math.radians(pose.yaw_deg)
    fwd = np.array([math.sin(yaw), math.cos(yaw)])  # (east, north)
    cam_right = np.array([math.cos(yaw), -math.sin(yaw)])
    tan_half = (intr.width / 2 + 8) / intr.fx  # a few pixels' margin past the frame's edges
    pitch = math.radians(pose.pitch_deg)
    scale_at_1m = settings.scale * intr.fy
    pieces: list[FacadePiece] = []
    for k in cand:
        n = normal[k]
        r = np.array([-n[1], n[0]])  # along the wall, left to right as read from in front of it
        o = a[k] if float(np.dot(e[k], r)) > 0 else b[k]
        w = o - eye
        lo, hi = 0.0, float(length[k])
        for z in (lo_z, min(hi_z, float(top[k]))):
            # horizontal distance in front (along fwd) and the depth along the optical axis, linear in s
            f0, f1 = float(w @ fwd), float(r @ fwd)
            d0 = math.cos(pitch) * f0 - math.sin(pitch) * (alt - z)
            d1 = math.cos(pitch) * f1
            lo, hi = _interval(lo, hi, d0 - settings.near_m, d1)
            x0, x1 = float(w @ cam_right), float(r @ cam_right)
            lo, hi = _interval(lo, hi, tan_half * d0 - x0, tan_half * d1 - x1)
            lo, hi = _interval(lo, hi, tan_half * d0 + x0, tan_half * d1 + x1)
        if hi - lo < 0.5:
            continue
        pieces += _pieces_of(int(k), o, r, n, lo, hi, min(hi_z, float(top[k])), lo_z, eye, (walls, near), intr,
                             pose, settings, scale_at_1m)
    pieces.sort(key=lambda p: p.near_m)
    out, used = [], 0
    for p in pieces:
        px = p.size[0] * p.size[1] * det_scale ** 2
        if used + px <= settings.max_pixels:
            out.append(p)
            used += px
    return out


def _pieces_of(k: int, o, r, n, lo: float, hi: float, z_hi: float, z_lo: float, eye, walls, intr, pose,
               settings: RectifySettings, scale_at_1m: float) -> list[FacadePiece]:
    """The wall's visible stretch [lo, hi] (metres along `r` from `o`), cut by range, by what hides it and by depth."""
    w = o - eye
    rw = float(np.dot(r, w))
    disc = rw * rw - float(np.dot(w, w)) + settings.max_range_m ** 2
    if disc <= 0:
        return []
    lo, hi = max(lo, -rw - math.sqrt(disc)), min(hi, -rw + math.sqrt(disc))
    if hi - lo < 0.5:
        return []
    s = np.linspace(lo, hi, max(3, min(33, int((hi - lo) / 2) + 2)))
    pts = o + np.outer(s, r)
    d = np.hypot(*(pts - eye).T)
    z_mid = (z_lo + z_hi) / 2
    v = pts - eye
    bearings = np.degrees(np.arctan2(v[:, 0], v[:, 1])) % 360.0
    elevations = np.degrees(np.arctan2(z_mid - pose.altitude_m, d))
    ranger, near = walls
    hit = ranger.ranges_along(pose.east, pose.north, bearings, d + 1.0, pose.altitude_m, elevations, near)
    seen = np.isnan(hit) | (hit >= d - 1.0)
    if not seen.any():
        return []
    step = s[1] - s[0]
    first, last = np.flatnonzero(seen)[[0, -1]]
    lo, hi = max(lo, s[first] - step), min(hi, s[last] + step)
    out, start = [], lo
    while start < hi - 0.5:
        grid = np.linspace(start, hi, 65)
        dist = np.hypot(*(o + np.outer(grid, r) - eye).T)
        near = np.minimum.accumulate(dist)
        far = np.maximum.accumulate(dist)
        end = float(grid[np.flatnonzero(far <= settings.max_depth_ratio * near)[-1]])
        if end < hi - 1e-6:  # at least two overlaps long, so every piece moves the start on
            end = min(hi, max(end, start + 2 * settings.overlap_m))
        piece = _piece(k, o, r, n, start, end, z_lo, z_hi, eye, intr, pose, settings, scale_at_1m)
        if piece is not None:
            out.append(piece)
        if end >= hi:
            break
        start = max(start + 0.5, end - settings.overlap_m)
    return out


def _piece(k: int, o, r, n, s0: float, s1: float, z_lo: float, z_hi: float, eye, intr: CameraIntrinsics,
           pose: CameraPose, settings: RectifySettings, scale_at_1m: float) -> FacadePiece | None:
    ends = o + np.outer([s0, s1], r)
    d = np.hypot(*(ends - eye).T)
    d_near, d_far = float(d.min()), float(d.max())
    if d_near > settings.max_range_m:
        return None
    centre = o + r * (s0 + s1) / 2
    v = eye - centre
    angle = math.degrees(math.acos(max(-1.0, min(1.0, float(np.dot(n, v)) / max(1e-9, float(np.hypot(*v)))))))
    if angle < settings.min_angle_deg:
        return None
    if intr.fy * (z_hi - z_lo) / d_near < settings.min_band_px:
        return None
    px_per_m = scale_at_1m / math.sqrt(d_near * d_far)
    w = int(math.ceil((s1 - s0) * px_per_m))
    h = int(math.ceil((z_hi - z_lo) * px_per_m))
    if w < 16 or h < 16 or w > 8192 or h > 8192:
        return None
    corners_m = [(s0, z_hi), (s1, z_hi), (s1, z_lo), (s0, z_lo)]
    ned = np.array([[(o + r * s)[1], (o + r * s)[0], pose.ground_down - z] for s, z in corners_m])
    px, depth = project_points(intr, pose, ned)
    if not (np.all(depth > 0) and np.all(np.isfinite(px))):
        return None
    if px[:, 1].max() < 0 or px[:, 1].min() > intr.height or px[:, 0].max() < 0 or px[:, 0].min() > intr.width:
        return None
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    import cv2

    H = cv2.getPerspectiveTransform(src, px.astype(np.float32))
    return FacadePiece(k, H, (w, h), px_per_m, angle, d_near, d_far)

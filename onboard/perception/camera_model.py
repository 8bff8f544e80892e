"""Pixels -> bearings and ranges, from the camera's intrinsics and pose.

The agent reasons in the world ("person 40 m north-east"), not in pixels.
Bearing comes from the ray through the box centre. Range comes from where the
ray through the box's bottom centre (the object's foot) meets flat ground at
the vehicle's altitude above ground; when that ray does not go down (object on
the horizon), from a known object height instead. Both are estimates and say
which method produced them.

Frames: local NED metres; camera x right, y down, z forward (OpenCV).
``yaw_deg`` is the optical axis' heading clockwise from north, ``pitch_deg``
its elevation (negative looks down; -90 is nadir), ``roll_deg`` about it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.perception.types import Box

# Typical heights (m) for the size-based range fallback.
HEIGHT_PRIORS = {"person": 1.7, "car": 1.5, "truck": 3.0, "bicycle": 1.1, "dog": 0.6, "tree": 8.0}


class CalibrationError(ValueError):
    """A camera calibration file that is missing, unreadable, or does not describe this camera."""


@dataclass(frozen=True)
class CameraIntrinsics:
    """A pinhole camera with OpenCV's distortion model (`dist`: k1 k2 p1 p2 [k3 ...]; empty: none).

    Rays are cast through undistorted pixels (`undistort`), so a real lens' barrel does not bend the
    bearings; the simulated camera has none and writes zeros.
    """

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int
    dist: tuple[float, ...] = ()

    @staticmethod
    def from_hfov(width: int, height: int, hfov_deg: float) -> "CameraIntrinsics":
        f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
        return CameraIntrinsics(f, f, width / 2, height / 2, width, height)

    @property
    def matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def undistort(self, u: float, v: float) -> tuple[float, float]:
        """Where pixel (u, v) would be through a lens without distortion (the same pixel when there is none)."""
        if not any(self.dist):
            return u, v
        import cv2

        pt = cv2.undistortPoints(np.array([[[u, v]]], dtype=np.float64), self.matrix,
                                 np.asarray(self.dist, dtype=np.float64), P=self.matrix)
        return float(pt[0, 0, 0]), float(pt[0, 0, 1])

    def distort(self, px: np.ndarray) -> np.ndarray:
        """Pinhole pixels (k, 2) where the lens puts them (`undistort`'s inverse; the same without distortion)."""
        px = np.asarray(px, dtype=float)
        ok = np.all(np.isfinite(px), axis=1) if px.size else np.zeros(0, bool)
        if not any(self.dist) or not ok.any():
            return px
        import cv2

        norm = np.column_stack([(px[ok, 0] - self.cx) / self.fx, (px[ok, 1] - self.cy) / self.fy, np.ones(ok.sum())])
        out = px.copy()
        out[ok] = cv2.projectPoints(norm, np.zeros(3), np.zeros(3), self.matrix,
                                    np.asarray(self.dist, dtype=np.float64))[0].reshape(-1, 2)
        return out

    @staticmethod
    def from_calibration(path: str, width: int | None = None, height: int | None = None) -> "CameraIntrinsics":
        """An OpenCV calibration file (FileStorage YAML/XML/JSON: camera_matrix, distortion_coefficients,
        image_width, image_height), as `cv2.calibrateCamera`'s tools write it. With `width`/`height` (the
        frames' size) a file for another resolution is refused: its pixels would place everything wrong."""
        import cv2

        from pathlib import Path

        if not Path(path).is_file():
            raise CalibrationError(f"camera calibration file {path!r} does not exist")
        fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
        try:
            if not fs.isOpened():
                raise CalibrationError(f"camera calibration file {path!r} is not an OpenCV FileStorage file")
            k = fs.getNode("camera_matrix").mat()
            d = fs.getNode("distortion_coefficients").mat()
            w, h = fs.getNode("image_width").real(), fs.getNode("image_height").real()
        finally:
            fs.release()
        if k is None or k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise CalibrationError(f"{path}: camera_matrix must be a 3x3 matrix with positive focal lengths")
        dist = () if d is None else tuple(float(x) for x in np.asarray(d, dtype=float).ravel())
        if len(dist) not in (0, 4, 5, 8, 12, 14) or not all(math.isfinite(x) for x in dist):
            raise CalibrationError(f"{path}: distortion_coefficients must be 4, 5, 8, 12 or 14 finite numbers")
        if not (w > 0 and h > 0):
            raise CalibrationError(f"{path}: image_width and image_height must be given and positive")
        if width is not None and height is not None and (int(w), int(h)) != (width, height):
            raise CalibrationError(f"{path} calibrates a {int(w)}x{int(h)} camera; the frames are {width}x{height}")
        return CameraIntrinsics(float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2]), int(w), int(h), dist)

    def write_calibration(self, path: str) -> None:
        """This camera as an OpenCV calibration file (`from_calibration` reads it back)."""
        import cv2

        fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
        try:
            fs.write("image_width", int(self.width))
            fs.write("image_height", int(self.height))
            fs.write("camera_matrix", self.matrix)
            fs.write("distortion_coefficients", np.asarray(self.dist or (0.0,) * 5, dtype=np.float64).reshape(1, -1))
        finally:
            fs.release()


@dataclass(frozen=True)
class CameraPose:
    north: float
    east: float
    down: float  # NED: negative above the home altitude
    yaw_deg: float
    pitch_deg: float = 0.0
    roll_deg: float = 0.0
    ground_down: float = 0.0  # the ground's NED down coordinate (0 = home altitude)

    @property
    def altitude_m(self) -> float:
        return self.ground_down - self.down


def camera_axes(pose: CameraPose) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors (forward, right, image-down) of the camera in NED."""
    yaw, pitch, roll = (math.radians(a) for a in (pose.yaw_deg, pose.pitch_deg, pose.roll_deg))
    forward = np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw), -math.sin(pitch)])
    right = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    down = np.cross(forward, right)
    if roll:
        right, down = right * math.cos(roll) + down * math.sin(roll), down * math.cos(roll) - right * math.sin(roll)
    return forward, right, down


def pixel_ray(intr: CameraIntrinsics, pose: CameraPose, u: float, v: float) -> np.ndarray:
    """Unit NED direction of the ray through pixel (u, v)."""
    forward, right, down = camera_axes(pose)
    u, v = intr.undistort(u, v)
    ray = forward + right * (u - intr.cx) / intr.fx + down * (v - intr.cy) / intr.fy
    return ray / np.linalg.norm(ray)


def project_points(intr: CameraIntrinsics, pose: CameraPose, ned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixels (k, 2) and depths along the optical axis (k,) of NED points (k, 3); a point at or behind the
    camera has depth <= 0 and pixels not to be used."""
    forward, right, down = camera_axes(pose)
    v = np.asarray(ned, float) - np.array([pose.north, pose.east, pose.down])
    z = v @ forward
    with np.errstate(divide="ignore", invalid="ignore"):
        px = np.column_stack([intr.cx + intr.fx * (v @ right) / z, intr.cy + intr.fy * (v @ down) / z])
    return intr.distort(px), z


def bearing_elevation(ray: np.ndarray) -> tuple[float, float]:
    """(bearing clockwise from north in [0, 360), elevation in degrees, negative below the horizon)."""
    bearing = math.degrees(math.atan2(ray[1], ray[0])) % 360.0
    elevation = -math.degrees(math.asin(max(-1.0, min(1.0, ray[2]))))
    return bearing, elevation


def ground_hit(pose: CameraPose, ray: np.ndarray) -> tuple[float, float, float] | None:
    """(north, east, horizontal range) where the ray meets flat ground, or None if it never does."""
    h = pose.altitude_m
    if ray[2] <= 1e-6 or h <= 0:
        return None
    t = h / ray[2]
    dn, de = ray[0] * t, ray[1] * t
    return pose.north + dn, pose.east + de, math.hypot(dn, de)


@dataclass(frozen=True)
class Localisation:
    bearing_deg: float
    elevation_deg: float
    range_m: float | None
    range_method: str | None  # "ground-plane", "size-prior" or None
    north: float | None
    east: float | None


def localise_box(intr: CameraIntrinsics, pose: CameraPose, box: Box, label: str = "") -> Localisation:
    x0, y0, x1, y1 = box
    centre = pixel_ray(intr, pose, (x0 + x1) / 2, (y0 + y1) / 2)
    bearing, elevation = bearing_elevation(centre)
    foot = pixel_ray(intr, pose, (x0 + x1) / 2, y1)
    hit = ground_hit(pose, foot)
    if hit is not None:
        return Localisation(bearing, elevation, hit[2], "ground-plane", hit[0], hit[1])
    prior = HEIGHT_PRIORS.get(label)
    if prior and y1 > y0:
        dist = intr.fy * prior / (y1 - y0)
        horiz = dist * math.cos(math.radians(elevation))
        b = math.radians(bearing)
        return Localisation(bearing, elevation, horiz, "size-prior", pose.north + horiz * math.cos(b), pose.east + horiz * math.sin(b))
    return Localisation(bearing, elevation, None, None, None, None)

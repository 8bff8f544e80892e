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


@dataclass(frozen=True)
class CameraIntrinsics:
    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    @staticmethod
    def from_hfov(width: int, height: int, hfov_deg: float) -> "CameraIntrinsics":
        f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
        return CameraIntrinsics(f, f, width / 2, height / 2, width, height)


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
    ray = forward + right * (u - intr.cx) / intr.fx + down * (v - intr.cy) / intr.fy
    return ray / np.linalg.norm(ray)


def project_points(intr: CameraIntrinsics, pose: CameraPose, ned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixels (k, 2) and depths along the optical axis (k,) of NED points (k, 3); a point at or behind the
    camera has depth <= 0 and pixels not to be used."""
    forward, right, down = camera_axes(pose)
    v = np.asarray(ned, float) - np.array([pose.north, pose.east, pose.down])
    z = v @ forward
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.column_stack([intr.cx + intr.fx * (v @ right) / z, intr.cy + intr.fy * (v @ down) / z]), z


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

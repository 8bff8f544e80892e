"""Pure guidance helpers: turn a target into a velocity demand.

These stand in for PX4's position controller and flight tasks. They are plain
functions of positions and limits so the flight logic stays readable and the
shapes (braking, landing speed profile) can be tested on their own.
"""

from __future__ import annotations

import math

Vec3 = tuple[float, float, float]


def braking_speed(dist: float, v_max: float, accel: float, gain: float = 1.0) -> float:
    """Speed that still stops at ``dist`` with ``accel``; P-like near the target."""
    if dist <= 0.0:
        return 0.0
    return min(v_max, math.sqrt(2.0 * accel * dist) * 0.85, gain * dist)


def velocity_toward(
    pos: Vec3,
    target: Vec3,
    v_hor: float,
    v_up: float,
    v_down: float,
    acc_hor: float = 3.0,
    acc_vert: float = 2.0,
) -> Vec3:
    """Velocity demand (NED) that flies to ``target`` on a straight line."""
    dn, de, dd = target[0] - pos[0], target[1] - pos[1], target[2] - pos[2]
    dh = math.hypot(dn, de)
    sh = braking_speed(dh, v_hor, acc_hor)
    vn, ve = (dn / dh * sh, de / dh * sh) if dh > 1e-6 else (0.0, 0.0)
    sv = braking_speed(abs(dd), v_down if dd > 0 else v_up, acc_vert)
    vd = math.copysign(sv, dd)
    return vn, ve, vd


def land_descent_speed(height: float, vel_max_dn: float, land_alt1: float, land_alt2: float, land_speed: float,
                       land_alt3: float = 0.0, crawl_speed: float | None = None) -> float:
    """PX4's auto-land profile: fast above MPC_LAND_ALT1, MPC_LAND_SPEED below ALT2,
    MPC_LAND_CRWL below ALT3 (PX4 crawls there when it has a distance sensor, as SIH does)."""
    if crawl_speed is not None and height <= land_alt3:
        return crawl_speed
    if height >= land_alt1:
        return max(vel_max_dn, land_speed)
    if height <= land_alt2 or land_alt1 <= land_alt2:
        return land_speed
    frac = (height - land_alt2) / (land_alt1 - land_alt2)
    return land_speed + frac * (max(vel_max_dn, land_speed) - land_speed)


def bearing(from_pos: Vec3, to_pos: Vec3) -> float | None:
    """Heading (rad, from north) of the horizontal line to a target; None if on top of it."""
    dn, de = to_pos[0] - from_pos[0], to_pos[1] - from_pos[1]
    if math.hypot(dn, de) < 1.0:
        return None
    return math.atan2(de, dn)


def horizontal_distance(a: Vec3, b: Vec3) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])

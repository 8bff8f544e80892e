"""Offboard setpoints: what PX4 takes from SET_POSITION_TARGET_* messages.

The type_mask is honoured per component (MAVSDK uses 2552 = position + yaw and
2503 = velocity + yaw); body and offset frames are turned into local NED at
arrival, so the flight logic only ever sees absolute local targets.
A setpoint with a non-finite value in a used field is dropped, as PX4 does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from common.geodesy import GeoPoint, ned_from_geo


# SET_POSITION_TARGET type_mask bits (POSITION_TARGET_TYPEMASK)
IGN_X, IGN_Y, IGN_Z = 1, 2, 4
IGN_VX, IGN_VY, IGN_VZ = 8, 16, 32
IGN_YAW, IGN_YAW_RATE = 1024, 2048

FRAME_LOCAL_OFFSET_NED, FRAME_BODY_NED, FRAME_BODY_OFFSET_NED = 7, 8, 9


@dataclass
class Setpoint:
    """One offboard setpoint in local NED; None = that component is ignored."""

    t: float
    pos: tuple[float | None, float | None, float | None]
    vel: tuple[float | None, float | None, float | None]
    yaw: float | None
    yaw_rate: float | None


def decode_setpoint(m, msg_type: str, now: float, pos_ned: tuple[float, float, float], yaw: float,
                    origin: GeoPoint, alt_to_d: Callable[[float, int], float]) -> Setpoint | None:
    """Turn a received setpoint message into a :class:`Setpoint` (None if unusable)."""
    if msg_type == "SET_ATTITUDE_TARGET":
        # attitude offboard is not modelled: it keeps offboard alive and holds position
        return Setpoint(now, (None, None, None), (0.0, 0.0, 0.0), None, 0.0)
    mask = m.type_mask
    sp_yaw = None if mask & IGN_YAW else m.yaw
    sp_rate = None if mask & IGN_YAW_RATE else m.yaw_rate
    vel = [None if mask & IGN_VX else m.vx, None if mask & IGN_VY else m.vy, None if mask & IGN_VZ else m.vz]
    if msg_type == "SET_POSITION_TARGET_LOCAL_NED":
        pos = [None if mask & IGN_X else m.x, None if mask & IGN_Y else m.y, None if mask & IGN_Z else m.z]
        frame = m.coordinate_frame
        if frame in (FRAME_BODY_NED, FRAME_BODY_OFFSET_NED):  # rotate by heading
            cy, sy = math.cos(yaw), math.sin(yaw)
            if vel[0] is not None and vel[1] is not None:
                vel[0], vel[1] = cy * vel[0] - sy * vel[1], sy * vel[0] + cy * vel[1]
            if pos[0] is not None and pos[1] is not None:
                pos[0], pos[1] = cy * pos[0] - sy * pos[1], sy * pos[0] + cy * pos[1]
        if frame in (FRAME_LOCAL_OFFSET_NED, FRAME_BODY_NED, FRAME_BODY_OFFSET_NED):
            pos = [None if v is None else v + pos_ned[i] for i, v in enumerate(pos)]
    else:
        lat = None if mask & IGN_X else m.lat_int * 1e-7
        lon = None if mask & IGN_Y else m.lon_int * 1e-7
        pos = [None, None, None]
        if lat is not None and lon is not None:
            n, e = ned_from_geo(origin, lat, lon)
            pos[0], pos[1] = n, e
        if not mask & IGN_Z:
            pos[2] = alt_to_d(m.alt, m.coordinate_frame)
    if any(v is not None and not math.isfinite(v) for v in list(pos) + list(vel)):
        return None
    return Setpoint(now, tuple(pos), tuple(vel), sp_yaw if sp_yaw is None or math.isfinite(sp_yaw) else None,
                    sp_rate if sp_rate is None or math.isfinite(sp_rate) else None)

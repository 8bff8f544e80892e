"""Point the camera at a heading and pitch: with the gimbal where the autopilot announces one, else by turning.

Why both: a vehicle with a gimbal looks around without turning (the camera alone slews, faster
than the airframe yaws, and the vehicle holds its heading and position); a vehicle without one,
or whose gimbal went silent or is held by another component, turns in place as before
(`FlightExecutor.turn_to`: offboard, the envelope below it). A heading beyond the gimbal's yaw
end stops (a gimbal that cannot look backwards) turns the vehicle to it first and then points
the gimbal there. The result says how the camera was pointed and where it reports looking: the
gimbal's attitude, or the vehicle's heading, which is what a frame taken next was seen along.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

from firmware_bridge.gimbal import GimbalUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CameraPointing:
    # "gimbal" (the vehicle did not turn), "vehicle" (no usable gimbal: the vehicle turned), or "vehicle+gimbal"
    # (the heading lay beyond the gimbal's yaw stops: the vehicle turned to it, then the gimbal pointed)
    by: Literal["gimbal", "vehicle", "vehicle+gimbal"]
    pointed: bool  # the reported heading (and the gimbal's pitch) within the tolerance in time
    yaw_deg: float  # the camera's heading as reported: the gimbal's, else the vehicle's (NaN: unknown)
    pitch_deg: float | None  # the gimbal's reported pitch; None without a gimbal (a fixed camera, or the feed's pitch)
    seconds: float


async def point_camera(executor: Any, heading_deg: float, pitch_deg: float | None,
                       tolerance_deg: float) -> CameraPointing:
    """Point the camera `heading_deg` from north and `pitch_deg` from the horizon (None: the camera's
    mounting pitch, `supervisor.camera_pitch_deg`); see the module's docstring for how."""
    bridge = executor.bridge
    t0 = time.monotonic()
    gimbal = bridge.gimbal
    if math.isfinite(heading_deg) and await gimbal.available():
        pitch = executor.cfg.camera_pitch_deg if pitch_deg is None else pitch_deg
        by: Literal["gimbal", "vehicle+gimbal"] = "gimbal"
        turned = True
        if not gimbal.reaches(heading_deg, bridge.state.yaw_deg, tolerance_deg):
            turned = await executor.turn_to(heading_deg, tolerance_deg)
            by = "vehicle+gimbal"
        try:
            done = await gimbal.point(pitch, heading_deg, tolerance_deg)
        except GimbalUnavailable as exc:  # journalled by the bridge (gimbal_command); turning is left
            log.warning("camera pointed by turning: %s", exc)
        else:
            s = bridge.state
            return CameraPointing(by, turned and done.reached, s.gimbal_yaw_deg, s.gimbal_pitch_deg,
                                  time.monotonic() - t0)
    turned = await executor.turn_to(heading_deg, tolerance_deg)
    return CameraPointing("vehicle", turned, bridge.state.yaw_deg, None, time.monotonic() - t0)

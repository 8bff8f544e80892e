"""Camera perception's frames from the vehicle's own camera (``supervisor.camera``), each with its pose at capture.

What a real vehicle has: a video source (a gimbal camera's RTSP stream, a CSI
camera through GStreamer, the simulator's MJPEG stream) read by one
`FrameSource`, and telemetry kept in a `PoseHistory` from the bridge's state
stream, so every frame is placed from where the vehicle and its gimbal were when
it was taken, not from where they are when it arrives. The world feed then
serves nothing to perception.

A camera that stops delivering must not stop the flight: every wait is bounded
(``supervisor.camera_frame_timeout_s``), a view without a frame is an empty view,
and the first wait that comes back empty says ``camera_lost`` once (the first
frame after it, ``camera_restored``). While lost, only the first view of a
look-around waits for the camera; the others take what is there, so a dead
camera costs one timeout per look-around. ``supervisor.camera_lost: return``
ends the mission instead (`CameraLost`: the vehicle returns to launch).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.frame_source import FrameSource
from onboard.perception.pose_history import PoseHistory, PoseSample
from onboard.supervisor.flight_executor import MissionAborted


class CameraLost(MissionAborted):
    """The camera stopped delivering and ``supervisor.camera_lost`` is "return": the mission ends in a return."""

    finish = "rtl"


def has_camera(sup: Any) -> bool:
    """Whether `supervisor.camera` names a video source (a device, file, URL or pipeline), not the world feed."""
    return sup.camera not in ("", "world")


def streams_frames(sup: Any) -> bool:
    """Whether camera perception reads `supervisor.camera`, not the world feed."""
    return sup.perception == "camera" and has_camera(sup)


def shared_frames(supervisor: Any) -> "StreamFrames | None":
    """The vehicle's one connection to its camera, opened on first use (on the running loop) and kept over missions.

    The look-around, the detector and the VLM all read it: a gimbal camera often serves one RTSP client
    only, and a second capture that is read only now and then hands out frames queued seconds ago.
    """
    if not has_camera(supervisor.sup):
        return None
    if supervisor.frames is None:
        supervisor.frames = StreamFrames.start(supervisor.bridge, supervisor.sup, supervisor.event)
    return supervisor.frames


def camera_intrinsics(sup: Any) -> CameraIntrinsics:
    """The camera's intrinsics: its calibration file (`supervisor.camera_calibration`), else a pinhole of its hfov."""
    if sup.camera_calibration:
        return CameraIntrinsics.from_calibration(sup.camera_calibration, sup.camera_width, sup.camera_height)
    return CameraIntrinsics.from_hfov(sup.camera_width, sup.camera_height, sup.camera_hfov_deg)


def pose_sample(bridge: Any, s: Any) -> PoseSample:
    """One telemetry state as a pose sample at the time it was received (metres from home, degrees)."""
    from firmware_bridge.maneuvers import position_from_home

    here = position_from_home(bridge, s)
    return PoseSample(s.last_update_t, here.north_m, here.east_m, -here.down_m, s.yaw_deg, s.pitch_deg, s.roll_deg,
                      float(getattr(s, "gimbal_pitch_deg", math.nan)), float(getattr(s, "gimbal_yaw_deg", math.nan)))


async def feed_poses(bridge: Any, history: PoseHistory) -> None:
    """Keep every telemetry change in `history` (runs until cancelled)."""
    history.add(pose_sample(bridge, bridge.state))
    async for s in bridge.hub.changes():
        history.add(pose_sample(bridge, s))


@dataclass(frozen=True)
class Shot:
    """One view from the camera: the frame (RGB; None when there is none, `why` says why) and its pose at capture."""

    rgb: np.ndarray | None
    why: str | None
    pose: PoseSample | None = None
    pitch_deg: float = math.nan
    capture_t: float = math.nan
    seq: int = 0
    bgr: np.ndarray | None = None  # as received, for keeping
    waited_s: float = 0.0  # the longest this shot was allowed to wait for its frame


class StreamFrames:
    """The camera's frames for the look-around, and the pose history they are placed from."""

    def __init__(self, source: FrameSource, history: PoseHistory, sup: Any, event: Callable[[str, Any], None]) -> None:
        self.source, self.history, self.sup, self.event = source, history, sup, event
        self.lost = False
        self.losses = 0
        self._feeder: asyncio.Task | None = None

    @classmethod
    def start(cls, bridge: Any, sup: Any, event: Callable[[str, Any], None]) -> "StreamFrames":
        """Open the camera (its reader thread) and start keeping telemetry; call on the running event loop."""
        frames = cls(FrameSource(sup.camera, latency_s=sup.camera_latency_s).start(), PoseHistory(), sup, event)
        frames._feeder = asyncio.get_running_loop().create_task(feed_poses(bridge, frames.history), name="pose-history")
        return frames

    def clock(self) -> float:
        return self.source.clock()

    @property
    def has_gimbal(self) -> bool:
        """Whether the gimbal reports its attitude (the newest telemetry has one): it can take other pitches."""
        s = self.history.newest()
        return s is not None and s.has_gimbal

    async def shot(self, settled_t: float, first: bool) -> Shot:
        """The first frame captured after `settled_t` and the pose then; waits at most the frame timeout."""
        wait = self.sup.camera_frame_timeout_s if (first or not self.lost) else 0.0
        f = await asyncio.to_thread(self.source.next_after, settled_t, wait)
        if f is None:
            if not self.lost:
                self.lost, self.losses = True, self.losses + 1
                self.event("camera_lost", {"source": self.sup.camera, "waited_s": wait,
                                           "why": self.source.failures[-1] if self.source.failures else "no new frame"})
            if self.sup.camera_lost == "return":
                raise CameraLost(f"camera {self.sup.camera!r} lost (supervisor.camera_lost: return)")
            return Shot(None, "no frame: camera lost", waited_s=wait)
        if self.lost:
            self.lost = False
            self.event("camera_restored", {"source": self.sup.camera, "frame": f.seq})
        pose = self.history.at(f.capture_t)
        if pose is None:
            return Shot(None, "no telemetry at the frame's capture time", capture_t=f.capture_t, seq=f.seq, bgr=f.image,
                        waited_s=wait)
        h, w = f.image.shape[:2]
        if f.image.ndim != 3 or (w, h) != (self.sup.camera_width, self.sup.camera_height):
            return Shot(None, f"frame is {w}x{h}, the camera is {self.sup.camera_width}x{self.sup.camera_height}",
                        pose, capture_t=f.capture_t, seq=f.seq, bgr=f.image, waited_s=wait)
        rgb = np.ascontiguousarray(f.image[:, :, ::-1])
        return Shot(rgb, None, pose, pose.camera_pitch_deg(self.sup.camera_pitch_deg), f.capture_t, f.seq, f.image, wait)

    def newest(self) -> tuple[np.ndarray, PoseSample | None] | None:
        """The newest frame (BGR) and the pose it was taken at, if it is fresher than the frame timeout.

        For the detector and the VLM, which take whatever the camera shows now and never wait for it.
        """
        f = self.source.latest()
        if f is None or self.clock() - f.capture_t > self.sup.camera_frame_timeout_s:
            return None
        return f.image, self.history.at(f.capture_t)

    def close(self) -> None:
        if self._feeder is not None:
            self._feeder.cancel()
            self._feeder = None
        self.source.close()

"""A frame is placed from the pose the vehicle had when it was taken, not from the pose it has when it arrives.

Synthetic clock and telemetry throughout (no sleeping): a frame source whose reader is handed frames by the
test, a pose history fed by hand, and the camera model's own rays.
"""

from __future__ import annotations

import math
import queue

import numpy as np
import pytest

from onboard.perception.camera_model import (CameraIntrinsics, CameraPose, camera_axes, ground_hit, pixel_ray,
                                             project_points)
from onboard.perception.frame_source import FrameSource
from onboard.perception.pose_history import PoseHistory, PoseSample, lerp_angle


class Clock:
    """The supervisor's clock, moved by the test."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class HandedFrames:
    """A capture whose frames the test hands over (a camera without the camera); None ends the stream."""

    def __init__(self) -> None:
        self.frames: queue.Queue = queue.Queue()

    def read(self):
        img = self.frames.get()
        return (img is not None), img

    def release(self) -> None:
        pass


def project(intr: CameraIntrinsics, pose: CameraPose, north: float, east: float, down: float) -> tuple[float, float]:
    """The pixel where a world point appears (`camera_model.project_points`, the inverse of `pixel_ray`)."""
    px, depth = project_points(intr, pose, np.array([[north, east, down]]))
    assert depth[0] > 0, "behind the camera"
    return float(px[0, 0]), float(px[0, 1])


def camera_pose_of(s: PoseSample, mount_pitch: float = -15.0) -> CameraPose:
    return CameraPose(north=s.north, east=s.east, down=-s.up, yaw_deg=s.camera_heading_deg(),
                      pitch_deg=s.camera_pitch_deg(mount_pitch))


def turning_and_moving(t0: float = 9.0, t1: float = 10.3, dt: float = 0.05) -> PoseHistory:
    """Hovering 30 m up until 10.0, then turning right at 90 deg/s while drifting east at 5 m/s."""
    h = PoseHistory()
    for k in range(int(round((t1 - t0) / dt)) + 1):
        t = t0 + k * dt
        moving = max(0.0, t - 10.0)
        h.add(PoseSample(t, 0.0, 5.0 * moving, 30.0, (90.0 * moving) % 360.0))
    return h


def test_a_frame_read_300_ms_late_puts_a_sign_where_it_was():
    intr = CameraIntrinsics.from_hfov(1920, 1080, 81.0)
    clock, capture = Clock(10.0), HandedFrames()
    history = turning_and_moving()
    sign = (40.0, 10.0, 0.0)  # a sign's foot on the ground, 40 m north and 10 m east of home
    taken = history.at(10.0)
    u, v = project(intr, camera_pose_of(taken), *sign)
    with FrameSource("handed", latency_s=0.3, clock=clock, opener=lambda _s: capture) as source:
        clock.t = 10.3  # the frame taken at 10.0 arrives 300 ms later, the vehicle turned and moved meanwhile
        capture.frames.put(np.zeros((1080, 1920, 3), np.uint8))
        frame = source.next_after(10.0, 30.0)
        capture.frames.put(None)
    assert frame is not None and frame.received_t == 10.3 and frame.capture_t == pytest.approx(10.0)
    at_capture = camera_pose_of(history.at(frame.capture_t))
    now = camera_pose_of(history.newest())
    placed = ground_hit(at_capture, pixel_ray(intr, at_capture, u, v))
    wrong = ground_hit(now, pixel_ray(intr, now, u, v))
    assert math.hypot(placed[0] - sign[0], placed[1] - sign[1]) < 0.1
    assert math.hypot(wrong[0] - sign[0], wrong[1] - sign[1]) > 15.0  # 27 degrees and 1.5 m off: another building


def test_next_after_waits_for_a_frame_taken_after_t_and_answers_none_in_time():
    clock, capture = Clock(5.0), HandedFrames()
    with FrameSource("handed", latency_s=0.1, clock=clock, opener=lambda _s: capture) as source:
        capture.frames.put(np.zeros((4, 4, 3), np.uint8))
        old = source.next_after(0.0, 30.0)
        assert old is not None and old.capture_t == pytest.approx(4.9)
        assert source.next_after(5.0, 0.05) is None  # the only frame was taken before 5.0: none after it, bounded
        clock.t = 5.2
        capture.frames.put(np.ones((4, 4, 3), np.uint8))
        new = source.next_after(5.0, 30.0)
        assert new is not None and new.seq == old.seq + 1 and new.capture_t == pytest.approx(5.1)
        capture.frames.put(None)
    with pytest.raises(ValueError, match="latency"):
        FrameSource("x", latency_s=-0.1)


def test_a_source_that_does_not_open_is_retried_and_named():
    from onboard.perception.frame_source import FrameSourceError, open_capture

    with pytest.raises(FrameSourceError, match="cannot be opened"):
        open_capture("/nonexistent/video.mp4")
    with FrameSource("/nonexistent/video.mp4", reopen_s=0.01, reopen_max_s=0.02) as source:
        assert source.next_after(-1e9, 0.2) is None
    assert source.failures and "cannot be opened" in source.failures[0] and source.opens == 0


def test_poses_are_interpolated_across_north_and_held_briefly_after_the_newest():
    assert lerp_angle(350.0, 10.0, 0.5) == pytest.approx(0.0)
    assert lerp_angle(10.0, 350.0, 0.25) == pytest.approx(5.0)
    h = PoseHistory(span_s=10.0, hold_s=0.5)
    assert h.at(1.0) is None
    assert h.add(PoseSample(1.0, 0.0, 0.0, 30.0, 350.0, gimbal_pitch_deg=-10.0, gimbal_yaw_deg=190.0))
    assert h.add(PoseSample(2.0, 10.0, -4.0, 20.0, 10.0, gimbal_pitch_deg=-30.0, gimbal_yaw_deg=170.0))
    mid = h.at(1.5)
    assert (mid.north, mid.east, mid.up) == pytest.approx((5.0, -2.0, 25.0))
    assert mid.yaw_deg == pytest.approx(0.0) and mid.gimbal_pitch_deg == pytest.approx(-20.0)
    assert mid.gimbal_yaw_deg == pytest.approx(180.0) and mid.camera_heading_deg() == pytest.approx(180.0)
    assert h.at(0.9) is None and h.at(2.6) is None  # before the history, and too long after it
    assert h.at(2.4).north == 10.0  # a frame a little newer than the telemetry takes the newest pose
    assert not h.add(PoseSample(1.5, 0.0, 0.0, 30.0, 0.0))  # out of order: refused
    assert not h.add(PoseSample(3.0, math.nan, 0.0, 30.0, 0.0))  # no position: refused
    assert h.add(PoseSample(13.0, 0.0, 0.0, 30.0, 0.0)) and len(h) == 1  # older than the span: forgotten


def test_without_a_gimbal_the_camera_looks_along_the_nose_at_its_mounting_pitch():
    h = PoseHistory()
    h.add(PoseSample(0.0, 0.0, 0.0, 30.0, 100.0))
    h.add(PoseSample(1.0, 0.0, 0.0, 30.0, 120.0, gimbal_pitch_deg=-45.0))
    first, mid = h.at(0.0), h.at(0.4)
    assert not first.has_gimbal and first.camera_heading_deg() == 100.0 and first.camera_pitch_deg(-15.0) == -15.0
    assert not mid.has_gimbal  # the nearer sample had none
    assert h.at(0.6).camera_pitch_deg(-15.0) == -45.0 and h.at(0.6).camera_heading_deg() == pytest.approx(112.0)
    h.add(PoseSample(2.0, 0.0, 0.0, 30.0, 120.0, gimbal_pitch_deg=-45.0, gimbal_yaw_deg=200.0))
    assert h.at(2.0).camera_heading_deg() == 200.0  # a gimbal's own heading from north, not the nose's


def test_a_distorting_lens_does_not_bend_the_bearings():
    import cv2

    plain = CameraIntrinsics.from_hfov(1920, 1080, 81.0)
    lens = CameraIntrinsics(plain.fx, plain.fy, plain.cx, plain.cy, 1920, 1080, (-0.25, 0.08, 0.0, 0.0, 0.0))
    pose = CameraPose(north=0.0, east=0.0, down=-30.0, yaw_deg=0.0, pitch_deg=-15.0)
    forward, right, down = camera_axes(pose)
    target = np.array([60.0, 35.0, 0.0])  # north, east, down: off to the right, near the frame's edge
    d = target - np.array([0.0, 0.0, -30.0])
    cam = np.array([[d @ right, d @ down, d @ forward]])
    px, _ = cv2.projectPoints(cam, np.zeros(3), np.zeros(3), lens.matrix, np.array(lens.dist))
    u, v = px[0, 0]
    assert project_points(lens, pose, target[None, :])[0][0] == pytest.approx(px[0, 0], abs=1e-6)  # one projection
    ray = pixel_ray(lens, pose, u, v)
    assert np.degrees(np.arccos(ray @ (d / np.linalg.norm(d)))) < 0.05
    naive = pixel_ray(plain, pose, u, v)
    assert np.degrees(np.arccos(naive @ (d / np.linalg.norm(d)))) > 1.0  # the distortion was worth undoing

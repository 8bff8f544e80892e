"""The look-around's camera frames: lost once and restored once, never waiting past the frame timeout, placed by
the pose at capture; `camera_lost: return` ends the mission in a return.

A frame source whose frames the test hands over (each waited for before it is asked of), a synthetic clock and
a pose history fed by hand; the waits that find no frame are bounded by a 0.1 s timeout (the least the config
allows), nothing sleeps otherwise.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest

from onboard.config import AerieConfig
from onboard.perception.frame_source import FrameSource
from onboard.perception.pose_history import PoseHistory, PoseSample
from onboard.supervisor.camera_frames import CameraLost, StreamFrames, camera_intrinsics, streams_frames
from tests.perception.test_pose_at_capture import Clock, HandedFrames


def _sup(**over):
    base = AerieConfig().supervisor
    return replace(base, perception="camera", camera="handed", camera_width=64, camera_height=48,
                   camera_frame_timeout_s=0.1, camera_latency_s=0.25, **over)


def _frames(sup, clock, capture, events):
    history = PoseHistory()
    for k in range(21):  # hovering 30 m up at (10 N, 5 E), turning from 0 to 100 degrees over 0..2 s
        history.add(PoseSample(k * 0.1, 10.0, 5.0, 30.0, 5.0 * k))
    source = FrameSource("handed", latency_s=sup.camera_latency_s, clock=clock, opener=lambda _s: capture).start()
    return StreamFrames(source, history, sup, lambda kind, detail: events.append((kind, detail)))


def test_a_camera_that_stops_is_lost_once_waits_once_per_look_around_and_is_restored():
    sup, clock, capture, events = _sup(), Clock(1.25), HandedFrames(), []
    frames = _frames(sup, clock, capture, events)
    try:
        capture.frames.put(np.zeros((48, 64, 3), np.uint8))
        assert frames.source.next_after(1.0, 30.0) is not None  # handed over (the reader thread has it)
        shot = asyncio.run(frames.shot(1.0, first=True))
        assert shot.why is None and shot.capture_t == pytest.approx(1.0)
        assert shot.pose.yaw_deg == pytest.approx(50.0)  # the pose at capture (1.0 s), not the newest (100 deg)
        assert shot.rgb.shape == (48, 64, 3) and shot.pitch_deg == sup.camera_pitch_deg  # no gimbal: the mount's
        lost = asyncio.run(frames.shot(1.5, first=False))  # nothing taken after 1.5: waited, then lost
        assert lost.rgb is None and lost.why == "no frame: camera lost" and lost.waited_s == 0.1
        assert [k for k, _ in events] == ["camera_lost"] and frames.losses == 1
        again = asyncio.run(frames.shot(1.5, first=False))  # while lost, the other views of a look-around do not wait
        assert again.waited_s == 0.0 and [k for k, _ in events] == ["camera_lost"]
        assert asyncio.run(frames.shot(1.5, first=True)).waited_s == 0.1  # the next look-around's first view waits
        clock.t = 2.0
        capture.frames.put(np.zeros((48, 64, 3), np.uint8))
        assert frames.source.next_after(1.5, 30.0) is not None
        back = asyncio.run(frames.shot(1.5, first=False))
        assert back.why is None and [k for k, _ in events] == ["camera_lost", "camera_restored"] and not frames.lost
    finally:
        capture.frames.put(None)
        frames.close()


def test_a_frame_of_another_size_or_without_telemetry_is_an_empty_view_named():
    sup, clock, capture, events = _sup(), Clock(1.25), HandedFrames(), []
    frames = _frames(sup, clock, capture, events)
    try:
        capture.frames.put(np.zeros((40, 64, 3), np.uint8))
        assert frames.source.next_after(1.0, 30.0) is not None
        shot = asyncio.run(frames.shot(1.0, first=True))
        assert shot.rgb is None and shot.why == "frame is 64x40, the camera is 64x48"
        clock.t = 9.0  # taken at 8.75: long after the newest telemetry (2.0 s)
        capture.frames.put(np.zeros((48, 64, 3), np.uint8))
        assert frames.source.next_after(8.0, 30.0) is not None
        shot = asyncio.run(frames.shot(8.0, first=True))
        assert shot.rgb is None and shot.why == "no telemetry at the frame's capture time"
        assert events == []  # frames came: the camera is not lost
    finally:
        capture.frames.put(None)
        frames.close()


def test_camera_lost_return_ends_the_mission_in_a_return():
    sup, clock, capture, events = _sup(camera_lost="return"), Clock(1.25), HandedFrames(), []
    frames = _frames(sup, clock, capture, events)
    try:
        with pytest.raises(CameraLost, match="camera_lost: return") as err:
            asyncio.run(frames.shot(1.0, first=True))
        assert err.value.finish == "rtl" and [k for k, _ in events] == ["camera_lost"]
    finally:
        capture.frames.put(None)
        frames.close()


def test_which_frames_and_which_intrinsics(tmp_path):
    from onboard.perception.camera_model import CalibrationError, CameraIntrinsics

    base = AerieConfig().supervisor
    assert not streams_frames(base) and not streams_frames(replace(base, perception="camera"))
    assert not streams_frames(replace(base, perception="camera", camera="world"))
    assert streams_frames(replace(base, perception="camera", camera="rtsp://192.168.144.25:8554/main.264"))
    assert camera_intrinsics(base) == CameraIntrinsics.from_hfov(1920, 1080, 81.0)
    lens = CameraIntrinsics(1000.0, 1001.0, 950.0, 540.0, 1920, 1080, (-0.2, 0.05, 0.0, 0.0, 0.0))
    lens.write_calibration(str(tmp_path / "lens.yaml"))
    assert camera_intrinsics(replace(base, camera_calibration=str(tmp_path / "lens.yaml"))) == lens
    with pytest.raises(CalibrationError, match="1920x1080 camera; the frames are 1280x720"):
        camera_intrinsics(replace(base, camera_width=1280, camera_height=720, camera_calibration=str(tmp_path / "lens.yaml")))

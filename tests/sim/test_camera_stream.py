"""The simulator's camera as a video stream, read by the supervisor's own frame source over a real socket.

The stream renders from the sim vehicle's truth (its UDP control channel) and serves MJPEG over HTTP;
`onboard.perception.frame_source.FrameSource` reads it through OpenCV's FFMPEG capture, as it reads a
gimbal camera's RTSP stream. A small camera keeps the rendering cheap on a busy machine.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from onboard.perception.camera_model import CalibrationError, CameraIntrinsics
from onboard.perception.frame_source import FrameSource
from sim.camera_stream import CameraStream, camera_pose, truth_over_udp, write_calibration
from sim.world.render import Camera
from tests.supervisor.flightkit import world

SMALL = Camera(width=480, height=270, fov_deg=81.0)
WAIT_S = 60.0  # bounded waits, generous for a loaded machine; nothing below depends on how long they take


@pytest.fixture(scope="module")
def vehicle():
    from sim.vehicle import SimVehicleProcess

    w = world()
    lat, lon = (float(v) for v in w.graph.latlon[100])
    with SimVehicleProcess(home=(lat, lon, 10.0), prearm_delay_s=0.5) as v:
        yield v


def test_the_stream_shows_the_view_from_the_vehicles_truth(vehicle):
    w = world()
    with CameraStream(w, truth_over_udp(vehicle.control_port), camera=SMALL, fps=4.0, latency_s=0.2) as stream, \
            FrameSource(stream.url, latency_s=0.2) as source:
        assert stream.url.startswith("http://127.0.0.1:")
        first = source.next_after(-1e9, WAIT_S)
        assert first is not None and first.image.shape == (270, 480, 3)
        later = source.next_after(first.capture_t + 1e-6, WAIT_S)  # "the next frame captured after t"
        assert later is not None and later.seq > first.seq and later.capture_t > first.capture_t
        assert later.capture_t == pytest.approx(later.received_t - 0.2)
        # the parked vehicle's truth: the frame is the renderer's view from there (JPEG aside)
        truth = vehicle.truth()
        eye, heading, pitch = camera_pose(truth, w.origin, SMALL.pitch_deg)
        assert pitch == truth.get("gimbal_pitch_deg", SMALL.pitch_deg)  # the gimbal's, else the mounting pitch
        expected, _ = stream._renderer.render_at(eye, heading, pitch)
        diff = np.abs(later.image.astype(float) - expected.astype(float)).mean()
        assert diff < 4.0, diff
        other, _ = stream._renderer.render_at(eye, (heading + 90.0) % 360.0, pitch)
        assert np.abs(later.image.astype(float) - other.astype(float)).mean() > 4 * diff + 5.0  # not any view


def test_the_gimbal_in_the_truth_turns_and_tilts_the_view():
    w = world()
    truth = {"lat": float(w.graph.latlon[100][0]), "lon": float(w.graph.latlon[100][1]), "rel_alt": 30.0,
             "yaw_deg": 350.0, "gimbal_pitch_deg": -40.0, "gimbal_yaw_deg": 10.0}  # the gimbal's yaw from north
    eye, heading, pitch = camera_pose(truth, w.origin, -15.0)
    assert heading == pytest.approx(10.0) and pitch == -40.0
    assert eye[:2] == pytest.approx(w.graph.xy[100], abs=0.5) and eye[2] == 30.0


def test_an_unplugged_stream_delivers_nothing_and_a_replugged_one_is_read_again(vehicle):
    w = world()
    truth = truth_over_udp(vehicle.control_port)
    stream = CameraStream(w, truth, camera=SMALL, fps=4.0, latency_s=0.0).start()
    port = int(stream.url.split(":")[2].split("/")[0])
    with FrameSource(stream.url, reopen_s=0.1, reopen_max_s=0.5) as source:
        assert source.next_after(-1e9, WAIT_S) is not None
        stream.close()  # unplugged
        unplugged_t = source.clock()
        assert source.next_after(unplugged_t, 1.0) is None  # bounded: answers None, never hangs
        deadline = time.monotonic() + WAIT_S
        while not any("read" in f or "open" in f for f in source.failures) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert source.failures, "the reader saw the stream end"
        with CameraStream(w, truth, camera=SMALL, fps=4.0, latency_s=0.0, port=port):  # plugged back in
            back = source.next_after(unplugged_t, WAIT_S)
            assert back is not None and back.capture_t >= unplugged_t and source.opens >= 2


def test_the_simulated_cameras_calibration_is_read_back_and_a_wrong_one_refused(tmp_path):
    path = write_calibration(tmp_path / "cam.yaml", 1920, 1080, 81.0)
    intr = CameraIntrinsics.from_calibration(str(path), 1920, 1080)
    pinhole = CameraIntrinsics.from_hfov(1920, 1080, 81.0)
    assert (intr.fx, intr.fy, intr.cx, intr.cy, intr.width, intr.height) == pytest.approx(
        (pinhole.fx, pinhole.fy, pinhole.cx, pinhole.cy, 1920, 1080))
    assert intr.dist == (0.0,) * 5 and intr.undistort(100.0, 50.0) == (100.0, 50.0)
    with pytest.raises(CalibrationError, match="1920x1080 camera; the frames are 960x540"):
        CameraIntrinsics.from_calibration(str(path), 960, 540)
    with pytest.raises(CalibrationError, match="does not exist"):
        CameraIntrinsics.from_calibration(str(tmp_path / "none.yaml"))
    (tmp_path / "bad.yaml").write_text("%YAML:1.0\n---\nimage_width: 10\n")
    with pytest.raises(CalibrationError, match="camera_matrix"):
        CameraIntrinsics.from_calibration(str(tmp_path / "bad.yaml"))

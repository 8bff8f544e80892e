"""Bearings and ranges from intrinsics + pose, the geoinstruct text, and the perception step."""

import asyncio
import math

import numpy as np
import pytest

from onboard.map.compass import compass8
from onboard.perception.camera_model import CameraIntrinsics, CameraPose, bearing_elevation, localise_box, pixel_ray
from onboard.perception.captioning import DetectionCaptioner
from onboard.perception.geoinstruct import Landmark, relative_direction
from onboard.perception.oracle_detector import OracleDetector, StaticGroundTruth
from onboard.perception.pipeline import PerceptionPipeline

CAM = CameraIntrinsics.from_hfov(640, 480, 90.0)  # fx = 320


def test_centre_pixel_looks_along_the_heading():
    pose = CameraPose(0, 0, -30, yaw_deg=90, pitch_deg=0)
    b, e = bearing_elevation(pixel_ray(CAM, pose, 320, 240))
    assert b == pytest.approx(90) and e == pytest.approx(0, abs=1e-9)
    b, _ = bearing_elevation(pixel_ray(CAM, pose, 640, 240))  # right edge: +45 deg
    assert b == pytest.approx(135)


def test_ground_plane_range_from_altitude_and_pitch():
    # 30 m up, looking 45 deg down: the image centre hits the ground 30 m ahead
    pose = CameraPose(10, 5, -30, yaw_deg=0, pitch_deg=-45)
    loc = localise_box(CAM, pose, (310, 230, 330, 240), "person")
    assert loc.range_method == "ground-plane"
    assert loc.range_m == pytest.approx(30.0, rel=1e-6)
    assert loc.north == pytest.approx(40.0) and loc.east == pytest.approx(5.0)


def test_nadir_camera_top_of_image_is_north():
    pose = CameraPose(0, 0, -50, yaw_deg=0, pitch_deg=-90)
    loc = localise_box(CAM, pose, (310, 0, 330, 40))  # near the top edge
    assert compass8(loc.bearing_deg) == "N" and loc.range_m > 0


def test_size_prior_when_the_ray_never_reaches_the_ground():
    pose = CameraPose(0, 0, -2, yaw_deg=0, pitch_deg=10)  # looking up
    loc = localise_box(CAM, pose, (300, 100, 340, 154.4), "person")  # 54.4 px tall
    assert loc.range_method == "size-prior"
    slant = 320 * 1.7 / 54.4  # 10 m along the ray
    assert loc.range_m == pytest.approx(slant * math.cos(math.radians(loc.elevation_deg)), rel=1e-6)  # horizontal


def test_relative_directions_and_compass():
    assert relative_direction(90, 90) == "ahead"
    assert relative_direction(180, 90) == "right"
    assert relative_direction(0, 90) == "left"
    assert relative_direction(270, 90) == "behind"
    assert relative_direction(45, 90) == "ahead-left"
    assert compass8(359) == "N" and compass8(225) == "SW"


def test_pipeline_with_the_oracle_detector_builds_geoinstruct():
    truth = StaticGroundTruth([("person", (300, 300, 340, 420)), ("car", (10, 10, 60, 40))])
    pipeline = PerceptionPipeline(OracleDetector(truth), CAM)
    pose = CameraPose(0, 0, -20, yaw_deg=90, pitch_deg=-30)
    out = asyncio.run(pipeline.perceive_async(np.zeros((480, 640, 3), np.uint8), pose, ["person"], [Landmark("water tower", 100, 100)]))
    pipeline.close()
    assert [o.label for o in out.objects] == ["person"]
    person = out.objects[0]
    assert 80 < person.bearing_deg < 100 and person.range_m is not None and person.range_m > 0
    assert "person (1.00) bearing" in out.geoinstruct and "ahead" in out.geoinstruct
    assert "Landmarks: water tower bearing 045° (NE), ahead-left, 141 m." in out.geoinstruct
    assert out.caption.startswith("In view: 1 person")
    obs = out.as_observation()
    assert obs["detections"][0]["label"] == "person" and obs["geoinstruct"] == out.geoinstruct


def test_caption_without_objects():
    assert DetectionCaptioner().caption(np.zeros((4, 4, 3), np.uint8), []) == "No objects of interest detected in view."

"""Detections of the goal's kind become the goal's fused sighting; other kinds, one view, or no kind do not.

The shipped person detector on a real photo (skipped where `make models` has not run) and detections with
synthetic boxes (the `Detection` a detector returns), placed and fused as `SightingFusion` does for read signs.
Expected bearings and ranges are worked out here with plain trigonometry, not with `camera_model`.
"""

from __future__ import annotations

import math

import pytest

from onboard.agent.goal_description import parse_goal_description
from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.camera_sightings import CameraView, FusionSettings, SightingFusion
from onboard.perception.kind_sightings import detections_read
from onboard.perception.types import Detection
from onboard.vocab.goal_kind import goal_kind

INSTRUCTION = "Find a person by the fountain, about 100 m east of Kiasma."
GAZETTEER = ["Kiasma"]
W, H, ALT = 640, 480, 12.0
INTR = CameraIntrinsics.from_hfov(W, H, 90.0)  # fx = 320


def _view(heading, index, east=0.0, north=0.0, pitch=0.0, image=None):
    return CameraView(image, heading, east, north, ALT, pitch, index)


def _expected(heading, box, intr=INTR):
    """Bearing of the box centre's column and ground range of its foot, level camera (pitch 0)."""
    x0, _, x1, y1 = box
    a = ((x0 + x1) / 2 - intr.cx) / intr.fx  # right, per unit forward
    b = (y1 - intr.cy) / intr.fy  # down, per unit forward
    return (heading + math.degrees(math.atan(a))) % 360, ALT * math.hypot(1.0, a) / b


def _fusion():
    goal = parse_goal_description(INSTRUCTION, GAZETTEER)
    return SightingFusion(GAZETTEER, [], FusionSettings(), goal.names_goal), goal


def test_a_person_seen_from_two_views_is_the_goal_at_its_bearing_and_range():
    kind = goal_kind(INSTRUCTION)
    fusion, goal = _fusion()
    box = (400.0, 200.0, 440.0, 300.0)  # right of centre, foot 60 px below the horizon
    bearing, rng = _expected(80.0, box)
    for k in range(2):  # the same person in two frames at the same heading (two gimbal pitches' worth)
        read = detections_read([Detection("person", 0.6, box)], _view(80.0, k), kind, INTR)
        assert len(read.sightings) == 1
        s = read.sightings[0]
        assert s.bearing_deg == pytest.approx(bearing, abs=0.05) and s.range_m == pytest.approx(rng, rel=1e-3)
        fusion.add_detected(7, _view(80.0, k), read)
    _, pois = fusion.sightings(7, 0.0, 0.0)
    assert len(pois) == 1 and goal.names_goal(pois[0].name)  # the agent takes it for the goal
    assert pois[0].name == "person"
    assert pois[0].bearing == pytest.approx(bearing, abs=0.1) and pois[0].distance == pytest.approx(rng, abs=0.1)


def test_one_view_never_places_the_goal_however_sure_the_box():
    kind = goal_kind(INSTRUCTION)
    fusion, _ = _fusion()
    box = (300.0, 200.0, 340.0, 300.0)
    fusion.add_detected(3, _view(0.0, 0), detections_read([Detection("person", 0.99, box)], _view(0.0, 0), kind, INTR))
    assert fusion.sightings(3, 0.0, 0.0) == ((), ())
    assert fusion.goal_evidence()[0]["views"] == 1 and not fusion.goal_evidence()[0]["confirmed"]


def test_two_weak_boxes_do_not_add_up_to_the_goal():
    kind = goal_kind(INSTRUCTION)
    fusion, _ = _fusion()
    for k in range(2):  # 1 - 0.6^2 = 0.64 < fused_confidence 0.65
        v = _view(0.0, k)
        fusion.add_detected(3, v, detections_read([Detection("person", 0.4, (300, 200, 340, 300))], v, kind, INTR))
    assert fusion.sightings(3, 0.0, 0.0) == ((), ())


def test_detections_of_another_kind_are_not_the_goal():
    kind = goal_kind(INSTRUCTION)
    fusion, _ = _fusion()
    for k in range(3):
        v = _view(0.0, k)
        read = detections_read([Detection("car", 0.95, (300, 200, 340, 300))], v, kind, INTR)
        assert read.sightings == ()
        fusion.add_detected(3, v, read)
    assert fusion.sightings(3, 0.0, 0.0) == ((), ()) and fusion.goal_evidence() == []


def test_a_box_whose_foot_is_above_the_horizon_is_not_placed():
    kind = goal_kind("Find the red kiosk near Kiasma")  # a kiosk has no height prior: nothing else ranges it
    read = detections_read([Detection("red kiosk", 0.9, (300, 100, 340, 200))], _view(0.0, 0), kind, INTR)
    assert kind.phrase == "red kiosk" and read.sightings == ()
    below = detections_read([Detection("red kiosk", 0.9, (300, 200, 340, 300))], _view(0.0, 0), kind, INTR)
    assert [s.name for s in below.sightings] == ["kiosk"]


def test_the_shipped_person_detector_places_the_astronaut(ssdlite_path, rgb):
    """Real weights, a real photo: the person's box becomes the goal's sighting from two views."""
    from onboard.inference.ort_session import OrtSession
    from onboard.perception.ssdlite_detector import SsdliteDetector

    det = SsdliteDetector(OrtSession(ssdlite_path, providers=["CPUExecutionProvider"]))
    image = rgb("astronaut.png")
    intr = CameraIntrinsics.from_hfov(image.shape[1], image.shape[0], 60.0)
    kind = goal_kind(INSTRUCTION)
    fusion, goal = _fusion()
    found = det.detect(image, [kind.phrase])
    best = max(found, key=lambda d: d.score)
    bearing, rng = _expected(200.0, best.box, intr)
    for k in range(2):
        v = _view(200.0, k, image=image)
        fusion.add_detected(1, v, detections_read(found, v, kind, intr))
    _, pois = fusion.sightings(1, 0.0, 0.0)
    assert [p.name for p in pois] == ["person"] and goal.names_goal("person")
    assert pois[0].bearing == pytest.approx(bearing, abs=1.0) and pois[0].distance == pytest.approx(rng, rel=0.05)
    coffee = rgb("coffee.png")  # no person in it: nothing to place
    assert detections_read(det.detect(coffee, [kind.phrase]), _view(0.0, 2, image=coffee), kind, intr).sightings == ()

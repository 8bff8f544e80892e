"""A sign on a wall seen aslant, read by the real PP-OCRv5 reader once the map's wall is warped upright."""

import math

import numpy as np
import pytest

from onboard.perception.text_range import FootprintRanger
from sim.sign_frames import SignSpec, render_frame

NAME = "Ravintola Löyly"


def _wall_block(spec: SignSpec, half_m: float = 6.0, depth_m: float = 12.0) -> np.ndarray:
    """The footprint (east, north) of a block whose front wall is the one `render_frame` draws the sign on."""
    b = math.radians(spec.bearing_deg)
    centre = np.array([spec.distance_m * math.cos(b), spec.distance_m * math.sin(b)])  # north, east
    along = math.radians(spec.bearing_deg + 90 + spec.facing_deg)
    t = np.array([math.cos(along), math.sin(along)])
    back = np.array([-t[1], t[0]])
    if np.dot(back, centre) < 0:  # away from the camera
        back = -back
    ring = [centre - t * half_m, centre + t * half_m, centre + t * half_m + back * depth_m, centre - t * half_m + back * depth_m]
    return np.array([[p[1], p[0]] for p in ring])


def _frame(facing_deg: float):
    spec = SignSpec(NAME, 10.0, 30.0, letter_m=0.8, base_m=3.0, facing_deg=facing_deg, font=0)
    frame = render_frame([spec], rng=np.random.default_rng(1), width=1280, height=720, hfov_deg=81.0, altitude_m=12.0)
    return frame, FootprintRanger([_wall_block(spec)], [14.0])


def _exact(seen, truth):
    return [s for s in seen if s.name == NAME and s.slips == 0
            and abs((s.bearing_deg - truth.bearing_deg + 180) % 360 - 180) <= 5.0]


def test_a_sign_seen_70_degrees_aslant_is_read_upright_and_placed(text_reader):
    frame, walls = _frame(70.0)
    truth = frame.truths[0]
    assert truth.visible >= 0.9 and truth.letter_px >= 10
    flat = text_reader.sightings(frame.image, frame.intr, frame.pose, [NAME])
    upright = text_reader.sightings(frame.image, frame.intr, frame.pose, [NAME], walls=walls)
    assert not _exact(flat, truth), "the frame alone does not read it (or this test shows nothing)"
    hits = _exact(upright, truth)
    assert hits, [(s.text, s.slips) for s in upright]
    assert text_reader.timings_ms["rectify"] > 0
    # placed from the frame: the map's wall gives its range
    ranged = text_reader.sightings(frame.image, frame.intr, frame.pose, [NAME], ranger=walls)
    best = _exact(ranged, truth)[0]
    assert best.range_method == "map-footprint" and best.range_m == pytest.approx(truth.distance_m, abs=3.0)


def test_a_sign_seen_square_on_is_read_once(text_reader):
    """The wall faces the camera: nothing is warped and the one line read is not repeated."""
    frame, walls = _frame(0.0)
    seen = text_reader.sightings(frame.image, frame.intr, frame.pose, [NAME], walls=walls)
    assert len(_exact(seen, frame.truths[0])) == 1
    assert text_reader.timings_ms["rectify"] < text_reader.timings_ms["detect"]


def test_without_the_setting_the_reader_reads_the_frame_alone(text_reader):
    from dataclasses import replace

    frame, walls = _frame(70.0)
    plain = replace(text_reader, rectify=None)
    assert not _exact(plain.sightings(frame.image, frame.intr, frame.pose, [NAME], walls=walls), frame.truths[0])


def test_the_flight_loops_reader_reads_it_upright_with_the_map(text_reader):
    """`CameraReader` (what the look-around calls) hands the reader the view's pose and the map's walls."""
    from onboard.perception.camera_sightings import CameraReader, CameraView

    frame, walls = _frame(70.0)
    pose = frame.pose
    view = CameraView(frame.image, pose.yaw_deg, pose.east, pose.north, pose.altitude_m, pose.pitch_deg)
    with_map = CameraReader(text_reader, frame.intr, ["Kiasma"], [NAME], ranger=walls).read_view(view)
    without = CameraReader(text_reader, frame.intr, ["Kiasma"], [NAME]).read_view(view)
    assert _exact(with_map.sightings, frame.truths[0]) and not _exact(without.sightings, frame.truths[0])

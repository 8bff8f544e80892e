"""Name matching, line joining, DB box decoding and sign ranges: the reader's own code, without the models."""

import math

import numpy as np

from sim.reading_scores import goal_for
from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.name_matching import goal_sightings, match_name
from onboard.perception.text_detection import DbTextDetector, input_size
from onboard.perception.text_range import FootprintRanger, locate_text
from onboard.perception.text_reader import join_lines, to_sightings
from onboard.perception.types import ReadText

NAMES = ["Alepa Kallio", "Alepa Töölö", "Café Engel", "Kiasma"]
INTR = CameraIntrinsics.from_hfov(800, 500, 90.0)


def read(text, box, conf=0.95):
    x0, y0, x1, y1 = box
    return ReadText(text, conf, box, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


def test_case_and_diacritics_aside_the_name_is_exact():
    assert match_name("CAFE ENGEL", 0.9, NAMES).name == "Café Engel"
    assert match_name('"alepa töölö".', 0.9, NAMES).slips == 0


def test_gaps_the_reader_did_not_see_are_no_slips():
    names = ["Ravintolalaiva M/S Maria", "H&M", "Robert's Coffee", "Alepa Kallio"]
    assert match_name("RavintolalaivaMSMaria", 0.9, names) == match_name("Ravintolalaiva M/S Maria", 0.9, names)
    assert match_name("RavintolalaivaMSMaria", 0.9, names).slips == 0
    assert match_name("Roberts Coffee", 0.9, names).name == "Robert's Coffee"
    assert match_name("H&M", 0.9, names).slips == 0  # two letters once compacted: matched as written only
    assert match_name("HM", 0.9, names) is None
    # a wrong letter is still a slip, gaps or not: near, never exact
    m = match_name("AlepaKallia", 0.9, names)
    assert m.name == "Alepa Kallio" and m.slips == 1


def test_one_slip_is_near_and_costs_confidence():
    m = match_name("Alepa Kalio", 0.9, NAMES)
    assert m.name == "Alepa Kallio" and m.slips == 1 and m.confidence < 0.9


def test_a_read_as_close_to_two_names_is_neither():
    assert match_name("Alepa Kallia", 0.9, ["Alepa Kallio", "Alepa Kallin"]) is None


def test_short_names_bear_no_typo():
    assert match_name("Kiasmo", 0.9, ["Kiasma"]).slips == 1  # 6 letters: one slip
    assert match_name("Alko", 0.9, ["Alku"]) is None


def test_a_near_read_may_start_with_a_look_alike_letter_and_one_business_is_one_candidate():
    m = match_name("littala Store", 0.9, ["Iittala Store", "Stockmann"])
    assert m is not None and m.name == "Iittala Store" and m.slips == 1
    assert match_name("Kittala Store", 0.9, ["Iittala Store"]) is None  # another first letter: not near
    m = match_name("Roberts cofee", 0.9, ["Robert's coffee", "Robert's Coffee", "Stockmann"])
    assert m is not None and m.name in {"Robert's coffee", "Robert's Coffee"} and m.slips == 1
    assert match_name("Alepa Kallia", 0.9, ["Alepa Kallio", "Alepa Kallin"]) is None  # two businesses: neither


def test_only_an_exact_read_of_the_goal_locks_it():
    goal = goal_for("Alepa Kallio", ["Kiasma"])
    pose = CameraPose(0, 0, -10, yaw_deg=0, pitch_deg=-10)
    reads = [read("ALEPA KALLIO", (380, 260, 470, 280)), read("Alepa Kalllo", (100, 260, 190, 280)),
             read("Alepa Töölö", (600, 260, 690, 280)), read("Alepa", (200, 100, 240, 120))]
    seen = to_sightings(reads, INTR, pose, NAMES)
    locked = goal_sightings(seen, goal, 0.8)
    assert [s.text for s in locked] == ["ALEPA KALLIO"]
    near = next(s for s in seen if s.text == "Alepa Kalllo")
    assert near.close_to == "Alepa Kallio" and near.name == "Alepa Kalllo"
    assert goal_sightings(seen, goal, 0.99) == []  # not confident enough


def test_a_name_on_two_lines_is_read_whole():
    goal = goal_for("Alepa Kallio", ["Kiasma"])
    stacked = [read("ALEPA", (300, 200, 360, 220)), read("KALLIO", (295, 224, 370, 244))]
    assert [r.text for r in join_lines(stacked)] == ["ALEPA KALLIO"]
    pose = CameraPose(0, 0, -10, yaw_deg=0, pitch_deg=-10)
    assert len(goal_sightings(to_sightings(stacked, INTR, pose, NAMES), goal, 0.8)) == 1
    apart = [read("ALEPA", (100, 200, 160, 220)), read("KALLIO", (500, 300, 575, 320))]
    assert join_lines(apart) == []


def test_db_boxes_grow_back_by_the_unclip_distance():
    prob = np.zeros((64, 128), np.float32)
    prob[20:30, 10:90] = 0.9  # an 80 x 10 shrunk text region
    det = DbTextDetector(session=_NoSession(), unclip_ratio=1.5, min_height_px=1)
    (box,) = det.boxes(prob, 256, 128)  # the frame is twice the map's size
    d = 80 * 10 * 1.5 / (2 * (80 + 10))  # 6.67 map px on every side
    x0, y0, x1, y1 = box.box
    assert math.isclose(y1 - y0, 2 * (10 - 1 + 2 * d), rel_tol=0.15)
    assert math.isclose(x1 - x0, 2 * (80 - 1 + 2 * d), rel_tol=0.05)
    assert box.score > 0.85
    prob[40:50, 10:90] = 0.5  # below the box threshold on average
    assert len(det.boxes(prob, 256, 128)) == 1


def test_detector_input_is_a_multiple_of_32():
    assert input_size(800, 500, 800) == (800, 512)
    assert input_size(1920, 1080, 960) == (960, 544)


def test_bearing_from_the_column_and_range_from_the_plane():
    pose = CameraPose(0, 0, -13.0, yaw_deg=90.0, pitch_deg=0.0)
    # lettering bottom 10 m below the camera (3 m up), at 10 m ahead: row cy + f * 10 / 10
    v = INTR.cy + INTR.fy * 1.0
    bearing, rng, method = locate_text((INTR.cx - 5, v - 8, INTR.cx + 5, v), INTR, pose, sign_height_m=3.0)
    assert math.isclose(bearing, 90.0, abs_tol=0.5) and method == "ground-plane"
    assert math.isclose(rng, 10.0, rel_tol=0.01)
    # level with the camera: the ray never comes down, no range from the plane
    _, rng, method = locate_text((INTR.cx - 5, INTR.cy - 20, INTR.cx + 5, INTR.cy - 1), INTR, pose, sign_height_m=3.0)
    assert rng is None and method is None


def test_the_map_gives_the_range_to_the_first_facade():
    square = lambda e, n, s: np.array([[e, n], [e + s, n], [e + s, n + s], [e, n + s]], float)  # noqa: E731
    ranger = FootprintRanger([square(20, -5, 10), square(50, -5, 10)])
    pose = CameraPose(0, 0, -30.0, yaw_deg=90.0, pitch_deg=-15.0)
    bearing, rng, method = locate_text((395, 300, 405, 310), INTR, pose, sign_height_m=3.0, ranger=ranger)
    assert method == "map-footprint" and math.isclose(rng, 20.0, abs_tol=0.5)
    assert ranger.range_along(0, 0, 270.0, 400) is None  # nothing to the west


class _NoSession:
    input_names = ["x"]


def test_a_sign_seen_over_a_lower_building_is_placed_on_the_wall_behind_it():
    """A 6 m kiosk at 20 m and a 20 m block at 50 m east: a sight line from 30 m up that clears the kiosk's top
    meets the block's wall; without heights the kiosk's is taken."""
    square = lambda e, n, s: np.array([[e, n], [e + s, n], [e + s, n + s], [e, n + s]], float)  # noqa: E731
    plan = [square(20, -5, 10), square(50, -5, 10)]
    # the line down to a sign 3 m up on the block's wall, 50 m away: 27 m down over 50 m
    elevation = -math.degrees(math.atan2(27.0, 50.0))
    assert FootprintRanger(plan).range_along(0, 0, 90.0, 400, 30.0, elevation) == 20.0
    with_heights = FootprintRanger(plan, [6.0, 20.0])
    assert math.isclose(with_heights.range_along(0, 0, 90.0, 400, 30.0, elevation), 50.0, abs_tol=1e-6)
    # steeper, to the kiosk's own sign 3 m up at 20 m: the kiosk it is
    steep = -math.degrees(math.atan2(27.0, 20.0))
    assert math.isclose(with_heights.range_along(0, 0, 90.0, 400, 30.0, steep), 20.0, abs_tol=1e-6)
    # no elevation given: walls in plan, as before
    assert with_heights.range_along(0, 0, 90.0, 400) == 20.0

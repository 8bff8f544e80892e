"""Reading shop names on facades with PP-OCRv5 (real ONNX Runtime on the real model files).

The frames are drawn here (`sim.sign_frames`: DejaVu lettering
warped onto walls in perspective, blurred, noised, JPEG-compressed) with a
fixed seed, so each test knows where every name truly is.
"""

import numpy as np
import pytest

from sim.reading_scores import goal_for
from sim.sign_frames import SignSpec, render_frame
from onboard.perception.name_matching import goal_sightings

GOAL = "Alepa Kallio"
NAMES = ["Alepa Kallio", "Alepa Töölö", "Alepa Kallia", "Kiasma", "Tavastia"]


def _angle(a, b):
    return abs((a - b + 180.0) % 360.0 - 180.0)


def frame(specs, seed=3, altitude=12.0, yaw=30.0):
    return render_frame(specs, rng=np.random.default_rng(seed), yaw_deg=yaw, altitude_m=altitude, goal=GOAL)


def test_reads_the_goal_at_its_bearing(text_reader):
    f = frame([SignSpec(GOAL, 48.0, 30.0, letter_m=1.0, facing_deg=15.0),
               SignSpec("Tavastia", 10.0, 35.0, letter_m=1.0, facing_deg=-20.0)])
    truth = next(t for t in f.truths if t.name == GOAL)
    seen = text_reader.sightings(f.image, f.intr, f.pose, NAMES)
    locked = goal_sightings(seen, goal_for(GOAL, ["Kiasma"]), 0.8)
    assert len(locked) == 1, [(s.text, s.confidence) for s in seen]
    assert _angle(locked[0].bearing_deg, truth.bearing_deg) <= 2.0
    # the lettering's base on a plane 3 m up, seen from 12 m: a few metres at 30 m
    assert locked[0].range_method == "ground-plane"
    assert abs(locked[0].range_m - truth.distance_m) < 0.2 * truth.distance_m
    assert any(s.name == "Tavastia" for s in seen)


def test_look_alikes_do_not_lock_the_goal(text_reader):
    """Another branch and a name one letter off are read, and are not the goal."""
    f = frame([SignSpec("Alepa Töölö", 20.0, 25.0, letter_m=1.0, facing_deg=10.0),
               SignSpec("Alepa Kallia", 50.0, 28.0, letter_m=1.0, facing_deg=-10.0, upper=True)], seed=5)
    seen = text_reader.sightings(f.image, f.intr, f.pose, NAMES)
    assert {"Alepa Töölö", "Alepa Kallia"} <= {s.name for s in seen}, [s.text for s in seen]
    assert goal_sightings(seen, goal_for(GOAL, ["Kiasma"]), 0.8) == []


def test_one_letter_off_is_close_to_the_goal_but_never_it(text_reader):
    """With only the goal known, a sign one letter off is reported near it, not as it."""
    f = frame([SignSpec("Alepa Kallia", 40.0, 25.0, letter_m=1.0)], seed=7)
    seen = text_reader.sightings(f.image, f.intr, f.pose, [GOAL])
    near = [s for s in seen if s.close_to == GOAL]
    assert near and all(s.slips == 1 and s.name != GOAL for s in near), [(s.text, s.close_to) for s in seen]
    assert goal_sightings(seen, goal_for(GOAL, ["Kiasma"]), 0.0) == []


def test_a_frame_without_the_goal_reads_no_goal(text_reader):
    f = frame([SignSpec("Kiasma", 25.0, 30.0, letter_m=1.2), SignSpec("Tavastia", 55.0, 30.0, letter_m=1.0)], seed=11)
    seen = text_reader.sightings(f.image, f.intr, f.pose, NAMES)
    assert {"Kiasma", "Tavastia"} <= {s.name for s in seen}
    assert goal_sightings(seen, goal_for(GOAL, ["Kiasma"]), 0.0) == []


def test_names_are_matched_whatever_the_reader_makes_of_diacritics(text_reader):
    """Blurred lettering loses its dots ("Paaposti"); folded, it is still the name, as typed by an operator."""
    f = frame([SignSpec("Kirjakauppa Åkerlund", 30.0, 22.0, letter_m=1.0), SignSpec("Pääposti", 60.0, 24.0, letter_m=1.0)], seed=2)
    seen = text_reader.sightings(f.image, f.intr, f.pose, ["Kirjakauppa Åkerlund", "Pääposti"])
    assert {"Kirjakauppa Åkerlund", "Pääposti"} <= {s.name for s in seen if s.slips == 0}


def test_reads_diacritics_on_sharp_lettering(text_reader):
    """The charset's ä and ö come through the CTC decoding (Å is rarer in PP-OCR's training and often read A)."""
    f = render_frame([SignSpec("Alepa Töölö", 20.0, 16.0, letter_m=1.2), SignSpec("Pääposti", 60.0, 16.0, letter_m=1.2)],
                     rng=np.random.default_rng(2), yaw_deg=30.0, altitude_m=8.0, degrade=False)
    texts = {r.text for r in text_reader.read(f.image)}
    assert {"Alepa Töölö", "Pääposti"} <= texts, texts


def test_timings_are_reported(text_reader):
    text_reader.read(np.full((200, 300, 3), 128, np.uint8))
    assert set(text_reader.timings_ms) == {"detect", "recognise", "rectify", "total"}
    assert text_reader.read(np.full((200, 300, 3), 128, np.uint8)) == []


def test_rejects_a_non_image(text_reader):
    from onboard.perception.types import PerceptionError

    with pytest.raises(PerceptionError):
        text_reader.read(np.zeros((10, 10), np.float32))


def test_the_fp32_detector_it_is_made_from_reads_the_same_goal(text_reader, text_reader_fp32):
    """The INT8 detector (the default) and its fp32 original lock the same goal at the same bearing."""
    f = frame([SignSpec(GOAL, 48.0, 30.0, letter_m=1.0, facing_deg=15.0),
               SignSpec("Tavastia", 10.0, 35.0, letter_m=1.0, facing_deg=-20.0)])
    locks = [goal_sightings(r.sightings(f.image, f.intr, f.pose, NAMES), goal_for(GOAL, ["Kiasma"]), 0.8)
             for r in (text_reader, text_reader_fp32)]
    assert [len(x) for x in locks] == [1, 1]
    assert _angle(locks[0][0].bearing_deg, locks[1][0].bearing_deg) <= 0.5
    assert text_reader.detector.session.path.name == "ppocrv5_det.int8.onnx"
    assert text_reader_fp32.detector.session.path.name == "ppocrv5_det.onnx"

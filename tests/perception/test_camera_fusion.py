"""Sightings from reads: names the goal by the instruction's words, places reads, and fuses them over views and steps.

No model here: the reads are `TextSighting`s as `CameraReader` makes them, so
each rule of `SightingFusion` is checked on its own (the reader on real frames is
tests/perception/test_camera_sightings.py).
"""

from __future__ import annotations

import math

from onboard.agent.goal_description import parse_goal_description
from onboard.perception.camera_sightings import (CameraView, FusionSettings, SightingFusion, ViewRead, goal_names,
                                                 look_around_headings, names_to_read)
from onboard.perception.types import TextSighting

GOAL = "Alepa Kallio"
GAZETTEER = ["Kiasma", "Tavastia"]
INSTRUCTION = f"Find {GOAL}. It is about 200 m north of Kiasma."


def _read(name, bearing, rng, conf, *, slips=0, close_to=None, text=None):
    return TextSighting(name=name, bearing_deg=bearing, range_m=rng, range_method="ground-plane", confidence=conf,
                        box=(0, 0, 10, 10), text=text or name, close_to=close_to, slips=slips)


def _view(east=0.0, north=0.0, index=0):
    return CameraView(None, 0.0, east, north, 30.0, -15.0, index)


def _near(conf=0.9):  # "Alepa Kalio": one slip, confidence halved as name_matching does
    return _read("Alepa Kalio", 90.0, 40.0, conf * 0.5, slips=1, close_to=GOAL, text="Alepa Kalio")


def _fusion():
    return SightingFusion(GAZETTEER, [GOAL], FusionSettings())


def test_goal_names_are_what_the_instruction_calls_the_goal():
    assert goal_names(INSTRUCTION, parse_goal_description(INSTRUCTION, GAZETTEER).names_goal) == [GOAL]
    other = "Kiasma is 300 m south of the goal, Café Engel."
    assert goal_names(other, parse_goal_description(other, GAZETTEER).names_goal) == ["Café Engel"]


def test_the_names_read_for_are_the_missions_or_what_the_vehicle_understood_and_the_words_runs():
    lower = "find gaijin, a sushi place about 200 m north of Kiasma."
    names_goal = parse_goal_description(lower, GAZETTEER).names_goal
    assert goal_names(lower, names_goal) == []  # a lower-case name is no run of name-like words
    assert names_to_read(lower, names_goal, "gaijin") == ["gaijin"]  # as the vehicle said it understood
    names_goal = parse_goal_description(INSTRUCTION, GAZETTEER).names_goal
    assert names_to_read(INSTRUCTION, names_goal, GOAL) == [GOAL]  # one name once
    assert names_to_read(INSTRUCTION, names_goal, None, given="Alepa") == ["Alepa"]  # the mission's own


def test_a_confident_exact_read_is_a_goal_sighting_placed_from_where_the_drone_is_now():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_read(GOAL, 90.0, 40.0, 0.95),)))
    _, pois = f.sightings(0, 0.0, 0.0)
    assert [(p.name, p.bearing, p.distance) for p in pois] == [(GOAL, 90.0, 40.0)]
    # from 40 m south-west of there, the same sign is 40 m east + 40 m north: NE, 56.6 m
    f.add(1, _view(0.0, -40.0), ViewRead(0, 0.0, (_read(GOAL, 45.0, 40.0 * math.sqrt(2), 0.95),)))
    _, pois = f.sightings(1, 0.0, -40.0)
    assert pois[0].name == GOAL and abs(pois[0].bearing - 45.0) < 0.5 and abs(pois[0].distance - 56.6) < 0.5


def test_one_misread_does_not_lock_the_goal_and_the_same_read_from_a_second_view_does():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_near(),)))
    assert f.sightings(0, 0.0, 0.0)[1] == ()
    f.add(1, _view(index=1), ViewRead(1, 72.0, (_near(),)))
    _, pois = f.sightings(1, 0.0, 0.0)
    assert [p.name for p in pois] == [GOAL]


def test_misreads_far_apart_are_two_signs_and_neither_locks():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_near(),)))
    f.add(1, _view(0.0, 300.0), ViewRead(0, 0.0, (_near(),)))  # 40 m east of a place 300 m north
    assert f.sightings(1, 0.0, 300.0)[1] == ()
    assert len(f.goal_evidence()) == 2 and not any(g["confirmed"] for g in f.goal_evidence())


def test_repeats_within_one_view_count_once():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_near(), _near(), _near())))
    assert f.sightings(0, 0.0, 0.0)[1] == ()


def test_a_weak_exact_read_alone_does_not_lock():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_read(GOAL, 90.0, 40.0, 0.6),)))
    assert f.sightings(0, 0.0, 0.0)[1] == ()


def test_landmarks_come_as_landmarks_and_unknown_names_close_by_as_names_read():
    f = _fusion()
    f.add(0, _view(), ViewRead(0, 0.0, (_read("Kiasma", 180.0, 150.0, 0.9), _read("Kahvila Sävy", 10.0, 30.0, 0.9),
                                        _read("Far Away Bar", 10.0, 300.0, 0.9))))
    lms, pois = f.sightings(0, 0.0, 0.0)
    assert [(s.name, s.bearing, s.distance) for s in lms] == [("Kiasma", 180.0, 150.0)]
    assert [p.name for p in pois] == ["Kahvila Sävy"]  # the far one is beyond the names' range
    # a group is reported at the steps it is read at, not forever after
    assert f.sightings(1, 0.0, 0.0) == ((), ())


def test_a_read_without_a_range_places_nothing():
    f = _fusion()
    s = TextSighting(GOAL, 90.0, None, None, 0.95, (0, 0, 10, 10), GOAL)
    f.add(0, _view(), ViewRead(0, 0.0, (s,)))
    assert f.sightings(0, 0.0, 0.0) == ((), ())


def test_look_around_headings_cover_the_circle():
    assert look_around_headings(0.0, 5) == [0.0, 72.0, 144.0, 216.0, 288.0]
    assert look_around_headings(350.0, 4) == [350.0, 80.0, 170.0, 260.0]


def test_a_sign_the_description_names_in_full_is_the_goal_though_the_names_to_read_lack_it():
    text = "The Body Shop is two hundred and twenty metres south of Kiasma."
    names_goal = parse_goal_description(text, GAZETTEER).names_goal
    f = SightingFusion(GAZETTEER, ["Body Shop"], FusionSettings(), names_goal)  # "The" read as a sentence's word
    f.add(0, _view(), ViewRead(0, 0.0, (_read("THE BODY SHOP", 90.0, 40.0, 0.9),)))
    _, pois = f.sightings(0, 0.0, 0.0)
    assert [p.name for p in pois] == ["THE BODY SHOP"] and names_goal(pois[0].name)  # the agent takes it
    # a longer name that only contains it is another shop, kept as a name read close by
    g = SightingFusion(GAZETTEER, ["Body Shop"], FusionSettings(), names_goal)
    g.add(0, _view(), ViewRead(0, 0.0, (_read("The Body Shop Outlet", 90.0, 40.0, 0.9),)))
    assert g.goal_evidence() == [] and [p.name for p in g.sightings(0, 0.0, 0.0)[1]] == ["The Body Shop Outlet"]
    # weak reads of it in two spellings from two views are one sign, and fuse as any read of the goal
    h = SightingFusion(GAZETTEER, ["Body Shop"], FusionSettings(), names_goal)
    h.add(0, _view(), ViewRead(0, 0.0, (_read("The Body Shop", 90.0, 40.0, 0.5),)))
    assert h.sightings(0, 0.0, 0.0)[1] == ()
    h.add(1, _view(index=1), ViewRead(1, 72.0, (_read("THE BODY SHOP", 90.0, 40.0, 0.5),)))
    assert [p.name for p in h.sightings(1, 0.0, 0.0)[1]] == ["The Body Shop"] and len(h.goal_evidence()) == 1
    # a misread of it is no read of the goal by the description (near reads go by the names to read)
    k = SightingFusion(GAZETTEER, ["Body Shop"], FusionSettings(), names_goal)
    k.add(0, _view(), ViewRead(0, 0.0, (_read("The Body Shap", 90.0, 40.0, 0.9, slips=1),)))
    assert k.goal_evidence() == []


def test_a_fragment_the_description_also_spells_is_no_read_of_the_goal():
    text = "From Kiasma it is around 500 metres south: that is where K&K (a hairdresser) is."
    names_goal = parse_goal_description(text, GAZETTEER).names_goal
    assert names_goal("a") and names_goal("K&K")  # the description's words: a fragment read is one too
    f = SightingFusion(GAZETTEER, ["K & K"], FusionSettings(), names_goal)
    f.add(0, _view(), ViewRead(0, 0.0, (_read("A", 90.0, 40.0, 0.99), _read("m", 10.0, 30.0, 0.99))))
    assert f.goal_evidence() == []
    f.add(1, _view(), ViewRead(0, 0.0, (_read("K&K", 90.0, 40.0, 0.95),)))  # the goal's name, its gaps aside
    assert [p.name for p in f.sightings(1, 0.0, 0.0)[1]] == ["K&K"]

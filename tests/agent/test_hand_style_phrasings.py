"""Shapes found in a hand-written development set (bench/tasks/instructions_hand_dev.json), each with
a new example written here: units as typed, a distance in a clause of its own, lower-case and
misspelt directions, bearings in degrees, short names and initials, and a landmark's name inside
another place's name."""

import pytest

from onboard.agent.goal_description import parse_goal_description

GAZ = ["Kiasma", "Stockmann", "Sokos", "Ateneum", "M/S Maria", "Postitalo", "Hotelli Torni", "Korkein hallinto-oikeus",
       "Helsingin keskustakirjasto Oodi", "Suomen Kansallisteatteri", "Pohjolan toimitalo", "Nordstrom Building"]

CASES = [
    ("Bar Uusi is approx 300 mtr north of Kiasma.", [("offset", ("Kiasma",), 0, 300)]),
    ("Bar Uusi is 450 mts east of Kiasma.", [("offset", ("Kiasma",), 2, 450)]),
    ("Bar Uusi lies .45 km south of Kiasma.", [("offset", ("Kiasma",), 4, 450)]),
    ("Bar Uusi is half a klick west of Kiasma.", [("offset", ("Kiasma",), 6, 500)]),
    ("Bar Uusi: 2 clicks NE of Kiasma", [("offset", ("Kiasma",), 1, 2000)]),
    ("bar uusi is just north of postitalo, 250 m", [("offset", ("Postitalo",), 0, 250)]),
    ("Goal: Bar Uusi\nReference: Postitalo\nDirection: east\nDistance: 300 m", [("offset", ("Postitalo",), 2, 300)]),
    ("TARGET Bar Uusi\nFROM Postitalo\nDIR SW\nDIST 0.4 km", [("offset", ("Postitalo",), 5, 400)]),
    ("bar uusi lies 350 m ne of pohjolan toimitalo", [("offset", ("Pohjolan toimitalo",), 1, 350)]),
    ("Bar Uusi is 300 m nroth of Stockmann.", [("offset", ("Stockmann",), 0, 300)]),
    ("Bar Uusi is 300 m sotuh-east of Stockmann.", [("offset", ("Stockmann",), 3, 300)]),
    ("Bar Uusi is 600 m from Ateneum on a bearing of 100°.", [("offset", ("Ateneum",), 2, 600)]),
    ("Bar Uusi, 200 m from Ateneum at 225 degrees", [("offset", ("Ateneum",), 5, 200)]),
    ("Bar Uusi is 150 m east of Oodi.", [("offset", ("Helsingin keskustakirjasto Oodi",), 2, 150)]),
    ("Bar Uusi: 300 m NW of Kansallisteatteri", [("offset", ("Suomen Kansallisteatteri",), 7, 300)]),
    ("Bar Uusi is 200 m south of KHO.", [("offset", ("Korkein hallinto-oikeus",), 4, 200)]),
    ("Original Sokos Hotel Presidentti is 350 m west of Kiasma.", [("offset", ("Kiasma",), 6, 350)]),
    ("Ravintolalaiva M/S Maria lies 250 m north-east of Postitalo.", [("offset", ("Postitalo",), 1, 250)]),
    ("Ateneum Bistro is 400 m north of Stockmann.", [("offset", ("Stockmann",), 0, 400)]),
]


def _read(text):
    g = parse_goal_description(text, GAZ)
    return [(r.kind, r.landmarks, r.direction, None if r.distance is None else round(r.distance)) for r in g.relations]


@pytest.mark.parametrize("text, want", CASES)
def test_read_right(text, want):
    assert _read(text) == want


def test_a_capitalised_neighbour_is_not_a_label():
    # FROM, DIR and N are labels and directions in capitals, not the rest of the landmark's name
    assert _read("FROM Kiasma N 300 m") == [("offset", ("Kiasma",), 0, 300)]
    assert _read("Bar Uusi is 300 m east of Kiasma Helsinki") == []  # "Kiasma Helsinki": another name


def test_words_that_only_look_like_slips_are_left_alone():
    assert _read("Bar Uusi eats 300 m of Kiasma") == []
    assert _read("Bar Uusi is 300 m from Kiasma at 400 degrees") == []  # no such bearing: no direction

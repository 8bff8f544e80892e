"""Descriptions as people write them, by hand (none from the task generator): every phrasing
family of issue 14 must be read into the right relations: landmark, direction, distance."""

import pytest

from onboard.agent.goal_description import parse_goal_description

GAZ = ["Postitalo", "Pääesikunta", "Kiasma", "Stockmann", "Hotelli Torni", "Ateneum", "Vanha kirkko",
       "Suomen Pankki", "Sanomatalo", "Musiikkitalo", "Helsingin tuomiokirkko", "KPMG", "EY", "G18", "M/S Maria",
       "Marski by Scandic", "World Trade Center Helsinki", "WTC Plaza"]

# (family, text, [(kind, landmarks, direction 0 = N clockwise, metres)])
CASES = [
    ("object", "Ravintola Savotta is about 400 m north of Postitalo.", [("offset", ("Postitalo",), 0, 400)]),
    ("object", "The bar Bronda sits some 350 metres to the south-west of Sanomatalo",
     [("offset", ("Sanomatalo",), 5, 350)]),
    # The landmark as the subject: the goal lies the other way.
    ("subject", "Postitalo is about 400 m north of Ravintola Savotta.", [("offset", ("Postitalo",), 4, 400)]),
    ("subject", "Kiasma lies roughly 250 metres to the east of the café Fazer.", [("offset", ("Kiasma",), 6, 250)]),
    ("subject", "You'll find Stockmann 300 m south-west of Levykauppa Äx", [("offset", ("Stockmann",), 1, 300)]),
    ("subject", "Musiikkitalo stands about 0.6 km NW of where I want to go: Kafe Kampi.",
     [("offset", ("Musiikkitalo",), 3, 600)]),
    ("subject", "Kiasma is south of Café Engel", [("ray", ("Kiasma",), 0, None)]),
    ("imperative", "From Ateneum fly north-east for 300 m and land at Café Ekberg.", [("offset", ("Ateneum",), 1, 300)]),
    ("imperative", "Head 200 metres east from Hotelli Torni to reach Kafe Kulma.",
     [("offset", ("Hotelli Torni",), 2, 200)]),
    ("imperative", "Take off towards Suomen Pankki, then continue 450 m south of it to Bar Loose.",
     [("offset", ("Suomen Pankki",), 4, 450)]),
    ("number_words", "Kafe Kulma is five hundred and fifty metres west of Ateneum.", [("offset", ("Ateneum",), 6, 550)]),
    ("number_words", "Go a quarter of a kilometre due south of Kiasma to Grano.", [("offset", ("Kiasma",), 4, 250)]),
    ("number_words", "Zucchini: three quarters of a kilometre north-east of Vanha kirkko.",
     [("offset", ("Vanha kirkko",), 1, 750)]),
    ("number_words", "It's a kilometre and a half east of Musiikkitalo, the shop Kauko.",
     [("offset", ("Musiikkitalo",), 2, 1500)]),
    ("number_words", "Café Regatta is one point two kilometres NW of Sanomatalo", [("offset", ("Sanomatalo",), 7, 1200)]),
    ("units", "Bar Mate is 0,45km S of Stockmann.", [("offset", ("Stockmann",), 4, 450)]),
    ("units", "Bar Mate: approx. 450m SE from Stockmann", [("offset", ("Stockmann",), 3, 450)]),
    ("units", "Bar Mate is c. 1.1 kilometers east of KPMG.", [("offset", ("KPMG",), 2, 1100)]),
    ("units", "Bar Mate is ~ 90 meters north of EY", [("offset", ("EY",), 0, 90)]),
    ("lowercase", "bar mate is about 300 m west of paaesikunta", [("offset", ("Pääesikunta",), 6, 300)]),
    ("lowercase", "from hotelli torni go south-east 250 metres to find cafe aalto",
     [("offset", ("Hotelli Torni",), 3, 250)]),
    ("lowercase", "musiikkitalo is 200 m north of kafe kampi", [("offset", ("Musiikkitalo",), 4, 200)]),
    ("typo", "Bar Mate is 300 m west of Kiamsa", [("offset", ("Kiasma",), 6, 300)]),
    ("typo", "Bar Mate is 300 m west of Helsingin tuomikirkko", [("offset", ("Helsingin tuomiokirkko",), 6, 300)]),
    ("two_relations", "Café Esplanad is 300 m east of Stockmann and 200 m south of Kiasma.",
     [("offset", ("Stockmann",), 2, 300), ("offset", ("Kiasma",), 4, 200)]),
    ("two_relations", "Sushibar Kamome: from Ateneum 150 m W; from Postitalo 400 m SW.",
     [("offset", ("Ateneum",), 6, 150), ("offset", ("Postitalo",), 5, 400)]),
    ("two_sentence", "Find Café Engel. It is about 300 m north-east of Ateneum.", [("offset", ("Ateneum",), 1, 300)]),
    ("two_sentence", "Start at Postitalo. Café Engel is 300 m to the west.", [("offset", ("Postitalo",), 6, 300)]),
    ("two_sentence", "Sanomatalo is the reference. Go 400 m north from there to Café Engel.",
     [("offset", ("Sanomatalo",), 0, 400)]),
    ("label", "Target: Café Engel. Reference: Postitalo, then 250 m heading south",
     [("offset", ("Postitalo",), 4, 250)]),
    ("label", "Goal: Café Engel\nLandmark: Kiasma\nOffset: 400 m NE", [("offset", ("Kiasma",), 1, 400)]),
    ("label", "target=Café Engel; ref=Stockmann; 600 m north", [("offset", ("Stockmann",), 0, 600)]),
    ("between", "Café Engel is between Kiasma and Stockmann.", [("between", ("Kiasma", "Stockmann"), None, None)]),
    ("between", "Halfway between Postitalo and Sanomatalo you will find Café Engel",
     [("between", ("Postitalo", "Sanomatalo"), None, None)]),
    ("abbrev", "Café Engel: 400 m NE of Postitalo", [("offset", ("Postitalo",), 1, 400)]),
    ("abbrev", "N.E. of Postitalo by 400 m: Café Engel", [("offset", ("Postitalo",), 1, 400)]),
    ("abbrev", "Café Engel 250 m S.W. from Kiasma", [("offset", ("Kiasma",), 5, 250)]),
    ("ray", "Café Engel is north of Kiasma and west of Stockmann.",
     [("ray", ("Kiasma",), 0, None), ("ray", ("Stockmann",), 6, None)]),
]


@pytest.mark.parametrize("family, text, want", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_family_read_right(family, text, want):
    got = [(r.kind, r.landmarks, r.direction, r.distance) for r in parse_goal_description(text, GAZ).relations]
    assert got == [(k, lm, d, None if m is None else float(m)) for k, lm, d, m in want]


def test_every_family_has_hand_examples():
    families = {c[0] for c in CASES}
    assert {"object", "subject", "imperative", "number_words", "units", "lowercase", "two_relations",
            "two_sentence", "label", "between", "abbrev", "ray"} <= families


@pytest.mark.parametrize("text, goal", [
    ("bar mate is about 300 m west of paaesikunta", "Bar Mate"),
    ("Target: Café Engel. Reference: Postitalo, then 250 m heading south", "Café Engel"),
    ("cafe engel: 400 m NE of Postitalo", "Café Engel"),
    ("Postitalo is about 400 m north of Ravintola Savotta.", "Ravintola Savotta"),
    # label forms on lines: the next line's label does not go on with the name, nor a label in capitals before it
    ("Goal: Chalupa\nLandmark: Postitalo\nDirection: N\nDistance: 300 m", "Chalupa"),
    ("TARGET Bar Mate\nFROM Postitalo\nDIR W\nDIST 250 m", "Bar Mate"),
])
def test_the_goal_is_recognised_as_typed(text, goal):
    g = parse_goal_description(text, GAZ)
    assert g.names_goal(goal)
    assert not g.names_goal("Postitalo")  # a landmark is never the goal

"""Issue 34: what the reader makes of phrasings no template was written for, and the line the vehicle says back.

Each text here is hand-written for its point (a name followed by any verb, a bearing in degrees, feet, "of
it", legs); the gazetteer is the real world's, so landmark matching runs as it flies.
"""

import math

import pytest

from onboard.agent.goal_description import parse_goal_description
from onboard.agent.instruction_reader import Reading, read_instruction
from onboard.agent.understood import understand

GAZ = ["Kiasma", "Postitalo", "Helsingin tuomiokirkko", "Ateneum", "Stockmann"]


def read(text):
    return parse_goal_description(text, GAZ)


@pytest.mark.parametrize("verb", ["should be right there", "ought to be visible", "has a green door",
                                  "waits at the corner", "opened last spring", "sells coffee"])
def test_a_goal_name_followed_by_any_verb_is_the_goal(verb):
    g = read(f"Head over to Kiasma, and Mumin Kaffe {verb}, 200 m north of it.")
    assert g.names_goal("Mumin Kaffe") and g.goal_name == "Mumin Kaffe"
    assert not g.names_goal("Mumin")  # a part of the name is not the goal


def test_a_chain_name_is_not_the_goal_of_a_longer_name_the_vehicle_also_reads():
    g = read("Find Alepa Rautatientori, 300 m east of Postitalo.")
    assert not g.names_goal("Alepa") and g.names_goal("Alepa Rautatientori")
    g = read("find alepa kluuvi 300 m east of postitalo")  # lower case: the longest name read wins
    assert not g.names_goal("Alepa", also_read=["Alepa Kluuvi"]) and g.names_goal("Alepa Kluuvi")


@pytest.mark.parametrize("text, bearing", [
    ("Bearing 045 from Kiasma, range 400 m: Mumin Kaffe.", 45.0),
    ("Mumin Kaffe is at 030° from Kiasma, 400 m out.", 30.0),
    ("Mumin Kaffe, heading 275 from Kiasma for 400 m.", 275.0),
    ("Mumin Kaffe is on the 120 radial from Kiasma at 400 m.", 120.0),
    ("Mumin Kaffe: N 37° E of Kiasma, 400 m.", 37.0),
    ("Position Kiasma 010/400m, target Mumin Kaffe.", 10.0),
    ("Mumin Kaffe lies 400 m NNE of Kiasma.", 22.5),
])
def test_a_bearing_is_read_exactly_and_flown_as_an_angle(text, bearing):
    (r,) = read(text).relations
    assert r.landmarks == ("Kiasma",) and r.bearing_deg == pytest.approx(bearing) and r.distance == 400.0
    e, n = r.offset()  # the geometry uses the angle, not its 8-point sector
    assert math.degrees(math.atan2(e, n)) % 360.0 == pytest.approx(bearing)


@pytest.mark.parametrize("text, metres", [
    ("Mumin Kaffe is 1650 ft south of Kiasma.", 502.92),
    ("Mumin Kaffe is 1,650 feet south of Kiasma.", 502.92),
    ("Mumin Kaffe is 550 yards south of Kiasma.", 502.92),
    ("Mumin Kaffe is 0.3 miles south of Kiasma.", 482.8032),
    ("Mumin Kaffe is half a mile south of Kiasma.", 804.672),
    ("Mumin Kaffe is 1/4 mile south of Kiasma.", 402.336),
    ("Mumin Kaffe is 0.25 NM south of Kiasma.", 463.0),
    ("Mumin Kaffe is 0,4 km south of Kiasma.", 400.0),
])
def test_distances_in_any_unit_are_read_exactly(text, metres):
    (r,) = read(text).relations
    assert r.distance == pytest.approx(metres, abs=0.05) and r.bearing_deg == 180.0


@pytest.mark.parametrize("text", [
    "Kiasma is the reference. The place I want is Fuku, some 550 m west of it.",
    "Look for Kiasma first. From there, Fuku is 550 m to the west.",
    "Take Kiasma as your reference. From that building, Fuku is 550 m west.",
])
def test_of_it_binds_to_the_named_landmark(text):
    g = read(text)
    assert [(r.landmarks, r.bearing_deg, r.distance) for r in g.relations] == [(("Kiasma",), 270.0, 550.0)]


@pytest.mark.parametrize("text, east, north", [
    ("From Kiasma walk 140 m north, then 140 m east to Fuku.", 140.0, 140.0),
    ("From Kiasma walk 140 m north, turn right and walk 140 m to Fuku.", 140.0, 140.0),
    ("Start at Kiasma: 300 m south, then keep going another 200 m. Fuku is there.", 0.0, -500.0),
    ("From Kiasma go 100 yd west and then 200 m north; Fuku.", -91.44, 200.0),
])
def test_legs_sum_to_one_offset(text, east, north):
    (r,) = read(text).relations
    e, n = r.offset()
    assert (e, n) == (pytest.approx(east, abs=0.01), pytest.approx(north, abs=0.01))


@pytest.mark.parametrize("text, bearing, metres", [
    ("Fuku is 400 m north of Kiasma - sorry, north-east.", 45.0, 400.0),
    ("Fuku is 400 m north of Kiasma. Correction: 450 m.", 0.0, 450.0),
    ("From Kiasma fly heading 040, no, 220, for 140 m to Fuku.", 220.0, 140.0),
    ("Fuku: 300 m not north but east of Kiasma.", 90.0, 300.0),
])
def test_a_correction_replaces_what_it_corrects(text, bearing, metres):
    (r,) = read(text).relations
    assert (r.bearing_deg, r.distance) == (bearing, metres)


def test_the_understood_line_says_goal_relations_and_what_was_not_placed():
    u = understand(read_instruction("Fuku is 450 m north of Helsingin tuomiokirkko; Ateneum is nearby.", GAZ))
    assert u.line() == ("understood: goal 'Fuku'; 450 m N (000°) of Helsingin tuomiokirkko; not placed: Ateneum "
                        "(read by the parser)")
    assert not u.missing and u.refusal() == ""
    u = understand(read_instruction("Bearing 037 from Kiasma, range 1650 ft: Fuku.", GAZ))
    assert "503 m (037°) of Kiasma" in u.line()


@pytest.mark.parametrize("text, missing", [
    ("Take some pictures of the harbour please.", "relative to a landmark the vehicle knows (none named)"),
    ("Go 300 m north of Kiasma.", "the goal's name"),
    ("Fuku is somewhere near Kiasma.", "relative to a landmark (named: Kiasma)"),
])
def test_a_reading_without_goal_or_relation_is_refused_naming_what_is_missing(text, missing):
    u = understand(read_instruction(text, GAZ))
    assert missing in u.refusal()


def test_a_search_on_purpose_needs_no_relation_but_still_a_goal():
    r = read_instruction("Find Fuku.", GAZ)
    assert understand(r).missing and not understand(r, search_only=True).missing
    assert understand(read_instruction("Search the area.", GAZ), search_only=True).missing


def test_where_the_parser_reads_no_relation_the_model_is_asked():
    calls = []

    def generate(messages, schema):
        calls.append(schema)
        return '{"relations": [{"landmark": "Kiasma", "direction": "north-east", "metres": 503, ' \
               '"landmark_is_subject": false}]}'

    r = read_instruction("Kiasma or Ateneum? Thereabouts. The spot: 045 degrees, 1,650 ft, I reckon. Fuku.", GAZ, generate)
    assert calls and r.reader == "model" and r.unsettled == "no relation read"
    item = calls[0]["properties"]["relations"]["items"]["properties"]
    assert item["direction"]["enum"] == ["north-east"] and item["metres"]["enum"] == [0, 503]
    assert [(x.landmarks, x.bearing_deg, x.distance) for x in r.goal.relations] == [(("Kiasma",), 45.0, 503.0)]
    assert isinstance(r, Reading)


def test_the_kind_a_city_has_one_landmark_of_names_it():
    """"the Cathedral", "the railway station": the last words of one landmark's other name (OSM name:en)."""
    from onboard.vocab.landmark_names import find_mentions

    gaz = ["Helsingin tuomiokirkko", "Helsingin päärautatieasema", "Kiasma", "Kasvimuseo"]
    aliases = {"Helsinki Cathedral": "Helsingin tuomiokirkko", "Helsinki Central railway station":
               "Helsingin päärautatieasema", "Kiasma art museum": "Kiasma",
               "Botanic Garden Museum": "Kasvimuseo"}
    found = find_mentions("Säm, 550 m south-west of the Cathedral, near the railway station", gaz, aliases)
    assert [m.name for m in found] == ["Helsingin tuomiokirkko", "Helsingin päärautatieasema"]
    assert find_mentions("Bar X is 300 m north of the museum", gaz, aliases) == []  # two museums: none


@pytest.mark.parametrize("text, bearing, metres", [
    ("I need you at Fuku. Kiasma is 300 m to its south.", 0.0, 300.0),  # "its": the goal; Kiasma is the subject
    ("Fuku is 300 m from Kiasma on bearing two seven zero.", 270.0, 300.0),  # a pilot's digits
    ("Fuku is 300 m north and 400 m east of Kiasma.", math.degrees(math.atan2(400, 300)), 500.0),  # components
])
def test_more_shapes_people_say(text, bearing, metres):
    (r,) = read(text).relations
    assert r.landmarks == ("Kiasma",) and r.bearing_deg == pytest.approx(bearing) and r.distance == pytest.approx(metres)


def test_a_landmark_named_by_its_kind_is_no_goal_name():
    g = parse_goal_description("From the Cathedral, 250 yards due east: Fuku.", ["Helsingin tuomiokirkko"],
                               {"Helsinki Cathedral": "Helsingin tuomiokirkko"})
    assert g.goal_name == "Fuku" and g.relations[0].landmarks == ("Helsingin tuomiokirkko",)

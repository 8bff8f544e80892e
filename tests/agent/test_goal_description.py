import json
from pathlib import Path

import pytest

from onboard.agent.goal_description import parse_goal_description, read_distance
from onboard.vocab.text_fold import fold

GAZ = ["Kiasma", "Stockmann", "Hotelli Torni", "World Trade Center Helsinki", "Kauppakeskus Kluuvi"]


@pytest.mark.parametrize("text, kind, landmarks, direction, distance", [
    ("Café Engel is about 300 m north-east of Kiasma.", "offset", ("Kiasma",), 1, 300.0),
    ("From Stockmann, head SW for ~0.6km to reach Levytukku.", "offset", ("Stockmann",), 5, 600.0),
    ("Kiasma: Grano is roughly 250 metres south east from it.", "offset", ("Kiasma",), 3, 250.0),
    ("Look for Zen 120m W of World Trade Center Helsinki.", "offset", ("World Trade Center Helsinki",), 6, 120.0),
    ("Arthur is east of Stockmann.", "ray", ("Stockmann",), 2, None),
    ("Halfway between Kiasma and Stockmann you will find Ihana.", "between", ("Kiasma", "Stockmann"), None, None),
])
def test_phrasings(text, kind, landmarks, direction, distance):
    (r,) = parse_goal_description(text, GAZ).relations
    assert (r.kind, r.landmarks, r.direction, r.distance) == (kind, landmarks, direction, distance)


def test_two_landmarks_each_get_their_own_direction():
    g = parse_goal_description("From Hotelli Torni it is some 0.5km NE, from World Trade Center Helsinki roughly "
                               "190 metres north east: that is where Caverna is.", GAZ)
    assert [(r.landmarks[0], r.direction, r.distance) for r in g.relations] == [
        ("Hotelli Torni", 1, 500.0), ("World Trade Center Helsinki", 1, 190.0)]


def test_distances():
    assert read_distance("half a kilometre") == 500.0
    assert read_distance("1,2 km") == 1200.0
    assert read_distance("no number") is None


def test_goal_name_must_be_named_in_full_outside_landmarks():
    g = parse_goal_description("From Keva it is 140m SE, from Kauppakeskus Kluuvi 0.6km NE: that is where the café "
                               "Mumin Kaffe is. Alepa Rautatientori is not it.", GAZ + ["Keva"])
    assert g.names_goal("Mumin Kaffe")
    assert not g.names_goal("Kluuvi")  # part of a landmark's name
    assert not g.names_goal("Alepa")  # part of a longer name
    assert not g.names_goal("Rautatientori")
    assert not g.names_goal("Keva")  # a landmark is never the goal


def test_public_tasks_read_to_their_goal_and_name_it():
    import numpy as np

    from common.geodesy import ned_from_geo
    from sim.benchmark.describe import MAX_ESTIMATE_ERROR
    from sim.benchmark.understand import estimate_goal, parse_relations
    from sim.world.cache import load_world

    world = load_world(None, verbose=False)
    names = [lm.name for lm in world.landmarks]
    positions = {lm.name: lm.centroid for lm in world.landmarks}
    tasks = json.loads(Path("bench/tasks/helsinki_public_100.json").read_text())["tasks"]
    for t in tasks:
        ours = parse_goal_description(t["description"], names)
        # What the words say, resolved with the true landmark positions, is where the goal is.
        north, east = ned_from_geo(world.origin, t["goal"]["lat"], t["goal"]["lon"])
        est = estimate_goal(parse_relations(t["description"], names), positions)
        assert est is not None and np.hypot(est[0] - east, est[1] - north) <= MAX_ESTIMATE_ERROR, t["description"]
        assert ours.names_goal(t["goal"]["name"]), t["description"]
        # A shop whose name differs from the goal's only in case ("Vero Moda", "vero moda") is the same
        # name as anyone types it: the reader cannot and should not tell them apart.
        others = [p.name for p in world.city.pois if fold(p.name) != fold(t["goal"]["name"])
                  and ours.names_goal(p.name)]
        assert not others, (t["description"], others)

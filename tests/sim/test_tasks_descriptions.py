"""Descriptions vary as people write them, and every phrasing reads back to the same geometry."""

from __future__ import annotations

import re

import numpy as np
import pytest

from common.geodesy import ned_from_geo
from sim.benchmark.compass import DIRECTION_RE, direction_index, spellings
from sim.benchmark.tasks import load_tasks
from sim.benchmark.understand import estimate_goal, parse_relations
from tests.sim._world_fixture import PUBLIC, helsinki

NAMES = ["Kiasma", "Ateneum", "WTC Plaza", "G18", "Helsingin tuomiokirkko"]
POS = {"Kiasma": np.array([0.0, 0.0]), "Ateneum": np.array([300.0, 0.0]), "WTC Plaza": np.array([0.0, 400.0]),
       "G18": np.array([100.0, -100.0]), "Helsingin tuomiokirkko": np.array([-500.0, 0.0])}


@pytest.mark.parametrize("text", [
    "Café X is about 300 m north-east of Kiasma.",
    "Café X: ~0.3 km NE of Kiasma",
    "From Kiasma, head northeast for roughly 300 metres to reach Café X.",
    "Look for Café X 300 meters to the north east of Kiasma.",
    "Kiasma: Café X is approximately 300m NE from it.",
])
def test_same_place_in_many_words(text):
    est = estimate_goal(parse_relations(text, NAMES), POS)
    assert est == pytest.approx([212.1, 212.1], abs=0.5)


def test_two_landmarks_rays_and_between():
    rays = parse_relations("Café X is east of Kiasma and south of WTC Plaza.", NAMES)
    assert [r.kind for r in rays] == ["ray", "ray"]
    # lines y = 0 (east of Kiasma) and x = 0 (south of WTC Plaza) meet at the origin
    assert estimate_goal(rays, POS) == pytest.approx([0.0, 0.0], abs=1e-6)
    mid = parse_relations("Halfway between Kiasma and Ateneum you will find Café X.", NAMES)
    assert estimate_goal(mid, POS) == pytest.approx([150.0, 0.0])
    two = parse_relations("Café X is 120 m SW of G18, and about 0.5 km E of Helsingin tuomiokirkko.", NAMES)
    assert estimate_goal(two, POS) == pytest.approx([(100 - 84.85 + 0) / 2, (-100 - 84.85 + 0) / 2], abs=0.5)


def test_names_are_not_read_as_directions():
    rel = parse_relations("Café X is 80 m W of WTC Plaza.", NAMES)
    assert len(rel) == 1 and rel[0].direction == 6 and rel[0].distance == 80


def test_all_compass_spellings_parse():
    for i in range(8):
        for s in spellings(i):
            m = DIRECTION_RE.search(f"go {s} of it")
            assert m and direction_index(m.group("word") or m.group("abbr")) == i


def test_public_descriptions_vary_and_read_back_close_to_the_goal():
    w = helsinki()
    _, tasks = load_tasks(PUBLIC)
    names = [lm.name for lm in w.landmarks]
    pos = {lm.name: lm.centroid for lm in w.landmarks}
    openings = {re.sub(r"[^A-Za-z]", "", t.description.replace(t.goal_name, "G"))[:6] for t in tasks}
    assert len(openings) >= 8  # not one template
    assert len({t.extra["style"] for t in tasks}) >= 3
    units = {u for t in tasks for u in re.findall(r"\d\s?(km|kilometres|metres|meters|m)\b", t.description)}
    assert {"m", "km"} <= units
    errors = []
    for t in tasks:
        gy, gx = ned_from_geo(w.origin, t.goal_lat, t.goal_lon)
        est = estimate_goal(parse_relations(t.description, names), pos)
        errors.append(np.hypot(est[0] - gx, est[1] - gy))
    assert max(errors) <= 160.0

"""The described region of the goal: an arc across the compass sector, not a disc round the estimate."""

import math

import numpy as np

from onboard.agent.goal_description import parse_goal_description
from onboard.agent.goal_region import COMPASS_HALF_SECTOR_DEG, DISTANCE_BAND_SHARE, candidate_points

TOWER = np.array([100.0, 200.0])


def _bearing_from(p, origin):
    v = p - origin
    return math.degrees(math.atan2(v[0], v[1])) % 360.0


def test_offset_region_is_an_arc_at_the_stated_distance_across_the_sector():
    goal = parse_goal_description("Cafe Aalto is about 400 m east of Tower.", ["Tower"])
    centre = TOWER + np.array([400.0, 0.0])
    pts = candidate_points(goal, {"Tower": (TOWER, 0.0)}, centre, ray_reach_m=150.0, step_m=10.0)
    assert len(pts)
    dist = np.hypot(*(pts - TOWER).T)
    # within the distance band (plus half a grid step of slack) ...
    assert np.all(np.abs(dist - 400.0) <= DISTANCE_BAND_SHARE * 400.0 + 5.0)
    # ... and within the sector of the word "east"
    dev = np.array([abs(_bearing_from(p, TOWER) - 90.0) for p in pts])
    assert np.all(dev <= COMPASS_HALF_SECTOR_DEG + 1.0)
    # long across (the whole sector), thin along the ray: not a disc round the estimate
    across = pts[:, 1] - TOWER[1]
    along = pts[:, 0] - TOWER[0]
    assert across.max() - across.min() >= 2 * 400.0 * math.sin(math.radians(22.5)) - 20.0
    assert along.max() - along.min() <= 2 * DISTANCE_BAND_SHARE * 400.0 + 60.0
    # the estimate's own neighbourhood off the arc is not in it: 100 m short of the stated distance
    assert np.min(np.hypot(*(pts - (TOWER + np.array([300.0, 0.0]))).T)) > 50.0


def test_two_relations_keep_only_what_both_allow():
    goal = parse_goal_description("Cafe Aalto is 400 m east of Tower and 300 m north of Kiasma.", ["Tower", "Kiasma"])
    kiasma = TOWER + np.array([400.0, -300.0])
    one = candidate_points(parse_goal_description("Cafe Aalto is 400 m east of Tower.", ["Tower"]),
                           {"Tower": (TOWER, 0.0)}, TOWER + np.array([400.0, 0.0]), 150.0)
    both = candidate_points(goal, {"Tower": (TOWER, 0.0), "Kiasma": (kiasma, 0.0)}, TOWER + np.array([400.0, 0.0]),
                            150.0)
    assert 0 < len(both) < len(one) / 2
    assert np.min(np.hypot(*(both - (TOWER + np.array([400.0, 0.0]))).T)) < 30.0


def test_ray_region_is_the_sector_and_between_has_none():
    goal = parse_goal_description("Cafe Aalto is east of Tower.", ["Tower"])
    pts = candidate_points(goal, {"Tower": (TOWER, 0.0)}, TOWER + np.array([150.0, 0.0]), 150.0)
    assert len(pts)
    for p in pts:  # in the sector of "east", or within half a grid step (10 m) of its edge
        dev = math.radians(max(0.0, abs(_bearing_from(p, TOWER) - 90.0) - 22.5))
        assert np.hypot(*(p - TOWER)) * math.sin(dev) <= 10.0 + 1e-6
    between = parse_goal_description("Cafe Aalto is between Tower and Kiasma.", ["Tower", "Kiasma"])
    lms = {"Tower": (TOWER, 0.0), "Kiasma": (TOWER + np.array([300.0, 0.0]), 0.0)}
    assert len(candidate_points(between, lms, TOWER + np.array([150.0, 0.0]), 150.0)) == 0


def test_landmark_spread_widens_the_region():
    goal = parse_goal_description("Cafe Aalto is about 400 m east of Tower.", ["Tower"])
    centre = TOWER + np.array([400.0, 0.0])
    sharp = candidate_points(goal, {"Tower": (TOWER, 0.0)}, centre, 150.0)
    blurred = candidate_points(goal, {"Tower": (TOWER, 40.0)}, centre, 150.0)
    assert len(blurred) > len(sharp)

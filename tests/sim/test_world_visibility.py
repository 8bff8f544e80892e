"""Line of sight: a landmark behind a taller building is hidden, behind a lower one it is not."""

from __future__ import annotations

import numpy as np

from onboard.map.city import Building
from sim.world.visibility import Occluders, landmark_visible, visible_landmarks
from tests.sim._world_fixture import helsinki


def _box(i, x0, y0, x1, y1, h, name=None):
    return Building(i, name, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float), h, "height")


def _scene(occluder_height):
    landmark = _box(0, -20, 200, 20, 240, 30.0, "Tower")
    blocker = _box(1, -40, 100, 40, 120, occluder_height)
    return landmark, Occluders.from_buildings([landmark, blocker])


def test_landmark_behind_taller_building_is_not_visible():
    landmark, occ = _scene(occluder_height=60.0)
    assert not landmark_visible(np.array([0.0, 0.0]), 25.0, landmark, occ)


def test_landmark_behind_lower_building_is_visible():
    landmark, occ = _scene(occluder_height=10.0)
    assert landmark_visible(np.array([0.0, 0.0]), 25.0, landmark, occ)


def test_landmark_seen_around_a_narrow_blocker():
    landmark = _box(0, -20, 200, 20, 240, 30.0, "Tower")
    thin = _box(1, -2, 100, 2, 120, 80.0)  # a mast in front hides the middle only
    assert landmark_visible(np.array([0.0, 0.0]), 25.0, landmark, Occluders.from_buildings([landmark, thin]))


def test_out_of_range_is_not_visible():
    landmark, occ = _scene(occluder_height=0.5)
    assert not landmark_visible(np.array([0.0, -1000.0]), 25.0, landmark, occ, max_range=500.0)


def test_helsinki_landmarks_seen_from_nearby_nodes():
    w = helsinki()
    occ = Occluders.from_buildings(w.city.buildings)
    counts = np.array([len(v) for v in w.visible])
    assert counts.mean() > 2 and counts.max() < len(w.landmarks)
    # the cached table agrees with a fresh computation
    for node in (0, w.graph.n_nodes // 2):
        assert visible_landmarks(w.graph.xy[node], w.cruise_alt, w.landmarks, occ, w.view_range) == w.visible[node]

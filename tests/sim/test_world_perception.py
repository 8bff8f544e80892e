"""Oracle perception: exact under `perfect`, degraded as configured under noise presets."""

from __future__ import annotations

import numpy as np
import pytest

from onboard.map.compass import angle_diff, bearing_deg
from sim.world.perception import PRESETS, NoiseModel, OraclePerception, preset
from tests.sim._world_fixture import helsinki


def _busy_node(w):
    return int(np.argmax([len(v) for v in w.visible]))


def test_perfect_reports_true_bearing_and_distance():
    w = helsinki()
    node = _busy_node(w)
    seen = OraclePerception(w, "perfect").landmarks_at(node)
    assert {s.name for s in seen} == {w.landmarks[j].name for j in w.visible[node]}
    for s in seen:
        d = w.landmark(s.name).centroid - w.graph.xy[node]
        assert s.distance == pytest.approx(np.hypot(*d), abs=0.1)
        assert angle_diff(s.bearing, bearing_deg(*d)) < 0.1


def test_noise_statistics_follow_the_model():
    w = helsinki()
    node = _busy_node(w)
    nz = NoiseModel(bearing_sigma_deg=10.0, distance_rel_sigma=0.25, miss_rate=0.2, false_positive_rate=0.0)
    p = OraclePerception(w, nz, seed=3)
    truth = {w.landmarks[j].name: w.landmarks[j].centroid - w.graph.xy[node] for j in w.visible[node]}
    errs, rel, n_seen, n_true = [], [], 0, 0
    for _ in range(200):
        seen = p.landmarks_at(node)
        n_seen += len(seen)
        n_true += len(truth)
        for s in seen:
            d = truth[s.name]
            errs.append(((s.bearing - bearing_deg(*d) + 180) % 360) - 180)
            rel.append(s.distance / np.hypot(*d) - 1)
    assert 8.0 < np.std(errs) < 12.0
    assert 0.2 < np.std(rel) < 0.3
    assert 0.75 < n_seen / n_true < 0.85


def test_false_positives_appear_at_the_configured_rate():
    w = helsinki()
    node = _busy_node(w)
    p = OraclePerception(w, NoiseModel(false_positive_rate=0.5), seed=1)
    visible = {w.landmarks[j].name for j in w.visible[node]}
    extra = sum(any(s.name not in visible for s in p.landmarks_at(node)) for _ in range(400))
    assert 160 < extra < 240


def test_goal_poi_is_read_when_close():
    w = helsinki()
    goal, node = w.goals[0], w.goal_nodes[0]
    names = [s.name for s in OraclePerception(w, "perfect").pois_at(node)]
    assert goal.name in names


def test_presets_exist_and_are_ordered():
    assert set(PRESETS) == {"perfect", "prep", "poor"}
    assert preset("perfect") == NoiseModel()
    assert preset("prep").bearing_sigma_deg < preset("poor").bearing_sigma_deg
    assert preset("prep").miss_rate < preset("poor").miss_rate
    with pytest.raises(ValueError, match="unknown perception preset"):
        preset("great")

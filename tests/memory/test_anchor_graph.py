"""Place–anchor graph rules: dead reckoning, anchors, places, hints, FIFO, context."""

from __future__ import annotations

import math

import pytest

from onboard.memory.anchor_graph import AnchorGraph, AnchorGraphError, normalise_scene_type
from onboard.memory.discovered_context import DiscoveredContextQueue
from onboard.memory.navigation_context import render_navigation_context
from onboard.memory.settings import AnchorGraphConfig


def test_defaults_follow_the_design() -> None:
    c = AnchorGraphConfig()
    assert (c.anchor_every_forward_steps, c.turn_angle_deg, c.place_period_steps, c.place_dwell_observations,
            c.localisation_radius, c.stuck_window_steps, c.discovered_context_size) == (2, 30.0, 20, 3, 1.5, 10, 5)


def test_dead_reckoning() -> None:
    g = AnchorGraph(AnchorGraphConfig(forward_step_units=1.0, turn_angle_deg=90.0))
    for a in ["forward", "turn_left", "forward", "forward", "turn_right", "turn_right", "stop"]:
        g.step(a)
    assert math.isclose(g.pose.x, 1.0, abs_tol=1e-9) and math.isclose(g.pose.y, 2.0, abs_tol=1e-9)
    assert g.pose.yaw_deg == -90.0
    with pytest.raises(AnchorGraphError, match="unknown action"):
        g.step("backflip")


def test_anchor_every_s_forward_steps_and_after_turn_then_forward() -> None:
    g = AnchorGraph()
    assert g.current_anchor == 0
    assert g.step("forward").new_anchor is None
    assert g.step("forward").new_anchor == 1  # S = 2
    assert g.step("turn_left").new_anchor is None  # a turn alone is not an anchor
    assert g.step("turn_left").new_anchor is None
    assert g.step("forward").new_anchor == 2  # turn followed by a forward move
    assert g.anchors[2].neighbours == [1] and g.anchors[1].neighbours == [0, 2]


def test_scene_type_normalisation() -> None:
    assert normalise_scene_type("  Hallway. ") == "corridor"
    assert normalise_scene_type("Living-Room!!") == "living room"
    assert normalise_scene_type("CORRIDOR") == "corridor"


def test_place_confirmed_after_k_consecutive_observations_with_first_anchor() -> None:
    g = AnchorGraph()
    g.step("stop", "Kitchen")
    g.step("stop", "kitchen.")
    assert g.current_place is None
    r = g.step("stop", "KITCHEN")
    assert r.new_place == 0 and r.new_anchor is not None
    assert g.places[0].anchors == [r.new_anchor] and g.anchors[r.new_anchor].place_id == 0
    # An interrupted run does not switch place.
    g.step("stop", "hallway"); g.step("stop", "hallway"); g.step("stop", "kitchen"); g.step("stop", "corridor")
    assert g.current_place == 0
    g.step("stop", "corridor")
    r = g.step("stop", "Hallway")
    assert r.new_place == 1 and g.places[1].place_type == "corridor"


def test_should_observe_place_every_period() -> None:
    g = AnchorGraph()
    seen = []
    for _ in range(45):
        seen.append(g.should_observe_place())
        g.step("forward")
    assert [i for i, s in enumerate(seen) if s] == [0, 20, 40]


def test_localisation_candidates_same_type_within_radius_no_merge() -> None:
    g = AnchorGraph(AnchorGraphConfig(forward_step_units=0.5, turn_angle_deg=90.0, place_dwell_observations=1))
    g.step("forward", "corridor")  # place 0, anchor 1 at (0.5, 0)
    g.step("forward"); g.step("forward")  # anchor at (1.5, 0)
    g.step("turn_left"); g.step("turn_left")  # facing back
    g.step("forward"); g.step("forward")  # anchor at (0.5, 0): back near anchor 1
    cands = g.localisation_candidates()
    ids = [c.anchor_id for c in cands]
    assert 1 in ids and all(c.distance <= 1.5 for c in cands)
    assert len(g.anchors) == 4  # nothing merged
    # Different type: no candidates.
    g2 = AnchorGraph(AnchorGraphConfig(place_dwell_observations=1))
    g2.step("forward", "kitchen"); g2.step("forward", "corridor")
    assert all(c.place_type == "corridor" for c in g2.localisation_candidates())
    assert [c.anchor_id for c in g2.localisation_candidates()] == []


def test_stuck_fires_when_hovering_not_when_flying() -> None:
    g = AnchorGraph()
    for _ in range(12):
        r = g.step("turn_left")
    assert "pattern:STUCK" in r.avoid_hints
    clean = AnchorGraph()
    hints = set()
    for i in range(40):
        hints |= set(clean.step("forward" if i % 5 else "turn_left").avoid_hints)
    assert "pattern:STUCK" not in hints


def test_stuck_needs_a_full_window() -> None:
    g = AnchorGraph()
    for _ in range(9):
        r = g.step("stop")
    assert r.avoid_hints == ()
    assert "pattern:STUCK" in g.step("stop").avoid_hints


def _visit(g: AnchorGraph, place: str) -> None:
    for _ in range(g.cfg.place_dwell_observations):
        g.step("forward", place)


def test_ababa_fires_on_alternation_not_on_clean_tour() -> None:
    g = AnchorGraph()
    for p in ["corridor", "kitchen", "corridor", "kitchen"]:
        _visit(g, p)
    assert "pattern:ABABA" in g.avoid_hints()
    clean = AnchorGraph()
    for p in ["corridor", "kitchen", "living room", "bedroom", "corridor", "bathroom"]:
        _visit(clean, p)
        assert "pattern:ABABA" not in clean.avoid_hints()
    assert not clean.is_stuck()


def test_fifo_keeps_five_and_reindexes() -> None:
    q = DiscoveredContextQueue(5)
    for i in range(7):
        q.push(False, f"type{i}", f"why{i}")
        recs = q.records()
        assert [r.idx for r in recs] == list(range(1, len(recs) + 1))
    assert [r.goal_scene_type for r in q.records()] == [f"type{i}" for i in range(2, 7)]
    assert q.records()[0].idx == 1 and q.records()[-1].idx == 5


def test_discovered_context_carries_avoid_hint_and_context_renders() -> None:
    g = AnchorGraph()
    for _ in range(10):
        g.step("stop")
    recs = g.record_discovered_context(False, "kitchen", "cups are usually in kitchens")
    assert recs[-1].avoid_hint == "pattern:STUCK"
    _visit(g, "Hallway")
    text = render_navigation_context(g)
    assert "## Navigation Context" in text
    assert "P0 corridor" in text and "1. goal_flag=false goal_scene_type=kitchen" in text
    assert "avoid=pattern:STUCK" in text and "Same-space candidates" in text


def test_drone_scale_in_metres() -> None:
    g = AnchorGraph()  # 0.25 map units per step, 5 m per step -> 20 m per unit
    for _ in range(4):
        g.step("forward")
    assert math.isclose(g.pose.x, 1.0) and g.metres_per_unit == 20.0
    assert "pose x=20.0 m" in render_navigation_context(g)

"""`aerie bench reading`: its settings and the rule that picks its views."""

from __future__ import annotations

import pytest

from sim.reading_bench import Setting


def test_a_setting_names_the_frame_the_detector_side_and_what_the_view_was_drawn_at() -> None:
    assert Setting.parse("1920x1080@1152") == Setting(1920, 1080, 1152)
    assert Setting.parse("1920x1080>960x540@960") == Setting(960, 540, 960, (1920, 1080))
    assert Setting.parse("960x540") == Setting(960, 540, 960)
    for text in ("1920x1080@1152", "1920x1080>960x540@960"):
        assert str(Setting.parse(text)) == text
    with pytest.raises(ValueError):
        Setting.parse("wide@960")


def test_each_view_looks_at_its_sign_from_a_waypoint_in_front_of_it() -> None:
    import numpy as np

    from sim.reading_bench import choose_views
    from sim.world.render import ViewRenderer
    from tests.sim._world_fixture import helsinki

    world = helsinki()
    rnd = ViewRenderer(world)
    views = choose_views(world, rnd, 5)
    assert len(views) == 5 and len({v.goal for v in views}) == 5
    signs = {s.name: s for s in rnd.signs if s.kind == "poi"}
    for v in views:
        sign = signs[v.goal]
        off = sign.centre[:2] - world.graph.xy[v.node]
        assert 15.0 <= float(np.hypot(*off)) <= 90.0
        assert float(np.dot(-off, sign.normal)) > 0  # the waypoint is on the facade's outer side
        _, truths = rnd.render_view(v.node, v.heading_deg)
        t = next(t for t in truths if t.name == v.goal)
        assert abs((t.bearing_deg - v.heading_deg + 180.0) % 360.0 - 180.0) < 1.0


def test_the_test_split_views_other_signs_from_other_waypoints() -> None:
    from sim.reading_bench import choose_views
    from sim.world.render import ViewRenderer
    from tests.sim._world_fixture import helsinki

    world = helsinki()
    rnd = ViewRenderer(world)
    dev, test = choose_views(world, rnd, 40), choose_views(world, rnd, 40, split="test")
    assert len(dev) == len(test) == 40
    assert not {v.node for v in dev} & {v.node for v in test}
    assert not {v.goal for v in dev} & {v.goal for v in test}
    assert choose_views(world, rnd, 40, split="dev") == dev  # dev is the rule's views of before the split
    with pytest.raises(ValueError, match="split"):
        choose_views(world, rnd, 5, split="train")

"""The renderer draws real pictures: sky, ground, buildings and the names on them."""

from __future__ import annotations

import numpy as np

from tests.sim._world_fixture import helsinki


def test_oblique_and_top_views():
    from sim.world.render import ViewRenderer

    w = helsinki()
    node = int(np.argmax([len(v) for v in w.visible]))
    r = ViewRenderer(w)
    img = r.oblique(node, 90.0)
    assert img.shape == (r.cam.height, r.cam.width, 3) and img.dtype == np.uint8
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # not a blank frame
    top = r.top_down(node, 90.0)
    assert top.shape[2] == 3 and top.std() > 10
    # a different heading gives a different picture
    assert np.abs(img.astype(int) - r.oblique(node, 270.0).astype(int)).mean() > 5


def test_helsinki_view_reads_ateneum_on_its_facade():
    from sim.benchmark.suite import example_view
    from sim.world.render import ViewRenderer

    w = helsinki()
    r = ViewRenderer(w)
    node, heading = example_view(w)  # near the railway station square, looking at Ateneum
    img, truths = r.render_view(node, heading)
    ateneum = [t for t in truths if t.name == "Ateneum"]
    assert len(ateneum) == 1 and ateneum[0].kind == "building" and ateneum[0].visible_fraction > 0.9
    assert 1.0 <= ateneum[0].letter_m <= 2.0 and ateneum[0].letter_px > 5
    assert any(t.kind == "poi" and t.visible_fraction > 0.9 for t in truths)
    for t in truths:  # every reported sign is at least partly in the frame
        x0, y0, x1, y1 = t.bbox
        assert 0 <= x0 <= x1 <= img.shape[1] and 0 <= y0 <= y1 <= img.shape[0]

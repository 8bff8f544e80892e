"""The renderer draws real pictures: sky, ground, buildings and landmark labels."""

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

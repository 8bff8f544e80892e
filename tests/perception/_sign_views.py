"""The view rule the camera tests share: shop signs seen head-on from a waypoint in front of them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from onboard.map.compass import bearing_deg


def facing_views(world, renderer, near_m: float, far_m: float, *, ascii_only: bool = False) -> Iterator[tuple]:
    """(sign, node, heading, image, truth) for each shop sign in sign order (a name of at least 8 letters, not
    named like a landmark) from the nearest waypoint `near_m`-`far_m` in front of its facade, if any."""
    g, landmarks = world.graph, {lm.name for lm in world.landmarks}
    for sign in renderer.signs:
        if sign.kind != "poi" or sign.name in landmarks or sum(ch.isalpha() for ch in sign.name) < 8:
            continue
        if ascii_only and not sign.name.isascii():
            continue
        d = np.hypot(*(g.xy - sign.centre[:2]).T)
        front = [n for n in np.argsort(d)[:8] if near_m <= d[n] <= far_m
                 and float(np.dot(g.xy[n] - sign.centre[:2], sign.normal)) >= 0.5 * d[n]]
        if not front:
            continue
        node = int(front[0])
        v = sign.centre[:2] - g.xy[node]
        heading = bearing_deg(float(v[0]), float(v[1]))
        img, truths = renderer.render_view(node, heading)
        t = next((t for t in truths if t.name == sign.name and t.kind == "poi"), None)
        if t is not None:
            yield sign, node, heading, img, t

"""The convex outline of a point set, and trimming it to a vertex budget without claiming more ground."""

import numpy as np

from onboard.agent.hull import convex_hull, fewest_vertices


def _area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def test_hull_of_a_grid_disc_is_its_rim_counter_clockwise():
    ax = np.arange(-10, 11) * 20.0
    gx, gy = np.meshgrid(ax, ax)
    pts = np.column_stack([gx.ravel(), gy.ravel()])
    pts = pts[np.hypot(pts[:, 0], pts[:, 1]) <= 200.0]
    ring = convex_hull(pts)
    assert _area(ring) > 0  # counter-clockwise
    assert np.allclose(np.sort(np.hypot(ring[:, 0], ring[:, 1]))[-1], 200.0)
    assert all(np.hypot(*p) > 180.0 for p in ring)  # only the rim, no interior point
    assert {(0.0, 200.0), (200.0, 0.0), (0.0, -200.0), (-200.0, 0.0)} <= {tuple(p) for p in ring}


def test_collinear_or_repeated_points_have_no_area():
    assert len(convex_hull(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]))) == 2
    assert len(convex_hull(np.array([[3.0, 4.0]]))) == 1


def test_trimming_drops_the_flattest_corners_and_stays_inside():
    a = np.linspace(0, 2 * np.pi, 100, endpoint=False)
    circle = np.column_stack([np.cos(a), np.sin(a)]) * 100.0
    ring = convex_hull(circle)
    trimmed = fewest_vertices(ring, 12)
    assert len(ring) == 100 and len(trimmed) == 12
    assert 0.9 * _area(ring) < _area(trimmed) < _area(ring)
    assert len(fewest_vertices(ring, 1)) == 3

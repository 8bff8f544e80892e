"""The corridor graph: ~50 m nodes, connected where the streets are, correct compass words and paths."""

from __future__ import annotations

import numpy as np
import pytest

from common.geodesy import GeoPoint, ned_from_geo
from onboard.map.city import StreetEdge
from onboard.map.compass import bearing_deg, compass8
from onboard.map.corridors import MIN_SPACING_M, densify, discretise

ORIGIN = GeoPoint(60.17, 24.94)


def _line(u, v, a, b):
    return StreetEdge(u, v, np.array([a, b], dtype=float))


def test_node_latlon_is_the_shared_projection_of_its_xy():
    """The world is x east, y north; common.geodesy speaks (north, east): the swap must be right."""
    g = discretise([_line(0, 1, (0, 0), (300, 0)), _line(1, 2, (300, 0), (300, 500))], ORIGIN, "test")
    for i, (x, y) in enumerate(g.xy):
        north, east = ned_from_geo(ORIGIN, *g.latlon[i])
        assert east == pytest.approx(x, abs=1e-6) and north == pytest.approx(y, abs=1e-6)
        assert g.nearest_node_latlon(*g.latlon[i]) == i
    corner = g.nearest_node(300, 500)
    assert g.latlon[corner][0] > ORIGIN.lat and g.latlon[corner][1] > ORIGIN.lon  # north-east of the origin


def test_compass_words():
    assert [compass8(b) for b in (0, 44, 46, 90, 135, 180, 225, 270, 315, 359)] == \
        ["N", "NE", "NE", "E", "SE", "S", "SW", "W", "NW", "N"]
    assert bearing_deg(1, 0) == 90.0 and bearing_deg(0, -1) == 180.0


def test_synthetic_cross_has_four_compass_neighbours():
    edges = [_line(0, 1, (0, 0), (0, 200)), _line(0, 2, (0, 0), (200, 0)),
             _line(0, 3, (0, 0), (0, -200)), _line(0, 4, (0, 0), (-200, 0))]
    g = discretise(edges, ORIGIN, "test")
    centre = g.nearest_node(0, 0)
    assert np.hypot(*g.xy[centre]) < 1e-6  # the junction becomes a node
    assert sorted(n.direction for n in g.neighbours(centre)) == ["E", "N", "S", "W"]
    assert len(g.components()) == 1


def test_disjoint_streets_stay_disjoint_and_chain_is_connected():
    edges = [_line(0, 1, (0, 0), (500, 0)), _line(2, 3, (0, 300), (500, 300))]
    g = discretise(edges, ORIGIN, "test")
    assert len(g.components()) == 2
    el = [g.edge_length(a, b) for a, b in g.edges()]
    assert all(MIN_SPACING_M <= d <= 2 * MIN_SPACING_M for d in el)


def test_sample_spacing_is_a_build_parameter():
    edges = [_line(0, 1, (0, 0), (0, 400))]
    assert len(densify(edges, 5.0).xy) == 82 and len(densify(edges, 20.0).xy) == 22  # 2 ends + 400 // step inside
    coarse = discretise(edges, ORIGIN, "test", min_spacing=100.0, sample_m=20.0)
    assert coarse.n_nodes == 4 and all(100.0 <= coarse.edge_length(a, b) < 200.0 for a, b in coarse.edges())


def test_helsinki_graph_connected_where_the_streets_are(helsinki_city, helsinki_map):
    g = helsinki_map.graph
    assert len(g.components()) == 1
    # every street sample of the chosen network's main component lies near a node:
    street = discretise(helsinki_city.streets[g.network_type], helsinki_map.origin, g.network_type)
    main = street.components()[0]
    dense = densify(helsinki_city.streets[g.network_type])
    near_main = np.min(np.hypot(dense.xy[:, None, 0] - street.xy[None, main, 0],
                                dense.xy[:, None, 1] - street.xy[None, main, 1]), axis=1) < MIN_SPACING_M
    d = np.min(np.hypot(dense.xy[near_main, None, 0] - g.xy[None, :, 0],
                        dense.xy[near_main, None, 1] - g.xy[None, :, 1]), axis=1)
    assert np.all(d < MIN_SPACING_M + 1e-6)
    assert len(main) == g.n_nodes


def test_helsinki_node_spacing_about_50_m(helsinki_map):
    g = helsinki_map.graph
    el = np.array([g.edge_length(a, b) for a, b in g.edges()])
    assert 40.0 <= np.median(el) <= 60.0
    assert np.mean((el >= 35) & (el <= 85)) > 0.9
    assert 300 <= g.n_nodes <= 800


def test_shortest_paths_match_networkx(helsinki_map):
    nx = pytest.importorskip("networkx")
    g = helsinki_map.graph
    G = g.to_networkx()
    rng = np.random.default_rng(1)
    for s in rng.choice(g.n_nodes, size=5, replace=False):
        hops = g.hops_from(int(s))
        metres = g.metres_from(int(s))
        ref_h = nx.single_source_shortest_path_length(G, int(s))
        ref_m = nx.single_source_dijkstra_path_length(G, int(s), weight="length")
        for t in rng.choice(g.n_nodes, size=20, replace=False):
            assert hops[t] == ref_h[int(t)]
            assert metres[t] == pytest.approx(ref_m[int(t)], rel=1e-9)
            path = g.shortest_path(int(s), int(t))
            assert len(path) - 1 == hops[t] and path[0] == s and path[-1] == t
            mpath = g.shortest_path(int(s), int(t), metres=True)
            assert sum(g.edge_length(a, b) for a, b in zip(mpath, mpath[1:])) == pytest.approx(ref_m[int(t)])


def test_network_choice_maximises_poi_coverage(helsinki_map):
    scores = helsinki_map.header.network_scores
    assert set(scores) == {"driving", "walking", "cycling", "all"}
    assert scores[helsinki_map.graph.network_type] == max(scores.values())
    assert helsinki_map.header.network_type == helsinki_map.graph.network_type

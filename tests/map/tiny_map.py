"""A hand-made map of three waypoints and two buildings, for tests that need a map file but not a city."""

from __future__ import annotations

import numpy as np

from common.geodesy import GeoPoint
from onboard.map.build_params import BuildParams
from onboard.map.city import Building, Poi
from onboard.map.corridors import StreetGraph
from onboard.map.onboard_map import MAP_FORMAT_VERSION, MapHeader, OnboardMap

TINY_EXTRACT_SHA256 = "ab" * 32


def tiny_map() -> OnboardMap:
    """Three waypoints, two buildings (one named), two POIs: small enough to damage every byte of."""
    origin = GeoPoint(60.17, 24.94)
    xy = np.array([[0.0, 0.0], [50.0, 0.0], [50.0, 50.0]])
    graph = StreetGraph(xy=xy, latlon=np.array([[60.17, 24.94], [60.17, 24.941], [60.1705, 24.941]]),
                        adj=[[1], [0, 2], [1]], network_type="walking", origin=origin)
    square = np.array([[10.0, 10.0], [30.0, 10.0], [30.0, 30.0], [10.0, 30.0]])
    buildings = [Building(0, "Tower", square, 42.0, "height", "office", aliases=("Tornet", "The Tall One")),
                 Building(1, None, square + 60.0, 20.0, "default")]
    pois = [Poi(0, "Café Ääni", "cafe", np.array([20.0, 5.0]), 60.17005, 24.9404),
            Poi(1, "Kiosk", "shop", np.array([55.0, 40.0]), 60.17036, 24.9409)]
    header = MapHeader(MAP_FORMAT_VERSION, "tiny.osm.pbf", TINY_EXTRACT_SHA256, BuildParams(), "walking", {"walking": 2},
                       {"n_pois_all": 3})
    return OnboardMap("tiny", origin, graph, buildings, pois, header, (0.0, 0.0, 90.0, 90.0))

"""`OnboardMap`: what the vehicle carries of its operating area, and where it came from.

The corridor graph is where the vehicle may fly (the moves on offer at a
waypoint); every building, named or not, is there because line of sight needs
all of them (a landmark behind an unnamed block is hidden); named buildings
are the landmarks a description refers to; named places (POIs) are hints that
may be out of date (`Poi.possibly_stale`). The header says which extract and
which build parameters made the map, so a map and the world it claims to
describe can be checked against each other.

Positions are metres east/north of `origin` (the map's ENU frame); the one
conversion to and from lat/lon is `common.geodesy`, the same as PX4's, so a
position the autopilot reports lands on the map where the autopilot means it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from onboard.map.build_params import BuildParams
from onboard.map.city import Building, Poi, named_landmarks
from onboard.map.corridors import StreetGraph

# The version of what a map holds (header fields, arrays); `map_file` refuses any other.
MAP_FORMAT_VERSION = 1


@dataclass(frozen=True)
class MapHeader:
    """How a map was made: format, source extract, build parameters, the network chosen and why."""

    format_version: int
    extract_name: str  # the extract's file name, e.g. "Helsinki.osm.pbf"
    extract_sha256: str
    params: BuildParams
    network_type: str  # the street network the corridors follow
    network_scores: dict[str, int] = field(default_factory=dict)  # type -> named places reached (those scored)
    source_counts: dict[str, int] = field(default_factory=dict)  # what the extract held before filtering


@dataclass
class OnboardMap:
    """The map the vehicle flies with (see the module doc); plain data, built by `build.build_map`."""

    name: str
    origin: GeoPoint
    graph: StreetGraph
    buildings: list[Building]
    pois: list[Poi]
    header: MapHeader
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # min e, min n, max e, max n

    @cached_property
    def landmarks(self) -> list[Building]:
        """Named buildings, one per name (the largest footprint wins), sorted by name."""
        return named_landmarks(self.buildings)

    def landmark_positions(self) -> dict[str, np.ndarray]:
        """Landmark name -> its footprint's centroid (metres east, north in the map's frame)."""
        return {b.name: b.centroid for b in self.landmarks}

    def to_local(self, lat, lon) -> np.ndarray:
        """Metres (east, north) of the map's origin: shape (2,) for one point, (k, 2) for arrays of k."""
        north, east = ned_from_geo(self.origin, lat, lon)
        if np.ndim(north) == 0:
            return np.array([east, north], dtype=float)
        return np.column_stack([east, north])

    def to_geo(self, xy) -> tuple:
        """(lat, lon) of a point (east, north) in metres, or of each row of a (k, 2) array."""
        a = np.asarray(xy, dtype=float)
        if a.ndim == 1:
            return geo_from_ned(self.origin, float(a[1]), float(a[0]))
        return geo_from_ned(self.origin, a[:, 1], a[:, 0])

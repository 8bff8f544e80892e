"""The one conversion between lat/lon and local metres that every process uses.

A position crosses between the flight bridge, the simulated PX4, the street
world and the ground station as lat/lon, and each side turns it into metres
around its own origin. If two sides convert differently the same point lands
in two places (two spheres and an ellipsoid used to disagree by half a metre
at a 500 m fence), so, like a message definition, the conversion lives here
and nowhere else.

It is PX4's own local-frame projection, so the bridge's metres are the
autopilot's metres: ``MapProjection::project`` / ``reproject`` in PX4-Autopilot
``src/lib/geo/geo.cpp`` (read at commit 018e3c1233b470752d43f32515537fff93ae2b91),
an azimuthal equidistant projection on a sphere of
``CONSTANTS_RADIUS_OF_EARTH`` = 6,371,000 m (``src/lib/geo/geo.h``). North
and east are PX4's local x and y. Distance and bearing from the origin are
exact on that sphere (the defining property of the projection, and what the
tests check independently of the formulas); against the WGS84 ellipsoid,
metres differ by up to about 0.6 % depending on latitude and direction
(0.2 % north-south and 0.36 % east-west in Helsinki), which is PX4's choice
and therefore ours: the bridge's fence and the autopilot's position agree.

The functions take plain floats or numpy arrays (the world projects whole
OSM polylines at once) and return the same kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeVar, Union

import numpy as np

EARTH_RADIUS_M = 6_371_000.0  # PX4 CONSTANTS_RADIUS_OF_EARTH

Coord = TypeVar("Coord", float, np.ndarray)
_Number = Union[float, np.ndarray]


@dataclass(frozen=True)
class GeoPoint:
    """A geodetic position (degrees, metres above mean sea level); also the origin of a local frame.

    Latitude and longitude are range-checked here so that a NaN or a swapped
    pair fails where it enters rather than as NaN metres far downstream.
    """

    lat: float
    lon: float
    alt_amsl: float = 0.0

    def __post_init__(self) -> None:
        if not (-90.0 <= self.lat <= 90.0):
            raise ValueError(f"latitude must be within [-90, 90] degrees, got {self.lat!r}")
        if not (-180.0 <= self.lon <= 180.0):
            raise ValueError(f"longitude must be within [-180, 180] degrees, got {self.lon!r}")


def _scalar_or_array(value: np.ndarray) -> _Number:
    return float(value) if value.ndim == 0 else value


def ned_from_geo(origin: GeoPoint, lat: Coord, lon: Coord) -> tuple[Coord, Coord]:
    """(north, east) metres of (lat, lon) in the local frame around ``origin`` (PX4 ``project``)."""
    lat0, lon0 = math.radians(origin.lat), math.radians(origin.lon)
    sin_lat0, cos_lat0 = math.sin(lat0), math.cos(lat0)
    phi = np.radians(np.asarray(lat, dtype=float))
    d_lon = np.radians(np.asarray(lon, dtype=float)) - lon0
    sin_phi, cos_phi, cos_d_lon = np.sin(phi), np.cos(phi), np.cos(d_lon)
    # c: the angle at the Earth's centre between origin and point; scaling by
    # c / sin(c) makes the distance from the origin the great-circle distance.
    c = np.arccos(np.clip(sin_lat0 * sin_phi + cos_lat0 * cos_phi * cos_d_lon, -1.0, 1.0))
    sin_c = np.sin(c)
    k = np.divide(c, sin_c, out=np.ones_like(c), where=sin_c > 0.0)
    north = k * (cos_lat0 * sin_phi - sin_lat0 * cos_phi * cos_d_lon) * EARTH_RADIUS_M
    east = k * cos_phi * np.sin(d_lon) * EARTH_RADIUS_M
    return _scalar_or_array(north), _scalar_or_array(east)


def geo_from_ned(origin: GeoPoint, north: Coord, east: Coord) -> tuple[Coord, Coord]:
    """(lat, lon) degrees of the point ``north``/``east`` metres from ``origin`` (PX4 ``reproject``)."""
    lat0, lon0 = math.radians(origin.lat), math.radians(origin.lon)
    sin_lat0, cos_lat0 = math.sin(lat0), math.cos(lat0)
    x = np.asarray(north, dtype=float) / EARTH_RADIUS_M
    y = np.asarray(east, dtype=float) / EARTH_RADIUS_M
    c = np.hypot(x, y)
    sin_c, cos_c = np.sin(c), np.cos(c)
    # x * sin(c) / c -> x as c -> 0; at the origin itself the point is the origin.
    s = np.divide(sin_c, c, out=np.ones_like(c), where=c > 0.0)
    lat = np.arcsin(np.clip(cos_c * sin_lat0 + x * s * cos_lat0, -1.0, 1.0))
    lon = lon0 + np.arctan2(y * s, cos_lat0 * cos_c - x * s * sin_lat0)
    return _scalar_or_array(np.degrees(lat)), _scalar_or_array(np.degrees(lon))


def great_circle_m(origin: GeoPoint, lat: float, lon: float) -> float:
    """Metres along the Earth from ``origin`` to (lat, lon) (haversine): right at any range, the antipode
    included, where the local frame's projection is not; NaN for a NaN coordinate."""
    phi0, phi = math.radians(origin.lat), math.radians(lat)
    h = (math.sin((phi - phi0) / 2.0) ** 2
         + math.cos(phi0) * math.cos(phi) * math.sin(math.radians(lon - origin.lon) / 2.0) ** 2)
    return 2.0 * EARTH_RADIUS_M * math.asin(math.sqrt(min(1.0, max(0.0, h)))) if h == h else math.nan

"""Local metric frame: east-north-up (ENU) around a fixed geodetic origin.

The world is about 1 x 1.7 km, so a local tangent plane on the WGS84
ellipsoid is accurate to centimetres there; geodetic coordinates are kept
next to every ENU point because MAVSDK (and a real flight) speaks lat/lon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_WGS84_A = 6378137.0
_WGS84_E2 = 6.69437999014e-3


@dataclass(frozen=True)
class GeoOrigin:
    """The fixed point (lat, lon in degrees, alt in metres) where ENU is (0, 0, 0)."""

    lat: float
    lon: float
    alt: float = 0.0

    def _radii(self) -> tuple[float, float]:
        """Meridional and prime-vertical radii of curvature at the origin (m)."""
        s = math.sin(math.radians(self.lat))
        w = math.sqrt(1.0 - _WGS84_E2 * s * s)
        r_m = _WGS84_A * (1.0 - _WGS84_E2) / w**3
        r_n = _WGS84_A / w
        return r_m, r_n

    def to_enu(self, lat, lon):
        """Geodetic degrees -> (east, north) metres; accepts scalars or arrays."""
        r_m, r_n = self._radii()
        lat = np.asarray(lat, dtype=float)
        lon = np.asarray(lon, dtype=float)
        east = np.radians(lon - self.lon) * r_n * math.cos(math.radians(self.lat))
        north = np.radians(lat - self.lat) * r_m
        if east.ndim == 0:
            return float(east), float(north)
        return east, north

    def to_geodetic(self, east, north):
        """(east, north) metres -> (lat, lon) degrees; the inverse of `to_enu`."""
        r_m, r_n = self._radii()
        east = np.asarray(east, dtype=float)
        north = np.asarray(north, dtype=float)
        lat = self.lat + np.degrees(north / r_m)
        lon = self.lon + np.degrees(east / (r_n * math.cos(math.radians(self.lat))))
        if lat.ndim == 0:
            return float(lat), float(lon)
        return lat, lon


COMPASS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
COMPASS8_WORDS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")


def bearing_deg(dx: float, dy: float) -> float:
    """Compass bearing of the vector (east dx, north dy): 0 = north, 90 = east."""
    return math.degrees(math.atan2(dx, dy)) % 360.0


def compass8(bearing: float) -> str:
    """The 8-point compass abbreviation (N, NE, ...) nearest to a bearing in degrees."""
    return COMPASS8[int(((bearing % 360.0) + 22.5) // 45.0) % 8]


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two bearings, degrees in [0, 180]."""
    d = (a - b) % 360.0
    return min(d, 360.0 - d)

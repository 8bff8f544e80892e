"""Local NED <-> WGS84 around a fixed origin.

PX4 projects its local frame around the EKF origin with an azimuthal
equidistant projection; at the few-kilometre scale of a test flight the
equirectangular form below differs by millimetres, which is far below the GPS
noise we add, and is cheap enough to run at telemetry rates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EARTH_RADIUS_M = 6371000.0


@dataclass(frozen=True)
class GeoOrigin:
    lat_deg: float
    lon_deg: float
    alt_m: float  # AMSL of local z = 0

    def to_global(self, north: float, east: float, down: float) -> tuple[float, float, float]:
        lat = self.lat_deg + math.degrees(north / EARTH_RADIUS_M)
        lon = self.lon_deg + math.degrees(east / (EARTH_RADIUS_M * math.cos(math.radians(self.lat_deg))))
        return lat, lon, self.alt_m - down

    def to_local(self, lat_deg: float, lon_deg: float, alt_m: float) -> tuple[float, float, float]:
        north = math.radians(lat_deg - self.lat_deg) * EARTH_RADIUS_M
        east = math.radians(lon_deg - self.lon_deg) * EARTH_RADIUS_M * math.cos(math.radians(self.lat_deg))
        return north, east, self.alt_m - alt_m

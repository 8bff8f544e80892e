"""Vehicle positions as metres east/north/up of home, from a decoded ``state`` payload (:class:`State`).

A replay puts the vehicle, the agent's pose and its detections in one 3D view,
so they need one frame. The agent reasons in metres east/north of take-off
(home); the autopilot reports a local NED position from its EKF origin, which
may sit elsewhere, together with home in that same frame, so the difference is
the position from home. Without a valid local position (no EKF origin yet, or
a log from a vehicle that only reports GPS) lat/lon are projected around home
with the autopilot's own projection (:mod:`common.geodesy`), so both paths
put the vehicle in the same place.
"""

from __future__ import annotations

import math
from typing import Any

from common.geodesy import GeoPoint, ned_from_geo
from contract.messages import State


def finite(value: Any) -> float | None:
    """``value`` as a float if it is a finite real number (NaN is how the vehicle says 'unknown')."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def home_offset_ne(state: State) -> tuple[float, float]:
    """Home's (north, east) in the autopilot's local frame; (0, 0) when not reported."""
    return finite(state.home_north_m) or 0.0, finite(state.home_east_m) or 0.0


def enu_from_home(state: State, *, first_fix: tuple[float, float] | None = None
                  ) -> tuple[float, float, float] | None:
    """(east, north, up) metres of home, or None when the state has no usable position.

    ``first_fix`` (lat, lon) stands in for home when a GPS-only state does not report home.
    """
    north, east = finite(state.north_m), finite(state.east_m)
    if north is not None and east is not None:
        home_n, home_e = home_offset_ne(state)
        down, home_d = finite(state.down_m), finite(state.home_down_m) or 0.0
        up = -(down - home_d) if down is not None else finite(state.rel_alt_m) or 0.0
        return east - home_e, north - home_n, up
    lat, lon = finite(state.lat), finite(state.lon)
    lat0, lon0 = finite(state.home_lat), finite(state.home_lon)
    if (lat0 is None or lon0 is None) and first_fix is not None:
        lat0, lon0 = first_fix
    if lat is None or lon is None or lat0 is None or lon0 is None:
        return None
    try:
        home, here = GeoPoint(lat0, lon0), GeoPoint(lat, lon)
    except ValueError:  # a corrupt log: not a position, not a crash
        return None
    north, east = ned_from_geo(home, here.lat, here.lon)
    return east, north, finite(state.rel_alt_m) or 0.0

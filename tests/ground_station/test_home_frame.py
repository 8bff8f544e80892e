"""Positions from home: the local NED path, the GPS-only path, and what counts as no position."""

from __future__ import annotations

import pytest

from common.geodesy import GeoPoint, ned_from_geo
from contract.messages import State
from firmware_bridge.vehicle_state import VehicleState
from ground_station.home_frame import enu_from_home


def test_local_position_is_taken_relative_to_home_in_the_same_frame() -> None:
    state = State.from_state(VehicleState(north_m=12.0, east_m=-4.0, down_m=-20.0,
                                       home_north_m=2.0, home_east_m=1.0, home_down_m=-0.5))
    assert enu_from_home(state) == pytest.approx((-5.0, 10.0, 19.5))


def test_gps_only_states_are_projected_around_home_or_the_first_fix() -> None:
    lat0, lon0 = 60.0, 25.0
    north_deg, east_deg = 0.001, 0.002
    state = State.from_state(VehicleState(lat=lat0 + north_deg, lon=lon0 + east_deg, rel_alt_m=30.0,
                                       home_lat=lat0, home_lon=lon0))
    east, north, up = enu_from_home(state)
    # the autopilot's projection (the one the local NED path comes from), not a second one
    assert (north, east) == ned_from_geo(GeoPoint(lat0, lon0), lat0 + north_deg, lon0 + east_deg) and up == 30.0
    assert north == pytest.approx(111.197, abs=1e-3) and east == pytest.approx(111.192, abs=1e-3)
    no_home = State.from_state(VehicleState(lat=lat0 + north_deg, lon=lon0))
    assert enu_from_home(no_home) is None
    assert enu_from_home(no_home, first_fix=(lat0, lon0))[1] == pytest.approx(111.195, abs=1e-3)  # due north


def test_unknown_positions_are_none() -> None:
    assert enu_from_home(State.from_state(VehicleState())) is None
    assert enu_from_home(State(east_m=1.0)) is None
    assert enu_from_home(State(lat=91.0, lon=25.0, home_lat=60.0, home_lon=25.0)) is None  # corrupt log

"""The supervisor's side of the onboard map: moves at the reported position, the flight's frame, a bad file."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from onboard.config import AerieConfig
from onboard.map.map_file import MapFileError, save_map
from onboard.supervisor.map_waypoints import OffTheMap, knowledge_for, position_on
from tests.map.tiny_map import tiny_map


def test_moves_come_from_the_waypoint_nearest_the_reported_position():
    m = tiny_map()
    lat, lon = m.to_geo(np.array([48.0, 3.0]))  # 3.6 m off waypoint 1
    here = position_on(m, lat, lon, max_snap_m=30.0)
    assert here.node == 1 and here.snap_m == pytest.approx(math.hypot(2.0, 3.0), abs=0.01)
    by_node = {mv.node: mv for mv in here.moves}
    assert set(by_node) == {0, 2}
    assert by_node[0].bearing == pytest.approx(270.0) and by_node[2].bearing == pytest.approx(0.0)
    assert by_node[2].length == pytest.approx(50.0)
    assert (by_node[2].lat, by_node[2].lon) == pytest.approx(m.to_geo(np.array([50.0, 50.0])))


def test_a_vehicle_off_the_map_is_said_to_be_so():
    m = tiny_map()
    lat, lon = m.to_geo(np.array([400.0, 0.0]))
    with pytest.raises(OffTheMap, match=r"350 m from the nearest corridor waypoint of map tiny"):
        position_on(m, lat, lon, max_snap_m=30.0, source="map tiny")
    with pytest.raises(OffTheMap, match="no position"):
        position_on(m, float("nan"), lon, max_snap_m=30.0)


def test_the_map_goes_to_the_agent_in_the_flights_own_frame():
    m = tiny_map()
    home_lat, home_lon = m.to_geo(np.array([50.0, 0.0]))
    known = knowledge_for(m, home_lat, home_lon, uncertainty_m=10.0)
    assert set(known.landmarks) == {"Tower"}
    assert known.landmarks["Tower"] == pytest.approx(m.landmark_positions()["Tower"] - np.array([50.0, 0.0]), abs=1e-3)
    assert known.corridors.xy[1] == pytest.approx([0.0, 0.0], abs=1e-3) and known.uncertainty_m == 10.0
    with pytest.raises(OffTheMap, match="no home position"):
        knowledge_for(m, float("nan"), float("nan"), 10.0)


def test_a_damaged_map_stops_the_supervisor_naming_the_file(tmp_path):
    from onboard.supervisor.startup import load_map
    from onboard.supervisor.supervisor import Supervisor

    path = save_map(tiny_map(), tmp_path / "tiny.aeriemap")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    cfg = replace(AerieConfig(), data_dir=str(tmp_path), map=replace(AerieConfig().map, path="tiny.aeriemap"))
    with pytest.raises(MapFileError, match="tiny.aeriemap"):
        load_map(Supervisor(cfg))


def test_without_a_map_or_moves_the_mission_ends_before_take_off(tmp_path):
    import asyncio

    from onboard.supervisor.supervisor import Supervisor
    from sim.flight_rig import start_rig
    from tests.supervisor.flightkit import world

    rig = start_rig("t019", world=world(), offer_moves=False)
    try:
        base = replace(AerieConfig(), supervisor=replace(AerieConfig().supervisor, use_memory=False,
                                                         status_socket=False))
        cfg = rig.config(base, tmp_path / "vehicle")
        outcome = asyncio.run(Supervisor(cfg, rig.mission()).run())
        assert outcome.reason.startswith("aborted: no moves on offer") and "map.path" in outcome.reason, outcome
        assert outcome.steps == 0 and not rig.vehicle.truth()["armed"]
    finally:
        rig.close()

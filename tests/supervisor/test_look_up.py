"""The look-up's two lines of refusal, without flying: what the supervisor offers and refuses, and the executor.

The flight itself (a look-up flown, one above the ceiling refused and not
flown, a link loss during the climb) is one flight in tests/supervisor/test_faults.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from common.geodesy import GeoPoint
from firmware_bridge.safety_envelope import SafetyEnvelope
from firmware_bridge.settings import SafetyConfig
from firmware_bridge.vehicle_state import VehicleState
from onboard.config import AerieConfig
from onboard.supervisor.flight_executor import FlightExecutor
from onboard.mission.look_offers import look_low_refusal, look_up_refusal
from onboard.supervisor.look_limits import LOOK_UP_CEILING_MARGIN_M, look_low_floor, look_up_ceiling

HOME = GeoPoint(60.17, 24.94, 10.0)


def test_the_ceiling_offered_and_the_altitudes_refused():
    cfg = AerieConfig()
    cruise = cfg.supervisor.cruise_alt_m
    ceiling = cfg.safety.altitude_ceiling_m - LOOK_UP_CEILING_MARGIN_M
    assert look_up_ceiling(cfg) == ceiling
    assert look_up_ceiling(replace(cfg, agent=replace(cfg.agent, use_look_up=False))) is None
    low = replace(cfg, safety=replace(cfg.safety, altitude_ceiling_m=cruise + LOOK_UP_CEILING_MARGIN_M))
    assert look_up_ceiling(low) is None  # no room above cruise: nothing on offer

    assert look_up_refusal(ceiling, cruise, ceiling) is None
    assert look_up_refusal(cruise + 0.1, cruise, ceiling) is None
    for bad in (None, float("nan"), float("inf"), -float("inf"), cruise, cruise - 5.0, ceiling + 0.1, 1e9, True, "60"):
        assert look_up_refusal(bad, cruise, ceiling) is not None, bad
    assert look_up_refusal(60.0, cruise, None) == "no look-up on offer"


def test_the_look_low_floor_offered_only_with_camera_perception_and_the_altitudes_refused():
    cfg = AerieConfig()
    cruise = cfg.supervisor.cruise_alt_m
    assert look_low_floor(cfg) is None  # the world feed's names do not depend on altitude: nothing on offer
    cam = replace(cfg, supervisor=replace(cfg.supervisor, perception="camera"))
    floor = cam.supervisor.camera_reading.low_floor_m
    assert look_low_floor(cam) == floor < cruise
    assert look_low_floor(replace(cam, agent=replace(cam.agent, look_low_alt_m=0.0))) is None
    high_floor = replace(cam, safety=replace(cam.safety, altitude_floor_m=15.0))
    assert look_low_floor(high_floor) == 15.0  # never below the envelope's floor
    no_room = replace(cam, supervisor=replace(cam.supervisor, camera_reading=replace(
        cam.supervisor.camera_reading, low_floor_m=cruise)))
    assert look_low_floor(no_room) is None

    assert look_low_refusal(floor, cruise, floor) is None
    assert look_low_refusal(cruise - 0.1, cruise, floor) is None
    for bad in (None, float("nan"), float("inf"), -float("inf"), cruise, cruise + 5.0, floor - 0.1, -1e9, True, "12"):
        assert look_low_refusal(bad, cruise, floor) is not None, bad
    assert look_low_refusal(12.0, cruise, None) == "no look-low on offer"


def test_while_up_only_a_further_climb_and_part_way_down_only_on_the_way():
    from onboard.mission.look_offers import come_down_refusal, further_climb_refusal

    assert further_climb_refusal(40.0, None) is None  # at cruise: the look-up's own rule applies
    assert further_climb_refusal(100.0, 62.5) is None  # the next leg of a climb
    for bad in (62.5, 50.0, float("nan"), None, True):
        assert further_climb_refusal(bad, 62.5) is not None, bad
    assert come_down_refusal(None, 25.0, None, True) is not None  # nothing to come down from
    assert come_down_refusal(None, 25.0, 100.0, False) is None and come_down_refusal(None, 25.0, 100.0, True) is None
    assert come_down_refusal(62.5, 25.0, 100.0, True) is None
    assert come_down_refusal(62.5, 25.0, 100.0, False) is not None  # part of the way down: only on the way
    for bad in (25.0, 100.0, 120.0, 10.0, float("nan"), True):
        assert come_down_refusal(bad, 25.0, 100.0, True) is not None, bad


class _Bridge:
    """Just enough of a `FlightBridge` for the executor to judge a climb: an envelope and a state."""

    def __init__(self, safety: SafetyConfig) -> None:
        self._envelope = SafetyEnvelope(safety, HOME)
        self.state = VehicleState(lat=HOME.lat, lon=HOME.lon, rel_alt_m=30.0, yaw_deg=90.0, in_air=True)
        self.submitted: list = []

    def envelope(self) -> SafetyEnvelope:
        return self._envelope

    def submit(self, intent):  # pragma: no cover - a refused climb must never get here
        self.submitted.append(intent)
        raise AssertionError("a refused climb submitted a setpoint")


def test_the_executor_refuses_a_climb_the_envelope_would_clamp():
    """The envelope clamps altitudes; a look-up clamped to the ceiling would report a view it never had."""
    bridge = _Bridge(SafetyConfig(altitude_ceiling_m=50.0))
    events: list = []
    executor = FlightExecutor(bridge, AerieConfig().supervisor, lambda kind, detail: events.append((kind, detail)))
    result = asyncio.run(executor.climb_to(80.0))
    assert result.refused is not None and "ceiling" in result.refused and not result.arrived
    assert events == [("command_refused", {"command": "climb", "altitude_m": 80.0, "reason": result.refused})]
    assert bridge.submitted == []
    assert asyncio.run(executor.climb_to(float("nan"))).refused is not None  # a NaN target too
    # Climbing on the way to a waypoint: judged at the waypoint, refused the same; nothing flown, and the
    # moves after it are still flown at cruise.
    events.clear()
    result = asyncio.run(executor.climb_on_to(HOME.lat + 0.0005, HOME.lon, 80.0))
    assert result.refused is not None and "ceiling" in result.refused and not result.arrived
    assert events == [("command_refused", {"command": "climb", "altitude_m": 80.0, "reason": result.refused})]
    assert bridge.submitted == [] and executor.flying_alt_m == AerieConfig().supervisor.cruise_alt_m
    assert asyncio.run(executor.climb_on_to(HOME.lat + 0.0005, HOME.lon, float("nan"))).refused is not None


def test_the_executor_refuses_a_look_up_while_the_fleet_rule_flies_the_layer():
    """In a fleet the separation rule may hold the vehicle on its layer; a look-up flown there would
    report a view from an altitude it never had (and a descent judged at cruise would never end)."""
    from types import SimpleNamespace

    from firmware_bridge.intents import PositionNed
    from firmware_bridge.separation import Decision

    bridge = _Bridge(SafetyConfig())
    executor = FlightExecutor(bridge, AerieConfig().supervisor, lambda kind, detail: None)
    bridge.fleet = SimpleNamespace(last=Decision(PositionNed(0.0, 0.0, -45.0), "fallback", "fleet channel silent"))
    result = asyncio.run(executor.climb_to(60.0))
    assert result.refused is not None and "layer (45.0 m)" in result.refused and not result.arrived
    assert bridge.submitted == []
    result = asyncio.run(executor.climb_on_to(HOME.lat + 0.0005, HOME.lon, 60.0))
    assert result.refused is not None and "layer (45.0 m)" in result.refused and bridge.submitted == []
    goal = PositionNed(5.0, 5.0, -30.0)
    assert executor.pilot.as_flown(goal) == PositionNed(5.0, 5.0, -45.0)  # what a descent to cruise ends at
    bridge.fleet.last = Decision(PositionNed(0.0, 0.0, -30.0), "hold", "conflict")
    assert executor.pilot.as_flown(goal) == goal  # a hold is not the layer: the goal stays
    bridge.fleet.last = Decision(PositionNed(0.0, 0.0, -30.0), "clear")
    assert executor.pilot.as_flown(goal) == goal


def test_the_executor_refuses_a_look_low_the_envelope_or_the_fleet_layer_would_change():
    from types import SimpleNamespace

    from firmware_bridge.intents import PositionNed
    from firmware_bridge.separation import Decision

    bridge = _Bridge(SafetyConfig(altitude_floor_m=15.0))
    executor = FlightExecutor(bridge, AerieConfig().supervisor, lambda kind, detail: None)
    result = asyncio.run(executor.descend_to(12.0))  # clamped to the floor: a view it would never have
    assert result.refused is not None and not result.arrived and bridge.submitted == []
    bridge = _Bridge(SafetyConfig())
    executor = FlightExecutor(bridge, AerieConfig().supervisor, lambda kind, detail: None)
    bridge.fleet = SimpleNamespace(last=Decision(PositionNed(0.0, 0.0, -45.0), "fallback", "fleet channel silent"))
    result = asyncio.run(executor.descend_to(12.0))
    assert result.refused is not None and "layer (45.0 m)" in result.refused and bridge.submitted == []

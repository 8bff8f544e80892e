import math

import pytest

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from firmware_bridge.intents import GlobalTarget, PositionNed, VelocityNed
from firmware_bridge.polygon import point_in_polygon
from firmware_bridge.safety_envelope import BatteryAction, SafetyEnvelope, SafetyViolation
from firmware_bridge.settings import GeofenceConfig, SafetyConfig

HOME = GeoPoint(47.397743, 8.5455941, 489.3)


def square_fence(half_m: float) -> list[tuple[float, float]]:
    return [geo_from_ned(HOME, n, e) for n, e in ((-half_m, -half_m), (-half_m, half_m), (half_m, half_m), (half_m, -half_m))]


def envelope(**kw) -> SafetyEnvelope:
    fence = kw.pop("fence", GeofenceConfig(polygon=square_fence(100.0), max_distance_from_home_m=500.0))
    return SafetyEnvelope(SafetyConfig(geofence=fence, **kw), HOME)


def test_geo_round_trip():
    lat, lon = geo_from_ned(HOME, 123.4, -56.7)
    n, e = ned_from_geo(HOME, lat, lon)
    assert n == pytest.approx(123.4, abs=1e-6) and e == pytest.approx(-56.7, abs=1e-6)


def test_point_in_polygon_concave():
    poly = [(0, 0), (10, 0), (10, 10), (5, 5), (0, 10)]
    assert point_in_polygon(2, 2, poly)
    assert not point_in_polygon(5, 8, poly)  # inside the notch
    assert point_in_polygon(10, 5, poly)  # on an edge


def test_target_inside_passes_unchanged():
    v = envelope().check_position(PositionNed(50, -50, -20))
    assert not v.clamped and v.intent == PositionNed(50, -50, -20)


def test_target_outside_fence_is_refused():
    with pytest.raises(SafetyViolation, match="outside the geofence"):
        envelope().check_position(PositionNed(150, 0, -20))


def test_target_outside_fence_is_clamped_inside_when_configured():
    env = envelope(fence=GeofenceConfig(polygon=square_fence(100.0), action="clamp"))
    v = env.check_position(PositionNed(150, 30, -20))
    p = v.intent
    assert v.clamped and env.inside_fence(p.north_m, p.east_m)
    assert p.north_m == pytest.approx(99, abs=1.5) and p.east_m == pytest.approx(30, abs=2)


def test_radius_applies_without_polygon():
    env = envelope(fence=GeofenceConfig(max_distance_from_home_m=200.0))
    env.check_position(PositionNed(150, 0, -10))
    with pytest.raises(SafetyViolation):
        env.check_position(PositionNed(150, 150, -10))


def test_altitude_is_clamped_to_ceiling_and_floor():
    env = envelope(altitude_ceiling_m=50.0, altitude_floor_m=3.0)
    assert env.check_position(PositionNed(0, 0, -500)).intent.rel_alt_m == 50.0
    assert env.check_position(PositionNed(0, 0, 5)).intent.rel_alt_m == 3.0


def test_non_finite_target_is_refused():
    with pytest.raises(SafetyViolation):
        envelope().check_position(PositionNed(math.nan, 0, -10))
    with pytest.raises(SafetyViolation):
        envelope().check_velocity(VelocityNed(math.inf, 0, 0), PositionNed(0, 0, -10))


def test_global_target_outside_is_refused():
    lat, lon = geo_from_ned(HOME, 0, 300)
    with pytest.raises(SafetyViolation):
        envelope().check_global(GlobalTarget(lat, lon, 20))


def test_velocity_is_clamped_to_limits():
    env = envelope(max_horizontal_speed_m_s=5.0, max_vertical_speed_m_s=1.0)
    v = env.check_velocity(VelocityNed(30, 40, -3), PositionNed(0, 0, -20)).intent
    assert math.hypot(v.north_m_s, v.east_m_s) == pytest.approx(5.0)
    assert v.north_m_s / v.east_m_s == pytest.approx(0.75)
    assert v.down_m_s == -1.0


def test_velocity_towards_fence_is_stopped_near_it():
    env = envelope()
    v = env.check_velocity(VelocityNed(5, 0, 0), PositionNed(95, 0, -20))
    assert v.clamped and v.intent.north_m_s == 0.0
    # the same velocity far from the fence flies
    assert not env.check_velocity(VelocityNed(5, 0, 0), PositionNed(0, 0, -20)).clamped


def test_velocity_back_inside_is_allowed_when_outside():
    env = envelope()
    v = env.check_velocity(VelocityNed(-3, 0, 0), PositionNed(110, 0, -20))
    assert v.intent.north_m_s == -3


def test_climb_past_ceiling_is_stopped():
    env = envelope(altitude_ceiling_m=30.0)
    v = env.check_velocity(VelocityNed(0, 0, -2), PositionNed(0, 0, -29))
    assert v.intent.down_m_s == 0.0


def test_velocity_without_position_estimate_stops_horizontal_motion():
    v = envelope().check_velocity(VelocityNed(2, 2, 0), None)
    assert v.intent.north_m_s == 0 and v.intent.east_m_s == 0


@pytest.mark.parametrize("percent,expected", [
    (80, BatteryAction.NONE), (30, BatteryAction.WARN), (25, BatteryAction.WARN),
    (20, BatteryAction.RETURN), (11, BatteryAction.RETURN), (10, BatteryAction.LAND), (0, BatteryAction.LAND),
    (math.nan, BatteryAction.NONE),
])
def test_battery_ladder(percent, expected):
    assert envelope().battery_action(percent) == expected


def test_home_outside_polygon_is_a_configuration_error():
    far = [geo_from_ned(HOME, n, e) for n, e in ((1000, 1000), (1000, 1100), (1100, 1100))]
    with pytest.raises(ValueError, match="home lies outside"):
        SafetyEnvelope(SafetyConfig(geofence=GeofenceConfig(polygon=far)), HOME)

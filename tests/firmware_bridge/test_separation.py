"""The separation rule, the fleet picture and their glue, on synthetic clocks (no vehicle, no sleeping)."""

import math
from dataclasses import replace

import pytest

from common.geodesy import GeoPoint, geo_from_ned
from common.typed_config import ConfigError
from firmware_bridge.fleet_guard import FleetGuard
from firmware_bridge.fleet_picture import FleetPicture, TrafficReport
from firmware_bridge.intents import PositionNed, VelocityNed
from firmware_bridge.safety_envelope import SafetyEnvelope, SafetyViolation
from firmware_bridge.separation import (Kinematics, Margin, Other, SeparationRule, conflict, margin, other_path,
                                       own_path, too_near)
from firmware_bridge.settings import BridgeConfig, FleetConfig, SafetyConfig
from firmware_bridge.vehicle_state import VehicleState

HOME = GeoPoint(47.397743, 8.5455941, 489.3)
CFG1 = FleetConfig(enabled=True, member_id=1)
CFG2 = FleetConfig(enabled=True, member_id=2)


class Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def report(member: int, north: float, east: float, alt: float = 10.0, vn=0.0, ve=0.0, vd=0.0, age=0.0):
    lat, lon = geo_from_ned(HOME, north, east)
    return TrafficReport(member, lat, lon, HOME.alt_amsl + alt, vn, ve, vd, age)


# -- the rule ------------------------------------------------------------------------------
def test_crossing_yielder_takes_its_layer_and_priority_keeps_its_path():
    """Two vehicles 33 m from a crossing at 4 m/s: the higher id flies its layer, the lower flies on.

    33 m: the conflict is within the 6 s horizon, and a climb on the move clears the downwash
    minimum (10 m at 2 m/s) before the two are within the judged radius (10 m grown by their
    closing speed, 5.66 m/s, times the 1 s margin). At 30 m it would not: the yielder climbs where it stands.
    """
    yielder, keeper = SeparationRule(CFG2, 8.0, 2.0), SeparationRule(CFG1, 8.0, 2.0)
    b = Kinematics(0.0, -33.0, 10.0, 0.0, 4.0, 0.0)  # eastbound
    a = Kinematics(-33.0, 0.0, 10.0, 4.0, 0.0, 0.0)  # northbound
    d = yielder.judge(b, PositionNed(0.0, -29.0, -10.0), [Other(1, a)], silent=False)
    assert d.action == "layer" and d.conflicts == (1,)
    assert d.intent == PositionNed(0.0, -29.0, -CFG2.layer_alt_m)  # same carrot, own layer
    near = Kinematics(0.0, -30.0, 10.0, 0.0, 4.0, 0.0)
    close = Other(1, Kinematics(-30.0, 0.0, 10.0, 4.0, 0.0, 0.0))
    assert SeparationRule(CFG2, 8.0, 2.0).judge(near, PositionNed(0.0, -26.0, -10.0), [close], False).action == "climb"
    # The keeper sees the yielder climbing (vd < 0): no conflict within its half horizon.
    climbing = Kinematics(0.0, -30.0, 10.0, 0.0, 4.0, -2.0)
    assert keeper.judge(a, PositionNed(-26.0, 0.0, -10.0), [Other(2, climbing)], False).action == "clear"


def test_far_apart_or_beyond_the_downwash_minimum_is_clear():
    rule = SeparationRule(CFG2, 8.0, 2.0)
    here = Kinematics(0.0, -60.0, 10.0, 0.0, 4.0, 0.0)
    far = Other(1, Kinematics(-60.0, 0.0, 10.0, 4.0, 0.0, 0.0))
    assert rule.judge(here, PositionNed(0.0, -56.0, -10.0), [far], False).action == "clear"
    above = Other(1, Kinematics(-20.0, 0.0, 10.5 + CFG2.downwash_vertical_m, 4.0, 0.0, 0.0))
    near = Kinematics(0.0, -20.0, 10.0, 0.0, 4.0, 0.0)
    assert rule.judge(near, PositionNed(0.0, -16.0, -10.0), [above], False).action == "clear"


@pytest.mark.parametrize("up_m", [5.0, 5.5, 6.0, 9.5])
def test_a_crossing_in_another_band_but_within_the_downwash_is_a_conflict(up_m):
    """36.17: two bands apart by 5 m or more, yet one would pass over the other in its downwash."""
    rule = SeparationRule(CFG2, 8.0, 2.0)
    near = Kinematics(0.0, -20.0, 10.0, 0.0, 4.0, 0.0)
    above = Other(1, Kinematics(-20.0, 0.0, 10.0 + up_m, 4.0, 0.0, 0.0))
    d = rule.judge(near, PositionNed(0.0, -16.0, -10.0), [above], False)
    assert d.action != "clear" and d.conflicts == (1,)
    # the keeper too holds when the one below it cannot get out of its way in time
    keeper = SeparationRule(CFG1, 8.0, 2.0)
    over = Kinematics(-8.0, 0.0, 10.0 + up_m, 4.0, 0.0, 0.0)
    below = Other(2, Kinematics(0.0, -8.0, 10.0, 0.0, 4.0, 0.0))
    assert keeper.judge(over, PositionNed(-4.0, 0.0, -(10.0 + up_m)), [below], False).action == "hold"


def test_too_near_is_a_cylinder_of_min_separation_across_and_the_downwash_minimum_up_and_down():
    cfg = FleetConfig(min_separation_m=10.0, altitude_band_m=5.0, downwash_vertical_m=10.0)
    assert too_near(3.06, 5.0, cfg) and too_near(3.06, -5.0, cfg)  # the encounter
    assert too_near(9.99, 9.99, cfg)
    assert not too_near(10.0, 0.0, cfg) and not too_near(0.0, 10.0, cfg) and not too_near(0.0, -10.0, cfg)
    assert not too_near(math.nan, 0.0, cfg) and not too_near(0.0, math.nan, cfg)


def test_head_on_yielder_that_cannot_climb_in_time_climbs_where_it_stands():
    rule = SeparationRule(CFG2, 8.0, 2.0)
    here = Kinematics(0.0, 0.0, 10.0, -4.0, 0.0, 0.0)  # southbound
    oncoming = Other(1, Kinematics(-16.0, 0.0, 10.0, 4.0, 0.0, 0.0))
    d = rule.judge(here, PositionNed(-4.0, 0.0, -10.0), [oncoming], False)
    assert d.action == "climb"
    assert d.intent == PositionNed(0.0, 0.0, -CFG2.layer_alt_m)
    # It keeps the point it stopped at while it climbs (it drifts on while braking).
    drifted = Kinematics(-1.5, 0.0, 12.0, -1.0, 0.0, -2.0)
    again = rule.judge(drifted, PositionNed(-6.0, 0.0, -10.0), [oncoming], False)
    assert again.action == "climb" and (again.intent.north_m, again.intent.east_m) == (0.0, 0.0)


def test_yielder_holds_when_its_layer_is_where_the_other_flies():
    rule = SeparationRule(CFG2, 8.0, 2.0)
    alt = CFG2.layer_alt_m - 6.0
    here = Kinematics(0.0, 0.0, alt, -4.0, 0.0, 0.0)
    near_my_layer = Other(1, Kinematics(-16.0, 0.0, CFG2.layer_alt_m - 3.0, 4.0, 0.0, 0.0))  # 3 m below my layer
    d = rule.judge(here, PositionNed(-4.0, 0.0, -alt), [near_my_layer], False)
    assert d.action == "hold"
    assert d.intent == PositionNed(0.0, 0.0, -alt)


def test_yielder_does_not_climb_or_descend_to_its_layer_through_a_third_vehicle():
    """Yielding to member 1 above its layer, member 2 would come down where it stands onto member 3: it holds."""
    rule = SeparationRule(CFG2, 8.0, 2.0)
    here = Kinematics(0.0, 0.0, 60.0, -4.0, 0.0, 0.0)  # southbound, 24 m above its layer
    oncoming = Other(1, Kinematics(-16.0, 0.0, 60.0, 4.0, 0.0, 0.0))
    intent = PositionNed(-4.0, 0.0, -60.0)
    assert rule.judge(here, intent, [oncoming], False).action == "climb"  # alone: down to the layer
    below = Other(3, Kinematics(2.0, 0.0, 45.0))  # hovering 15 m below, between it and its layer
    d = SeparationRule(CFG2, 8.0, 2.0).judge(here, intent, [oncoming, below], False)
    assert d.action == "hold" and d.intent == PositionNed(0.0, 0.0, -60.0)


def test_priority_vehicle_holds_only_when_the_conflict_is_imminent():
    keeper = SeparationRule(CFG1, 8.0, 2.0)
    here = Kinematics(0.0, 0.0, 10.0, 4.0, 0.0, 0.0)
    # The yielder stands 26 m ahead in the band: a conflict within 6 s, not within 3 s.
    ahead_far = Other(2, Kinematics(26.0, 0.0, 10.0))
    assert keeper.judge(here, PositionNed(4.0, 0.0, -10.0), [ahead_far], False).action == "clear"
    ahead_near = Other(2, Kinematics(14.0, 0.0, 10.0))
    d = keeper.judge(here, PositionNed(4.0, 0.0, -10.0), [ahead_near], False)
    assert d.action == "hold" and d.conflicts == (2,)


def test_moving_apart_from_a_breach_is_allowed_getting_nearer_is_not():
    rule = SeparationRule(CFG1, 8.0, 2.0)
    here = Kinematics(0.0, 0.0, 10.0)
    other = Other(2, Kinematics(6.0, 0.0, 10.0))
    assert rule.judge(here, VelocityNed(-2.0, 0.0, 0.0), [other], False).action == "clear"
    d = rule.judge(here, VelocityNed(2.0, 0.0, 0.0), [other], False)
    assert d.action == "hold" and d.intent == VelocityNed(0.0, 0.0, 0.0)


def test_stacked_already_getting_out_in_3d_is_allowed_closing_in_is_not():
    """Found 5 m over another and 3 m across (36.17): up, or sideways away, is flown; down or across is not."""
    rule = SeparationRule(CFG1, 8.0, 2.0)
    over = Kinematics(0.0, 0.0, 15.0)
    below = Other(2, Kinematics(3.0, 0.0, 10.0))
    assert rule.judge(over, VelocityNed(0.0, 0.0, -2.0), [below], False).action == "clear"  # climbing away
    assert rule.judge(over, VelocityNed(-2.0, 0.0, 0.0), [below], False).action == "clear"  # sideways away
    assert rule.judge(over, VelocityNed(0.0, 0.0, 1.0), [below], False).action == "hold"  # sinking onto it
    assert rule.judge(over, VelocityNed(2.0, 0.0, 0.0), [below], False).action == "hold"  # right over it


def test_descending_onto_a_vehicle_below_is_a_conflict():
    """Vertically separated now, the path into its band within the limit: not 'moving apart'."""
    rule = SeparationRule(CFG2, 8.0, 2.0)
    on_layer = Kinematics(0.0, 0.0, 14.0)
    below = Other(1, Kinematics(3.0, 0.0, 8.0))  # standing still, 3 m off
    d = rule.judge(on_layer, PositionNed(0.0, 0.0, -8.0), [below], False)
    assert d.action != "clear"
    assert -d.intent.down_m >= 14.0 - 1e-9  # never lower


def test_silent_channel_takes_own_layer_in_place_then_flies_on_it():
    rule = SeparationRule(CFG2, 8.0, 2.0)
    here = Kinematics(5.0, 5.0, 10.0, 3.0, 0.0, 0.0)
    d = rule.judge(here, PositionNed(9.0, 5.0, -10.0), [], silent=True)
    assert d.action == "fallback_climb" and d.intent == PositionNed(5.0, 5.0, -CFG2.layer_alt_m)
    at_layer = Kinematics(6.0, 5.0, CFG2.layer_alt_m - 1.0)
    d = rule.judge(at_layer, PositionNed(10.0, 5.0, -10.0), [], silent=True)
    assert d.action == "fallback" and d.intent == PositionNed(10.0, 5.0, -CFG2.layer_alt_m)
    v = rule.judge(at_layer, VelocityNed(1.0, 0.0, 0.0), [], silent=True).intent
    assert (v.north_m_s, v.east_m_s) == (1.0, 0.0) and v.down_m_s < 0  # climbing the last metre


def test_paths_project_intent_momentum_and_report_age():
    here = Kinematics(0.0, 0.0, 10.0, 0.0, 4.0, 0.0)
    carrot = own_path(here, PositionNed(0.0, 2.0, -10.0), 8.0, 2.0, 4.0)
    assert carrot(4.0)[:2] == (0.0, 2.0)  # never beyond the target
    o = other_path(Other(1, Kinematics(0.0, 0.0, 10.0, 1.0, 0.0, -1.0), age_s=2.0))
    assert o(1.0) == pytest.approx((3.0, 0.0, 13.0))
    assert not conflict(carrot, o, 4.0, CFG1)  # 3 m off now and moving apart: not nearer


# -- the picture ----------------------------------------------------------------------------
def test_picture_rejects_nan_and_out_of_range_reports_by_name():
    clock = Clock()
    pic = FleetPicture(own_id=1, timeout_s=3.0, clock=clock)
    bad = [TrafficReport(2, math.nan, 8.5, 500.0),
           TrafficReport(3, 47.0, 8.5, math.inf), TrafficReport(4, 47.0, 8.5, 500.0, vn_m_s=math.nan),
           TrafficReport(5, 47.0, 8.5, 500.0, age_s=-1.0), TrafficReport(0, 47.0, 8.5, 500.0),
           TrafficReport(6, 47.0, 181.0, 500.0)]
    why = pic.update(bad)
    assert len(why) == 6
    assert "lat" in why[0] and "alt_amsl_m" in why[1] and "vn_m_s" in why[2] and "age_s" in why[3]
    assert "member_id" in why[4] and "lon" in why[5]
    assert pic.fresh() == [] and pic.stale()  # garbage is not the channel speaking


def test_picture_ages_out_stale_entries_and_keeps_the_newest():
    clock = Clock()
    pic = FleetPicture(own_id=1, timeout_s=3.0, clock=clock)
    assert pic.stale()  # never heard
    pic.update([report(2, 10, 0, age=0.5), report(3, 20, 0), report(1, 0, 0)])  # own id ignored
    assert sorted(e.report.member_id for e in pic.fresh()) == [2, 3]
    pic.update([report(2, 99, 0, age=1.0)])  # older than the one held: ignored
    assert next(e for e in pic.fresh() if e.report.member_id == 2).report.age_s == 0.5
    clock.t += 2.6
    pic.update([report(3, 21, 0)])
    assert [e.report.member_id for e in pic.fresh()] == [3]  # 2's position is 3.1 s old now
    assert not pic.stale()
    clock.t += 3.01
    assert pic.stale() and pic.fresh() == []
    pic.update([])  # an empty batch is the channel speaking
    assert not pic.stale()


# -- the glue ----------------------------------------------------------------------------
class Vehicle:
    """A VehicleState holder standing in for the telemetry hub."""

    def __init__(self, north: float, east: float, alt: float, vn=0.0, ve=0.0, vd=0.0) -> None:
        lat, lon = geo_from_ned(HOME, north, east)
        self.state = VehicleState(lat=lat, lon=lon, alt_amsl_m=HOME.alt_amsl + alt, rel_alt_m=alt,
                                  vn_m_s=vn, ve_m_s=ve, vd_m_s=vd, home_lat=HOME.lat, home_lon=HOME.lon,
                                  home_alt_amsl_m=HOME.alt_amsl)


def guard_for(cfg: FleetConfig, vehicle: Vehicle, clock: Clock, events: list):
    envelope = SafetyEnvelope(SafetyConfig(), HOME)
    guard = FleetGuard(cfg, SafetyConfig(), lambda: vehicle.state, lambda: envelope,
                       lambda kind, detail: events.append((kind, detail)), clock=clock)
    return guard, envelope


def test_guard_events_for_layer_silence_and_restoration():
    clock, events = Clock(), []
    me = Vehicle(0.0, -33.0, 10.0, ve=4.0)
    guard, env = guard_for(CFG2, me, clock, events)
    guard.update_traffic([report(1, -33.0, 0.0, vn=4.0)])
    d = guard.apply(PositionNed(0.0, -29.0, -10.0), env)
    assert d.action == "layer"
    assert [k for k, _ in events] == ["separation_layer"]
    assert events[0][1]["with"] == [1] and events[0][1]["layer_alt_m"] == CFG2.layer_alt_m
    guard.apply(PositionNed(0.0, -29.0, -10.0), env)  # the same again: no second event
    assert len(events) == 1
    clock.t += CFG2.channel_timeout_s + 0.1
    assert guard.apply(PositionNed(0.0, -29.0, -10.0), env).action == "fallback_climb"
    assert [k for k, _ in events][1:] == ["fleet_channel_silent", "separation_fallback_climb"]
    assert events[1][1]["silent_s"] >= CFG2.channel_timeout_s
    guard.update_traffic([report(1, -60.0, 0.0)])
    assert guard.apply(PositionNed(0.0, -29.0, -10.0), env).action == "clear"
    assert [k for k, _ in events][3:] == ["fleet_channel_restored", "separation_clear"]


def test_guard_refuses_conflicting_goto_and_rejected_traffic_is_an_event():
    clock, events = Clock(), []
    guard, env = guard_for(CFG2, Vehicle(0.0, -30.0, 10.0), clock, events)
    assert guard.update_traffic([TrafficReport(1, math.nan, 0.0, 500.0)])
    assert events[-1][0] == "traffic_rejected"
    assert "fleet channel silent" in guard.check_goto(PositionNed(0.0, 30.0, -10.0), env)
    guard.update_traffic([report(1, 0.0, 0.0)])  # standing on the straight line
    why = guard.check_goto(PositionNed(0.0, 30.0, -10.0), env)
    assert why is not None and "[1]" in why and events[-1][0] == "separation_refused"
    assert guard.check_goto(PositionNed(-30.0, -30.0, -10.0), env) is None


def test_guard_refuses_without_own_position_and_is_inert_when_disabled():
    clock, events = Clock(), []
    blind = Vehicle(0.0, 0.0, 10.0)
    blind.state = VehicleState(home_lat=HOME.lat, home_lon=HOME.lon, home_alt_amsl_m=HOME.alt_amsl)
    guard, env = guard_for(CFG2, blind, clock, events)
    guard.update_traffic([])
    with pytest.raises(SafetyViolation):
        guard.apply(PositionNed(0.0, 0.0, -10.0), env)
    off, env = guard_for(FleetConfig(), blind, clock, events)
    assert off.apply(PositionNed(0.0, 0.0, -10.0), env).action == "clear"  # a lone vehicle: no fleet rule


# -- config ------------------------------------------------------------------------------
def test_fleet_config_layers_must_fit_and_be_the_downwash_minimum_apart(tmp_path):
    with pytest.raises(ValueError, match="layer_spacing_m"):
        FleetConfig(altitude_band_m=9.0, layer_spacing_m=8.0)
    with pytest.raises(ValueError, match="layer_spacing_m must be at least fleet.downwash_vertical_m"):
        FleetConfig(downwash_vertical_m=15.0, layer_spacing_m=12.0)
    with pytest.raises(ValueError, match="downwash_vertical_m must be at least fleet.altitude_band_m"):
        FleetConfig(downwash_vertical_m=4.0, altitude_band_m=5.0)
    with pytest.raises(ValueError, match="ceiling"):
        BridgeConfig(fleet=FleetConfig(enabled=True, member_id=10))  # 12 + 10 * 12 = 132 m > 120 m
    from onboard.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text("fleet:\n  enabled: true\n  member_id: 3\n")
    assert load_config(path).bridge.fleet.layer_alt_m == 48.0
    for bad in ("0", "-1", ".nan", "501"):
        path.write_text(f"fleet:\n  downwash_vertical_m: {bad}\n")
        with pytest.raises(ConfigError, match="downwash_vertical_m"):
            load_config(path)
    path.write_text("fleet:\n  min_separation: 10\n")
    with pytest.raises(ConfigError, match="min_separation"):
        load_config(path)
    path.write_text("fleet:\n  min_separation_m: .nan\n")
    with pytest.raises(ConfigError, match="min_separation_m"):
        load_config(path)


def test_streamer_applies_separation_after_the_envelope_and_the_envelope_again():
    """What the streamer would send: the envelope's clamp first, then separation's hold, re-checked."""
    from firmware_bridge.setpoint_streamer import SetpointStreamer
    from firmware_bridge.settings import StreamerConfig

    clock, events = Clock(), []
    me = Vehicle(0.0, 0.0, 10.0, vn=4.0)
    guard, env = guard_for(CFG1, me, clock, events)
    streamer = SetpointStreamer(None, StreamerConfig(), lambda: env, lambda: me.state, separation=guard.apply)
    guard.update_traffic([report(2, 12.0, 0.0)])  # standing 12 m ahead in the band: imminent
    verdict = streamer.submit(VelocityNed(20.0, 0.0, 0.0))  # also above the 8 m/s clamp
    assert verdict.clamped and verdict.intent == VelocityNed(0.0, 0.0, 0.0)
    assert any("clamped to 8.0" in r for r in verdict.reasons) and any("holding" in r for r in verdict.reasons)
    assert [k for k, _ in events] == ["separation_hold"]
    away = streamer.submit(VelocityNed(-3.0, 0.0, 0.0))  # away from it: flown as asked
    assert away.intent == VelocityNed(-3.0, 0.0, 0.0) and not away.clamped


def test_a_landing_spot_is_found_beside_a_member_standing_below():
    """Over a landed member (and one more nearby), the guard names a spot clear of both, within the fence."""
    clock, events = Clock(), []
    me = Vehicle(100.0, 50.0, 30.0)
    guard, env = guard_for(CFG2, me, clock, events)
    assert guard.landing_spot(env) == (None, [])  # nobody reported: land here
    guard.update_traffic([report(1, 103.0, 48.0, alt=0.0), report(3, 100.0, 75.0, alt=0.0)])
    spot, near = guard.landing_spot(env)
    assert near == [1]  # member 3 is 25 m away: not near, but the spot keeps clear of it too
    assert spot is not None and spot.down_m == -30.0  # moved aside at this altitude, then down
    for n, e in ((103.0, 48.0), (100.0, 75.0)):
        assert math.hypot(spot.north_m - n, spot.east_m - e) >= 1.5 * CFG2.min_separation_m
    guard.update_traffic([report(1, 60.0, 50.0, alt=0.0)])  # member 1 moved off: here is clear again
    clock.t += 0.1
    assert guard.landing_spot(env)[1] == []
    disabled, env2 = guard_for(FleetConfig(enabled=False, member_id=2), me, clock, events)
    disabled.update_traffic([report(1, 100.0, 50.0, alt=0.0)])
    assert disabled.landing_spot(env2) == (None, [])  # not a fleet member: nothing judged


# -- the margin ----------------------------------------------------------------------------
def test_margin_grows_with_closing_and_climbing_speeds_and_is_none_when_level():
    here = Kinematics(0.0, 0.0, 40.0, 0.0, 0.0, -2.0)  # climbing at 2 m/s
    above = Kinematics(5.0, 0.0, 50.0, 0.0, 0.0, -0.5)  # climbing at 0.5 m/s, 10 m up
    g = margin(here, above, CFG1)
    assert g.vertical_m == pytest.approx(2.5 * CFG1.separation_margin_s) and g.horizontal_m == 0.0
    level = margin(Kinematics(0.0, 0.0, 40.0), Kinematics(0.0, 20.0, 52.0), CFG1)
    assert level == Margin(0.0, 0.0)
    # moving apart across: no growth across; climbing apart still grows up/down (a climb lags either way)
    opening = margin(Kinematics(0.0, 0.0, 40.0, 0.0, -3.0, 1.0), Kinematics(0.0, 20.0, 52.0, 0.0, 3.0, -1.0), CFG1)
    assert opening == Margin(0.0, 2.0 * CFG1.separation_margin_s)
    assert margin(here, Kinematics(5.0, 0.0, math.nan, 0.0, 0.0, math.nan), CFG1).vertical_m == 0.0
    crossing = margin(Kinematics(0.0, -30.0, 10.0, 0.0, 4.0), Kinematics(-30.0, 0.0, 10.0, 4.0, 0.0), CFG1)
    assert crossing.horizontal_m == pytest.approx(4.0 * math.sqrt(2.0))


def test_a_climb_ending_just_under_another_is_held_for_its_braking():
    """36, fleet bench: a member climbed to 9.5 m under another climbing slower, 8.4 m across.

    The prediction stops the climb dead at its target, 10.1 m under the other: clear without a
    margin, though the climb takes metres to stop. With the margin (closing at 1.6 m/s for 1 s)
    the lower id holds its altitude instead.
    """
    four = Kinematics(0.0, 0.0, 44.0, 0.0, 0.0, -2.0)
    seven = Other(7, Kinematics(8.0, 0.0, 58.9, 0.0, 0.0, -0.4))
    target = PositionNed(0.0, 0.0, -50.0)
    cfg4 = FleetConfig(enabled=True, member_id=4)
    assert SeparationRule(cfg4, 8.0, 2.0).judge(four, target, [seven], False).action == "hold"
    no_margin = SeparationRule(replace(cfg4, separation_margin_s=0.0), 8.0, 2.0)
    assert no_margin.judge(four, target, [seven], False).action == "clear"


def test_a_vehicle_passing_under_one_climbing_away_waits_for_the_climb():
    """36, 8-vehicle bench: member 3 climbed away from its cruise to its layer where it stood, and member 2
    (the keeper) flew under it at 3.2 m across and 9.9 m down, the climb having lagged its prediction.

    Predicted at 2 m/s, the climber is 10 m up in time: clear without the margin; with it (the climb
    lags by its own speed times the margin) the keeper holds until the climb has opened the gap.
    """
    cfg2 = FleetConfig(enabled=True, member_id=2)
    two = Kinematics(0.0, -16.0, 53.0, 0.0, 5.0, 0.0)
    three = Other(3, Kinematics(0.0, 0.0, 61.0, 0.0, 0.0, -2.0))
    carrot = PositionNed(0.0, -11.0, -53.0)
    assert SeparationRule(cfg2, 8.0, 2.0).judge(two, carrot, [three], False).action == "hold"
    assert SeparationRule(replace(cfg2, separation_margin_s=0.0), 8.0, 2.0).judge(
        two, carrot, [three], False).action == "clear"

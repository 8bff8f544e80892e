"""The landing spot is judged where PX4 will put the vehicle down, not where Land is commanded (issue 36, row 14).

PX4 carries a moving multirotor on by its braking distance (common/stopping.py); a member
heard moving would come down a braking distance on too. Pure arithmetic on a synthetic clock.
"""

from __future__ import annotations

import math

from common.stopping import braking_distance_m, stop_offset
from tests.firmware_bridge.test_separation import CFG2, Clock, Vehicle, guard_for, report


def test_braking_distance_is_px4s():
    # TrajMath computeBrakingDistanceFromVelocity(v, jerk, acc, 0.6 * jerk) with PX4's defaults
    assert braking_distance_m(7.0) == 7.0 * (7.0 / 6.0 + 0.6)
    assert braking_distance_m(0.0) == 0.0 and braking_distance_m(math.nan) == 0.0
    n, e = stop_offset(0.0, -7.0)
    assert n == 0.0 and e == -braking_distance_m(7.0)


def test_moving_at_speed_the_spot_ahead_is_judged_not_the_commanded_one():
    """12 m short of a landed member at 7 m/s toward it: here is clear, where PX4 comes down is not."""
    clock, events = Clock(), []
    me = Vehicle(-12.0, 0.0, 30.0, vn=7.0)
    guard, env = guard_for(CFG2, me, clock, events)
    guard.update_traffic([report(1, 0.0, 0.0, alt=0.0)])
    spot, near = guard.landing_spot(env)
    assert near == [1]
    assert spot is not None and math.hypot(spot.north_m, spot.east_m) >= 1.5 * CFG2.min_separation_m
    hovering = Vehicle(-12.0, 0.0, 30.0)  # the same place in a hover: it comes down here, 12 m away
    guard2, env2 = guard_for(CFG2, hovering, clock, events)
    guard2.update_traffic([report(1, 0.0, 0.0, alt=0.0)])
    assert guard2.landing_spot(env2) == (None, [])


def test_a_member_moving_toward_here_counts_by_where_it_would_come_down():
    clock, events = Clock(), []
    me = Vehicle(0.0, 0.0, 30.0)
    guard, env = guard_for(CFG2, me, clock, events)
    guard.update_traffic([report(1, -14.0, 0.0, alt=20.0, vn=7.0)])  # 14 m off, its stop point 1.6 m off
    spot, near = guard.landing_spot(env)
    assert near == [1] and spot is not None
    assert min(math.hypot(spot.north_m - n, spot.east_m) for n in (-14.0, -14.0 + braking_distance_m(7.0))) \
        >= CFG2.min_separation_m


def test_a_member_gone_quiet_on_the_ground_is_still_landed_beside():
    """36, 8-vehicle bench: member 6 landed at its goal, waited, exited; member 7 then landed 0.06 m from it.

    A quiet member drops out of the separation picture after the channel timeout, but one last heard
    standing on the ground is still avoided by a landing; one last heard flying is not (its old position
    says nothing).
    """
    clock, events = Clock(), []
    me = Vehicle(2.0, 0.0, 30.0)
    guard, env = guard_for(CFG2, me, clock, events)
    guard.update_traffic([report(1, 0.0, 0.0, alt=0.0), report(3, 60.0, 0.0, alt=30.0, vn=5.0)])
    clock.t += CFG2.channel_timeout_s + 5.0
    guard.update_traffic([])  # the channel still talks (an empty batch), members 1 and 3 do not
    spot, near = guard.landing_spot(env)
    assert near == [1] and spot is not None and math.hypot(spot.north_m, spot.east_m) >= CFG2.min_separation_m
    assert guard.picture.fresh() == []  # gone from what the rule judges in the air
    guard.update_traffic([report(1, 40.0, 40.0, alt=0.0)])  # heard again, elsewhere: that is where it is
    assert guard.landing_spot(env) == (None, [])

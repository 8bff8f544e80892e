"""Two simulated PX4s, two bridges over real MAVSDK and UDP, routes that meet: judged by the simulators' truth.

The rig is ``separation_kit.py``: each bridge hears the other as a fleet channel
would tell it, and a breach is a sample where the two are too near by the rule's
own definition (``separation.too_near``). Every wait is a deadline for a hung
test on a busy machine, never a speed claim; durations are printed in the
vehicles' own time for the record.
"""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from common.geodesy import ned_from_geo
from firmware_bridge.bridge import FlightBridge
from firmware_bridge.settings import FleetConfig
from sim.vehicle import SimFleet
from tests.firmware_bridge.separation_kit import (CRUISE_M, DEADLINE_S, FAST, FLEET, SPEED_M_S, TruthSampler,
                                                  fly_meeting_routes, home_at, kinds, local_goal, say, two_in_the_air)


async def test_crossing_routes_keep_separation():
    """Vehicle 1 flies north through the origin, vehicle 2 east through it, both due there together."""
    sampler, ev1, ev2, reached = await fly_meeting_routes(
        homes=[home_at(-40.0, 0.0), home_at(0.0, -40.0)], goals=[(40.0, 0.0), (0.0, 40.0)])
    say("crossing", sampler, ev1, ev2)
    assert reached == (True, True), "both routes flown to their ends"
    assert sampler.min_horizontal_m() < FLEET.min_separation_m, "the routes did meet (else this proves nothing)"
    assert sampler.breaches() == []
    assert {"separation_layer", "separation_climb"} & set(ev2), ev2  # the higher id yielded
    assert "fleet_channel_silent" not in ev1 + ev2


async def test_head_on_routes_keep_separation():
    sampler, ev1, ev2, reached = await fly_meeting_routes(
        homes=[home_at(-40.0, 0.0), home_at(40.0, 0.0)], goals=[(40.0, 0.0), (-40.0, 0.0)])
    say("head-on", sampler, ev1, ev2)
    assert reached == (True, True)
    assert sampler.min_horizontal_m() < FLEET.min_separation_m, "the routes did meet"
    assert sampler.breaches() == []
    assert {"separation_layer", "separation_climb"} & set(ev2), ev2


async def test_fleet_channel_cut_mid_flight_each_takes_its_layer():
    """The channel goes silent as both set off on crossing routes: both climb to their layers, no breach."""
    goals = [(40.0, 0.0), (0.0, 40.0)]
    layers = [FleetConfig(enabled=True, member_id=m).layer_alt_m for m in (1, 2)]
    with SimFleet([home_at(-40.0, 0.0), home_at(0.0, -40.0)], params=FAST, prearm_delay_s=0.5) as fleet:
        async with two_in_the_air(fleet) as (a, b, pa, pb, cut):
            sampler = TruthSampler(fleet).start()
            moves = [asyncio.ensure_future(pa.fly_to(local_goal(a, *goals[0]), SPEED_M_S, 1.5, DEADLINE_S)),
                     asyncio.ensure_future(pb.fly_to(local_goal(b, *goals[1]), SPEED_M_S, 1.5, DEADLINE_S))]
            try:
                # Cut once both are on their way, well before the crossing.
                await a.hub.wait_for(lambda s: math.hypot(s.vn_m_s, s.ve_m_s) > 1.0, DEADLINE_S)
                cut.set()
                cut_at = sampler.samples[-1].t if sampler.samples else math.nan
                cut_mono = time.monotonic()

                def passed(bridge: FlightBridge, goal) -> bool:
                    here = local_goal(bridge, *goal)
                    s = bridge.state
                    n, e = ned_from_geo(bridge.envelope().home, s.lat, s.lon)
                    return math.hypot(n - here.north_m, e - here.east_m) < 3.0

                # Both fly their routes to the end, on their layers, and each pilot knows it has arrived
                # there (over its goal on its layer: the goal's own altitude is not where it may fly).
                reached = await asyncio.wait_for(asyncio.gather(*moves), DEADLINE_S + 5.0)
                assert reached == [True, True], reached
                assert passed(a, goals[0]) and passed(b, goals[1])
            finally:
                sampler.stop()
                for m in moves:
                    m.cancel()
                await asyncio.gather(*moves, return_exceptions=True)
            silent = [next(e for e in br.events.history if e.kind == "fleet_channel_silent") for br in (a, b)]
            ev1, ev2 = kinds(a), kinds(b)
    # Each heard the silence no sooner than the timeout after the last report, by its own clock.
    for e in silent:
        assert e.detail["silent_s"] >= FLEET.channel_timeout_s
    at_layer = []
    for i, layer in enumerate(layers):
        first = next((s for s in sampler.samples if s.t >= cut_at and abs(s.alt[i] - layer) < 1.0), None)
        assert first is not None, f"vehicle {i + 1} never reached its layer {layer:.0f} m"
        at_layer.append(first.t - cut_at)
    crossing = min(sampler.samples, key=lambda s: s.horizontal_m)
    print(f"cut: time from cut to layer (vehicle clock) {at_layer[0]:.1f} s / {at_layer[1]:.1f} s "
          f"(timeout {FLEET.channel_timeout_s:.1f} s; climbs {layers[0] - CRUISE_M:.0f} / {layers[1] - CRUISE_M:.0f} m), "
          f"closest pass {crossing.horizontal_m:.1f} m apart at {crossing.alt[0]:.1f} / {crossing.alt[1]:.1f} m; "
          f"wall time since cut {time.monotonic() - cut_mono:.0f} s")
    say("cut", sampler, ev1, ev2)
    for ev in (ev1, ev2):  # silence, then the climb where it stood, then its layer flown
        after = ev[ev.index("fleet_channel_silent"):]
        assert after[1:3] == ["separation_fallback_climb", "separation_fallback"], ev
    assert sampler.breaches() == []
    # Each flew over the crossing point on its own layer (when is its own: neither knows the other now).
    for i, layer in enumerate(layers):
        over = [s for s in sampler.samples if math.hypot(s.north[i], s.east[i]) < 3.0]
        assert over, f"vehicle {i + 1} never flew over the crossing"
        assert all(abs(s.alt[i] - layer) < FLEET.altitude_band_m / 2 for s in over), (i, [s.alt[i] for s in over])



@pytest.mark.slow
async def test_without_the_rule_the_crossing_routes_breach():
    """The control: the same crossing with fleet.enabled false. The routes really do meet."""
    sampler, ev1, ev2, reached = await fly_meeting_routes(
        homes=[home_at(-40.0, 0.0), home_at(0.0, -40.0)], goals=[(40.0, 0.0), (0.0, 40.0)], enabled=False)
    say("crossing without the rule", sampler, ev1, ev2)
    assert reached == (True, True)
    assert sampler.breaches(), "two vehicles on crossing routes at one altitude come within the limit"
    assert ev1 == ev2 == []


@pytest.mark.slow
async def test_head_on_with_a_short_horizon_the_yielder_climbs_where_it_stands():
    """Seen too late to climb on the move (lookahead 1.5 s), the higher id stops and climbs first."""
    sampler, ev1, ev2, reached = await fly_meeting_routes(
        homes=[home_at(-40.0, 0.0), home_at(40.0, 0.0)], goals=[(40.0, 0.0), (-40.0, 0.0)], lookahead_s=1.5)
    say("head-on, lookahead 1.5 s", sampler, ev1, ev2)
    assert reached == (True, True)
    assert sampler.min_horizontal_m() < FLEET.min_separation_m, "the routes did meet"
    assert sampler.breaches() == []
    assert "separation_climb" in ev2, ev2

"""36.17: one fleet member passed 3.06 m across another 5.0 m above it, in its downwash.

Found in `aerie bench fleet --vehicles 4`: the rule judged altitude bands only (5 m), so two
vehicles a band apart were "separated" at any horizontal distance. Provoked here for real: two
simulated PX4 processes, two flight bridges over real MAVSDK and UDP, each told of the other as the
fleet channel would, on crossing routes whose cruise altitudes differ by a little more than one
band (member 1 below, member 2 above, as members 2 and 3 were). The old rule saw no conflict at
all and they crossed stacked; judged in three dimensions, the vehicles' true positions never come
within ``fleet.min_separation_m`` across and ``fleet.downwash_vertical_m`` up or down.
"""

from __future__ import annotations

from tests.firmware_bridge.separation_kit import CRUISE_M, FLEET, fly_meeting_routes, home_at, say

# Over one band (5 m) by more than the altitude noise of a hovering vehicle, so the band rule never
# counted the two in one band; well inside the downwash minimum (10 m).
OFFSET_M = FLEET.altitude_band_m + 0.5


async def test_crossing_a_band_apart_is_kept_out_of_the_downwash():
    sampler, ev1, ev2, reached = await fly_meeting_routes(
        homes=[home_at(-40.0, 0.0), home_at(0.0, -40.0)], goals=[(40.0, 0.0), (0.0, 40.0)],
        cruise=(CRUISE_M, CRUISE_M + OFFSET_M))
    say("crossing a band apart", sampler, ev1, ev2)
    assert reached == (True, True), "both routes flown to their ends"
    first = sampler.samples[0]
    assert abs(first.vertical_m - OFFSET_M) < 1.0, first  # they set off a band apart, as in the bench
    assert sampler.min_horizontal_m() < FLEET.min_separation_m, "the routes did cross (else this proves nothing)"
    assert sampler.breaches() == [], sampler.breaches()[:3]
    assert sampler.min_3d_m() >= FLEET.min_separation_m
    assert {"separation_layer", "separation_climb", "separation_hold"} & set(ev2), ev2  # the higher id yielded
    assert "fleet_channel_silent" not in ev1 + ev2

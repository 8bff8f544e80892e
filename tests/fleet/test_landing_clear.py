"""A mission ending over a landed fleet member lands beside it, not on it (two simulated PX4s, real MAVSDK).

The separation rule judges offboard setpoints; PX4's Land is judged once, before it is
commanded (``FleetGuard.landing_spot``, ``FlightExecutor.finish``). Found by
``aerie bench fleet`` with 8 vehicles: two missions ended at one waypoint and the second
landed on the first (0.38 m apart by the simulators' true positions).
"""

from __future__ import annotations

import pytest

from onboard.supervisor.flight_executor import FlightExecutor
from onboard.supervisor.settings import SupervisorConfig
from sim.vehicle import SimFleet
from tests.firmware_bridge.separation_kit import (CRUISE_M, DEADLINE_S, FAST, FLEET, SPEED_M_S, TruthSampler,
                                                          home_at, local_goal, two_in_the_air)


@pytest.mark.slow  # about a minute: two take-offs, two landings, one move aside
async def test_a_vehicle_ending_over_a_landed_member_lands_beside_it():
    events: list = []
    cfg = SupervisorConfig(speed_m_s=SPEED_M_S, cruise_alt_m=CRUISE_M)
    with SimFleet([home_at(-40.0, 0.0), home_at(40.0, 0.0)], params=FAST, prearm_delay_s=0.5) as fleet:
        async with two_in_the_air(fleet) as (a, b, pa, pb, cut):
            sampler = TruthSampler(fleet).start()
            try:
                first = FlightExecutor(a, cfg, lambda kind, detail: None)
                first.pilot = pa
                assert await first.finish("land") == "landed"  # member 1 lands where it is, still reporting
                # Member 2 flies over it at cruise (a vehicle on the ground is another band: allowed) ...
                assert await pb.fly_to(local_goal(b, -40.0, 0.0), SPEED_M_S, 1.5, DEADLINE_S)
                assert sampler.samples[-1].horizontal_m < FLEET.min_separation_m
                second = FlightExecutor(b, cfg, lambda kind, detail: events.append((kind, detail)))
                second.pilot = pb
                # ... and its mission ends there.
                assert await second.finish("land") == "landed"
            finally:
                sampler.stop()
    moved = [d for kind, d in events if kind == "landing_moved"]
    assert len(moved) == 1 and moved[0]["members_near"] == [1], events
    down = sampler.samples[-1]
    assert down.alt[0] < 0.5 and down.alt[1] < 0.5  # both on the ground
    assert down.horizontal_m >= FLEET.min_separation_m, down

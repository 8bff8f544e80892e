"""Issue 36, row 14: two members end their missions at one goal, each arriving at speed.

On PX4 SITL both commanded Land at ~7 m/s; PX4 put each down 9-10 m further on (its navigator
aims a braking distance ahead, common/stopping.py), while the landing-spot check had judged
the point where Land was commanded: member 2 touched down 0.6 m from member 1. The simulated
vehicle now carries a Land on as PX4 does, so the same flight shows it here: two simulated
PX4s, two bridges over real MAVSDK and UDP hearing each other as the fleet channel would tell
them, and the supervisor's own executor flying each mission's last move and its landing. A
move "arrives" within ``arrive_tolerance_m`` while the vehicle is still moving (as PX4's
offboard flight did at its speed); the tolerance here is wide enough that the simulated vehicle,
which brakes earlier than PX4 on a stopping carrot, arrives at PX4's speed. Touchdown distance
is judged by the simulators' own positions.
"""

from __future__ import annotations

import math

from onboard.supervisor.flight_executor import FlightExecutor
from onboard.supervisor.settings import SupervisorConfig
from sim.vehicle import SimFleet
from tests.firmware_bridge.separation_kit import (FAST, FLEET, ORIGIN, TruthSampler, home_at,
                                                          two_in_the_air)
from common.geodesy import geo_from_ned

SPEED_M_S = 7.0       # what both members flew at when they commanded Land on PX4 SITL
ARRIVE_M = 8.0        # the move ends this near the goal, still at speed
GOAL = (0.0, 0.0)     # the one goal, in the shared frame (metres north, east of ORIGIN)
# Above the downwash minimum (10 m) with room for the separation margin: the second member flies over
# the first, landed at the goal, before it lands beside it; at exactly 10 m any vertical drift is a conflict.
CRUISE_M = 14.0


def speed(bridge) -> float:
    s = bridge.state
    return math.hypot(s.vn_m_s, s.ve_m_s)


async def _last_move_and_land(bridge, pilot, cfg, events: list) -> float:
    """The mission's last move to the goal and the landing that ends it; the speed when it ended."""
    executor = FlightExecutor(bridge, cfg, lambda kind, detail: events.append((kind, detail)))
    executor.pilot = pilot
    lat, lon = geo_from_ned(ORIGIN, *GOAL)
    result = await executor.fly_to(lat, lon)
    assert result.arrived, result
    at_speed = speed(bridge)
    assert await executor.finish("land") == "landed"
    return at_speed


async def test_two_members_landing_at_speed_at_one_goal_come_down_apart():
    cfg = SupervisorConfig(speed_m_s=SPEED_M_S, cruise_alt_m=CRUISE_M, arrive_tolerance_m=ARRIVE_M)
    events: list = []
    # Starts 28 m apart (as on PX4 SITL), both 60 m short of the goal.
    with SimFleet([home_at(-60.0, 0.0), home_at(-60.0, 28.0)], params=FAST, prearm_delay_s=0.5) as fleet:
        async with two_in_the_air(fleet, cruise=(CRUISE_M, CRUISE_M)) as (a, b, pa, pb, cut):
            sampler = TruthSampler(fleet).start()
            try:
                first = await _last_move_and_land(a, pa, cfg, [])
                second = await _last_move_and_land(b, pb, cfg, events)
            finally:
                sampler.stop()
    down = sampler.samples[-1]
    print(f"row 14: Land reached at {first:.1f} / {second:.1f} m/s; touchdown {down.horizontal_m:.1f} m apart "
          f"(limit {FLEET.min_separation_m:.0f} m); member 2 events {[k for k, _ in events]}")
    assert first > 4.0 and second > 4.0, "the missions ended at speed (else this proves nothing)"
    assert down.alt[0] < 0.5 and down.alt[1] < 0.5  # both on the ground
    assert down.horizontal_m >= FLEET.min_separation_m, down

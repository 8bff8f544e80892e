"""Where a multirotor comes to rest when PX4 brakes it: one formula for the simulated PX4 and the bridge.

PX4 does not put a moving multirotor down (Land) or hold it (Hold) where the command found it:
the navigator first moves the point ahead along the course by the braking distance
(``Navigator::preproject_stop_point`` in ``src/modules/navigator/navigator_main.cpp``, with
``computeBrakingDistanceFromVelocity`` of ``src/lib/mathlib/math/TrajMath.hpp``; PX4-Autopilot read
at 2b79738a, the SIH build of the README). A Land commanded at 7 m/s therefore comes down about
12 m further on, and a landing-spot check that judged the commanded point let two members touch
down 0.6 m apart on PX4 SITL (issue 36, row 14). The simulated PX4 carries its landings and holds
on by this distance; the flight bridge predicts with it where a vehicle (its own, or a member it
hears of) will come down.
"""

from __future__ import annotations

import math

# PX4's defaults (MPC_ACC_HOR, m/s^2); the bridge does not read the autopilot's value.
PX4_ACC_HOR = 3.0
# PX4 passes 0.6 * MPC_JERK_AUTO as the largest acceleration delay, divided by the jerk again: seconds.
ACCEL_DELAY_S = 0.6


def braking_distance_m(speed_m_s: float, acc_m_s2: float = PX4_ACC_HOR) -> float:
    """How far PX4 expects a multirotor at ``speed_m_s`` to travel before it stops (0 when not moving)."""
    if not (math.isfinite(speed_m_s) and speed_m_s > 0.0):
        return 0.0
    return speed_m_s * (speed_m_s / (2.0 * acc_m_s2) + ACCEL_DELAY_S)


def stop_offset(vn_m_s: float, ve_m_s: float, acc_m_s2: float = PX4_ACC_HOR) -> tuple[float, float]:
    """North and east metres from here to where PX4 stops the vehicle, braking along its course."""
    speed = math.hypot(vn_m_s, ve_m_s)
    d = braking_distance_m(speed, acc_m_s2)
    if d <= 0.0:
        return 0.0, 0.0
    return vn_m_s / speed * d, ve_m_s / speed * d

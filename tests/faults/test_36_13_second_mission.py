"""Issue 36, row 13: a second `aerie fly` on the same PX4 after a landing.

PX4 disarms back into OFFBOARD after a flight in offboard, whether a Land or RTL
command or a failsafe brought the vehicle down, and does not arm in OFFBOARD
without setpoints. The simulated vehicle does the same (a fresh one per test
would hide it, as each SITL test's fresh PX4 did), so real `aerie fly`
processes fly twice on one simulated vehicle process: after a normal landing,
and after the offboard-loss failsafe landed the vehicle of a killed supervisor.
"""

from __future__ import annotations

import signal

from sim.flight_rig import start_rig
from tests.faults.flykit import fly_config, start_fly, stop_process, wait_truth
from tests.supervisor.flightkit import world

STEPS = 1  # the route is not the point: take off, one step, land
CRUISE_ALT_M = 8.0  # low, so that the climbs and landings stay short


def _second_fly_arms_and_flies(rig, cfg, tmp) -> None:
    proc = start_fly(rig, cfg, tmp, step_limit=STEPS)
    try:
        wait_truth(rig, lambda t: t["armed"] and t["rel_alt"] > 2.0, 120, "second flight airborne", tmp)
        rc = proc.wait(180)
        out = (tmp / "fly.log").read_text(errors="replace")
        assert rc in (0, 3), out
        assert "pre-arm checks" not in out, out
        wait_truth(rig, lambda t: not t["armed"] and t["on_ground"], 60, "second flight down", tmp)
    finally:
        stop_process(proc)


def test_second_fly_after_a_landing(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, status_socket=False, cruise_alt_m=CRUISE_ALT_M)
        proc = start_fly(rig, cfg, tmp_path, step_limit=STEPS)
        wait_truth(rig, lambda t: t["flight_mode"] == "OFFBOARD" and t["armed"], 120, "first flight in offboard", tmp_path)
        rc = proc.wait(180)
        assert rc in (0, 3), (tmp_path / "fly.log").read_text(errors="replace")
        down = wait_truth(rig, lambda t: not t["armed"] and t["on_ground"], 60, "first flight down", tmp_path)
        assert down["flight_mode"] == "HOLD", down  # PX4 put it back in OFFBOARD; the supervisor left it
        _second_fly_arms_and_flies(rig, cfg, tmp_path)
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()


def test_second_fly_after_a_failsafe_landing(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, status_socket=False, cruise_alt_m=CRUISE_ALT_M)
        proc = start_fly(rig, cfg, tmp_path)
        wait_truth(rig, lambda t: t["flight_mode"] == "OFFBOARD" and t["rel_alt"] > 2.0, 120,
                   "first flight climbing in offboard", tmp_path)
        proc.send_signal(signal.SIGKILL)  # nothing lands it but PX4's offboard-loss failsafe
        proc.wait(10)
        down = wait_truth(rig, lambda t: not t["armed"] and t["on_ground"], 120, "failsafe landing", tmp_path)
        assert down["flight_mode"] == "OFFBOARD", down  # as PX4 SITL: disarmed in OFFBOARD, not armable
        _second_fly_arms_and_flies(rig, cfg, tmp_path)
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()

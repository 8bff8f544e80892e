"""Issue 19, item 14: SIGTERM while airborne commands RTL/land at once, waits a bounded time, then exits.

A real `aerie fly` process is stopped with SIGTERM in the middle of a move (as
systemd or `make flash` would). The supervisor abandons the move, commands the
configured `supervisor.on_terminate` (here RTL, so it cannot be mistaken for
the offboard-loss failsafe, which would descend), waits at most
`supervisor.terminate_timeout_s` and exits; PX4 brings the vehicle home and
disarms on its own.
"""

from __future__ import annotations

import signal
import time

from sim.flight_rig import start_rig
from tests.faults.flykit import fly_config, horizontal_speed, start_fly, stop_process, wait_truth
from tests.supervisor.flightkit import world


def test_sigterm_mid_move_returns_the_vehicle_and_exits(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, status_socket=False, on_terminate="rtl", terminate_timeout_s=2.0)
        proc = start_fly(rig, cfg, tmp_path)
        wait_truth(rig, lambda t: t["flight_mode"] == "OFFBOARD" and t["rel_alt"] > cfg.supervisor.cruise_alt_m - 3
                   and horizontal_speed(t) > 2.0, 180, "mid-move in offboard", tmp_path)
        proc.send_signal(signal.SIGTERM)
        t_term = time.monotonic()
        rtl = wait_truth(rig, lambda t: t["flight_mode"] == "RETURN_TO_LAUNCH", 30, "RTL after SIGTERM", tmp_path)
        assert rtl["failsafe"] is None, rtl  # commanded by the supervisor, not PX4's offboard-loss failsafe
        rc = proc.wait(60)  # bounded: terminate_timeout_s, then exit (the return takes longer)
        print(f"SIGTERM -> RTL after {time.monotonic() - t_term:.2f} s; process exited rc {rc}")
        out = (tmp_path / "fly.log").read_text()
        assert rc == 3, out  # the mission ended without arrival; the vehicle is not "could not land"
        assert "terminated" in out and "returning to launch" in out, out
        home = rtl["home"]["ned"]
        down = wait_truth(rig, lambda t: not t["armed"], 180, "home and disarmed after the process exited", tmp_path)
        assert down["on_ground"], down
        assert abs(down["ned"][0] - home[0]) < 5 and abs(down["ned"][1] - home[1]) < 5, (down["ned"], home)
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()

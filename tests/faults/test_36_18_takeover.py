"""Issue 36, row 18: a person takes the vehicle over mid-mission; the supervisor commands nothing more.

A real `aerie fly` process flies the simulated vehicle; mid-move a pilot switches it to Hold (on the RC or
a ground station: the simulator's control channel plays that part, as `px4-commander mode auto:loiter`
did on PX4 SITL). The supervisor must leave the vehicle in the mode the person chose: no Land, no RTL, no
mode change, no arming command after the switch (the vehicle's own record of the commands it received),
say so in its outcome, and end.
"""

from __future__ import annotations

import json

from sim.flight_rig import start_rig
from tests.faults.flykit import fly_config, horizontal_speed, start_fly, stop_process, wait_truth
from tests.supervisor.flightkit import world

# MAV_CMD ids that would take the vehicle back from the person: set mode, land, RTL, arm/disarm, takeoff.
OVERRIDES = {176: "DO_SET_MODE", 21: "NAV_LAND", 20: "NAV_RETURN_TO_LAUNCH", 400: "COMPONENT_ARM_DISARM",
             22: "NAV_TAKEOFF"}


def test_a_takeover_by_a_person_is_left_alone(tmp_path):
    rig = start_rig("t019", world=world())
    proc = None
    try:
        cfg = fly_config(rig, tmp_path, status_socket=False)
        proc = start_fly(rig, cfg, tmp_path, "--json", str(tmp_path / "outcome.json"))
        wait_truth(rig, lambda t: t["flight_mode"] == "OFFBOARD" and t["rel_alt"] > cfg.supervisor.cruise_alt_m - 3
                   and horizontal_speed(t) > 2.0, 180, "mid-move in offboard", tmp_path)
        switched_at = rig.vehicle.control("mode", mode="HOLD")["t"]
        rc = proc.wait(60)
        out = (tmp_path / "fly.log").read_text()
        print(out[-3000:])
        assert rc == 3, out  # ended without arrival; not "could not land"
        outcome = json.loads((tmp_path / "outcome.json").read_text())
        assert "taken over" in outcome["reason"] and outcome["landed"].startswith("left to the pilot (mode HOLD)")
        after = [(t, c) for t, c in rig.vehicle.control("commands")["commands"] if t >= switched_at]
        assert not [OVERRIDES[c] for _, c in after if c in OVERRIDES], after
        truth = rig.vehicle.truth()
        assert truth["flight_mode"] == "HOLD" and truth["armed"] and not truth["on_ground"], truth
        assert truth["failsafe"] is None, truth  # the offboard stream stopped in Hold: no failsafe either
    finally:
        if proc is not None:
            stop_process(proc)
        rig.close()

"""custom_mode/base_mode encoding checked against every PX4 HEARTBEAT in the trace."""

from _vehicle_testkit import needs_trace

from _vehicle_testkit import load_trace
from sim.vehicle import px4_modes as pm

pytestmark = needs_trace


def test_every_trace_heartbeat_base_mode_is_reproduced():
    recs = load_trace({"HEARTBEAT", "SET_POSITION_TARGET_LOCAL_NED"})
    first_sp = min(r["t"] for r in recs if r["name"] == "SET_POSITION_TARGET_LOCAL_NED")
    hbs = [r for r in recs if r["name"] == "HEARTBEAT" and r["dir"] == "px4->gcs"]
    assert len(hbs) > 200
    seen = set()
    for r in hbs:
        f = r["fields"]
        mode = pm.decode_custom_mode(f["custom_mode"])
        assert mode.custom_mode == f["custom_mode"]
        armed = bool(f["base_mode"] & pm.SAFETY_ARMED)
        assert pm.base_mode(mode, armed, offboard_control_known=r["t"] >= first_sp) == f["base_mode"], r
        seen.add((f["base_mode"], f["custom_mode"]))
    # the table in the trace README: all these states occurred and were checked
    assert {(29, 50593792), (29, 33816576), (1, 393216), (17, 393216), (157, 50593792), (157, 33816576),
            (157, 67371008), (145, 393216), (209, 196608), (157, 84148224), (157, 100925440)} <= seen


def test_standard_mode_matches_current_mode_messages():
    for r in load_trace({"CURRENT_MODE"}, "px4->gcs"):
        f = r["fields"]
        assert pm.standard_mode(pm.decode_custom_mode(f["custom_mode"])) == f["standard_mode"]


def test_named_modes():
    assert pm.HOLD.custom_mode == 50593792 and str(pm.HOLD) == "AUTO_LOITER"
    assert pm.OFFBOARD.custom_mode == 393216 and str(pm.OFFBOARD) == "OFFBOARD"
    assert pm.decode_custom_mode(84148224) == pm.RTL
    assert [pm.mavsdk_flight_mode(m) for m in (pm.HOLD, pm.RTL, pm.POSCTL, pm.OFFBOARD)] == [
        "HOLD", "RETURN_TO_LAUNCH", "POSCTL", "OFFBOARD"]

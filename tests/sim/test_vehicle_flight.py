"""Flights with the real MAVSDK 4 (native binding) over UDP loopback.

Timings are sped up through PX4's own parameters (takeoff/land speeds); the
sequences of modes, landed states and refusals are compared with what MAVSDK
reported against real PX4 in the reference trace.
"""

from __future__ import annotations

import json
import math
import os

import pytest
from _vehicle_testkit import needs_trace

from _vehicle_testkit import (MavsdkDrone, RawGcs, dedup, load_events, phase_window, trace_changes,
                              wait_for)
from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from sim.vehicle import SimVehicleProcess


def offset(lat: float, lon: float, north: float, east: float) -> tuple[float, float]:
    return geo_from_ned(GeoPoint(lat, lon), north, east)


@pytest.fixture
async def drone(vehicle):
    d = await MavsdkDrone().connect(vehicle.mavsdk_url)
    try:
        await d.wait_healthy()
        yield d
    finally:
        await d.close()


async def takeoff(d: MavsdkDrone, v: SimVehicleProcess, alt: float = 5.0) -> None:
    await d.action.arm()
    await d.action.takeoff()
    await wait_for(lambda: v.truth()["mode"] == "AUTO_LOITER" and v.truth()["rel_alt"] > alt - 0.9, 20, "takeoff done")
    await wait_for(lambda: d.landed_states[-1:] == ["IN_AIR"], 3, "MAVSDK landed_state IN_AIR")


async def wait_disarmed(v: SimVehicleProcess, timeout: float = 30) -> None:
    await wait_for(lambda: not v.truth()["armed"], timeout, "disarmed")


def distance_m(t: dict, lat: float, lon: float) -> float:
    return math.hypot(*ned_from_geo(GeoPoint(lat, lon), t["lat"], t["lon"]))


@needs_trace
async def test_takeoff_goto_hold_land_like_px4(vehicle, drone):
    from mavsdk.plugins.action import ActionError, ActionResult

    v, d = vehicle, drone
    events = load_events()
    await takeoff(d, v, 5.0)
    assert "Takeoff detected\t" in d.texts
    # disarm in the air is refused (COMMAND_DENIED from TEMPORARILY_REJECTED) with PX4's text
    with pytest.raises(ActionError) as err:
        await d.action.disarm()
    assert err.value.result == ActionResult.COMMAND_DENIED
    await wait_for(lambda: "Disarming denied: not landed\t" in d.texts, 2, "disarm denial text")

    # goto 20 m north at 5 m/s: DO_CHANGE_SPEED then COMMAND_INT DO_REPOSITION (AMSL); stays in HOLD
    home = await d.telemetry.home()
    lat, lon = offset(home.latitude_deg, home.longitude_deg, 20.0, 0.0)
    await d.action.set_current_speed(5.0)
    await d.action.goto_location(lat, lon, home.absolute_altitude_m + 5.0, 0.0)
    # garbage and truncated frames thrown at the vehicle's port mid-flight change nothing
    junk = RawGcs(0, v.port)
    good = junk.mav.ping_encode(1, 0, 0, 0).pack(junk.mav)
    before = v.stats()["stats"]
    for i in range(200):
        junk.send_raw(os.urandom(1 + i % 120) if i % 2 else good[: 3 + i % (len(good) - 4)])
    junk.close()
    await wait_for(lambda: distance_m(v.truth(), lat, lon) < 1.0, 20, "goto target reached")
    after = v.stats()["stats"]
    assert after["rx_truncated"] - before["rx_truncated"] >= 100
    assert after["rx_bad_data"] + after["rx_truncated"] - before["rx_bad_data"] - before["rx_truncated"] >= 150
    assert v.truth()["mode"] == "AUTO_LOITER"
    assert abs(v.truth()["rel_alt"] - 5.0) < 1.0

    await d.action.land()
    await wait_disarmed(v)
    await wait_for(lambda: d.flight_modes[-1:] == ["HOLD"], 3, "HOLD after auto-disarm")
    assert "Landing at current position\t" in d.texts and "Disarmed by landing\t" in d.texts

    # landed states as MAVSDK saw them in the trace's takeoff-then-land flight
    t0, t1 = phase_window(events, "land_flight", "end")
    assert dedup(d.landed_states) == dedup(["ON_GROUND"] + trace_changes(events, "landed_state", t0, t1))
    assert dedup(d.flight_modes) == dedup(["HOLD"] + trace_changes(events, "flight_mode", t0, t1))


@needs_trace
async def test_offboard_then_loss_failsafe_like_px4(tmp_path, fast_params):
    from mavsdk.plugins.offboard import OffboardError, OffboardResult, PositionNedYaw, VelocityNedYaw

    log = tmp_path / "setpoints.jsonl"
    events = load_events()
    with SimVehicleProcess(seed=5, params=fast_params, prearm_delay_s=0.5, setpoint_log=log) as v:
        d = await MavsdkDrone().connect(v.mavsdk_url)
        other = RawGcs(0, v.port)  # a second client, like the trace's mavlink_direct calls
        try:
            await d.wait_healthy()
            await takeoff(d, v, 5.0)
            # MAVSDK refuses start() before any setpoint, locally
            with pytest.raises(OffboardError) as err:
                await d.offboard.start()
            assert err.value.result == OffboardResult.NO_SETPOINT_SET
            # DO_SET_MODE OFFBOARD in the air without setpoints: TEMPORARILY_REJECTED + PX4's text
            assert other.command_long(176, 1, 6, 0).result == 1
            await wait_for(lambda: "Switching to Offboard is currently not available\t" in d.texts, 2, "offboard text")

            n0, e0, d0 = v.truth()["ned"]
            await d.offboard.set_position_ned(PositionNedYaw(n0, e0, d0, 0.0))
            await d.offboard.start()
            await wait_for(lambda: v.truth()["mode"] == "OFFBOARD", 3, "OFFBOARD")
            await d.offboard.set_position_ned(PositionNedYaw(n0 + 8.0, e0, d0, 0.0))
            await wait_for(lambda: math.dist(v.truth()["ned"][:2], (n0 + 8.0, e0)) < 0.7, 15, "position setpoint")
            await d.offboard.set_velocity_ned(VelocityNedYaw(2.0, 0.0, 0.0, 0.0))
            await wait_for(lambda: abs(v.truth()["vel_ned"][0] - 2.0) < 0.2, 5, "velocity setpoint")
            await d.offboard.set_velocity_ned(VelocityNedYaw(0.0, 0.0, 0.0, 0.0))
            await wait_for(lambda: math.hypot(*v.truth()["vel_ned"][:2]) < 0.2, 5, "stopped")

            # stop the stream the way the trace did: destroy the plugin (PX4 stays in OFFBOARD)
            d.offboard.destroy()
            await wait_for(lambda: v.truth()["mode"] == "POSCTL", 3, "failsafe mode")
            recs = [json.loads(l) for l in log.read_text().splitlines()]
            last_sp = max(r["mono"] for r in recs if r["msg"].startswith("SET_POSITION_TARGET"))
            fs_text = next(r["mono"] for r in recs if r["msg"] == "STATUSTEXT" and r["text"] == "Failsafe activated")
            assert fs_text > last_sp  # the failsafe follows the stream's end (no setpoint after it)
            # the delay (COM_OF_LOSS_T, PX4's 1.03 s in the trace) is checked on a synthetic clock:
            # test_vehicle_commander.py::test_offboard_loss_delay_matches_the_px4_trace
            await wait_for(lambda: "Failsafe activated\t" in d.texts, 2, "failsafe text")
            other.drain()  # skip the backlog: POSCTL heartbeats keep coming at 1 Hz
            hb = other.wait("HEARTBEAT", lambda m: m.get_srcComponent() == 1 and m.custom_mode == 196608, 4.0)
            assert (hb.base_mode, hb.system_status) == (209, 5)
            # no sticks: descend and land, auto-disarm, then OFFBOARD (intended mode) is shown again
            await wait_disarmed(v, 30)
            hb = other.wait("HEARTBEAT", lambda m: m.get_srcComponent() == 1 and not m.base_mode & 128, 4.0)
            assert (hb.custom_mode, hb.base_mode, hb.system_status) == (393216, 17, 0)
            t0, t1 = phase_window(events, "offboard_stop_sending", "recover")
            await wait_for(lambda: d.flight_modes[-1:] == ["OFFBOARD"], 3, "OFFBOARD shown again")
            want_modes = dedup(trace_changes(events, "flight_mode", t0, t1))  # POSCTL, OFFBOARD
            assert dedup(d.flight_modes)[-len(want_modes):] == want_modes
            assert dedup(d.landed_states)[-2:] == ["IN_AIR"] + dedup(trace_changes(events, "landed_state", t0, t1))
            # recover: Hold clears the failsafe state and arming works again
            await d.action.hold()
            await wait_for(lambda: v.truth()["mode"] == "AUTO_LOITER", 3, "HOLD")
            await d.action.arm()
            await d.action.disarm()
        finally:
            other.close()
            await d.close()
        recs = [json.loads(l) for l in log.read_text().splitlines()]
        changes = [r["mode"] for r in recs if r["msg"] == "MODE_CHANGE"]
        assert changes[-3:] == ["POSCTL", "OFFBOARD", "AUTO_LOITER"], changes
        sp = [r for r in recs if r["msg"] == "SET_POSITION_TARGET_LOCAL_NED"]
        assert {r["type_mask"] for r in sp} >= {2552, 2503}
        # MAVSDK kept streaming while the vehicle was in OFFBOARD (its 20 Hz period is a figure:
        # `aerie bench link` reports it as vehicle_period_p50_ms, from these same log lines)
        assert sum(r["mode"] == "OFFBOARD" for r in sp) >= 10
        assert any(r["msg"] == "COMMAND_LONG" and r["command"] == 176 for r in recs)


@needs_trace
async def test_rtl_climbs_returns_lands_disarms(fast_params):
    events = load_events()
    params = dict(fast_params, RTL_RETURN_ALT=8.0, MPC_XY_CRUISE=8.0)
    with SimVehicleProcess(seed=11, params=params, prearm_delay_s=0.5) as v:
        d = await MavsdkDrone().connect(v.mavsdk_url)
        try:
            await d.wait_healthy()
            await takeoff(d, v, 5.0)
            home = await d.telemetry.home()
            lat, lon = offset(home.latitude_deg, home.longitude_deg, 15.0, 10.0)
            await d.action.goto_location(lat, lon, home.absolute_altitude_m + 5.0, float("nan"))
            await wait_for(lambda: distance_m(v.truth(), lat, lon) < 1.5, 20, "away from home")
            max_alt = 0.0
            await d.action.return_to_launch()
            await wait_for(lambda: "RTL: land at destination\t" in d.texts, 30, "RTL reached home")
            t = v.truth()
            max_alt = t["rel_alt"]
            assert abs(max_alt - 8.0) < 1.0, "returns at RTL_RETURN_ALT"
            assert distance_m(t, home.latitude_deg, home.longitude_deg) < 1.5
            await wait_disarmed(v, 30)
            assert distance_m(v.truth(), home.latitude_deg, home.longitude_deg) < 1.5
            assert any(x.startswith("RTL: start return at") for x in d.texts)
            await wait_for(lambda: d.flight_modes[-1:] == ["HOLD"], 3, "HOLD after RTL")
            t0, t1 = phase_window(events, "rtl", "land_flight")
            assert dedup(d.landed_states)[-3:] == ["IN_AIR"] + dedup(trace_changes(events, "landed_state", t0, t1))
        finally:
            await d.close()


@needs_trace
async def test_mission_progress_pause_resume_like_px4(fast_params):
    from mavsdk.plugins.mission import MissionItem, MissionPlan

    events = load_events()
    with SimVehicleProcess(seed=13, params=fast_params, prearm_delay_s=0.5) as v:
        d = await MavsdkDrone().connect(v.mavsdk_url)
        try:
            await d.wait_healthy()
            await takeoff(d, v, 5.0)
            home = await d.telemetry.home()
            items = []
            for n, e in ((12.0, 0.0), (12.0, 12.0), (0.0, 12.0)):
                lat, lon = offset(home.latitude_deg, home.longitude_deg, n, e)
                items.append(MissionItem(latitude_deg=lat, longitude_deg=lon, relative_altitude_m=5.0, speed_m_s=5.0,
                                         is_fly_through=True, acceptance_radius_m=1.0))
            await d.mission.set_return_to_launch_after_mission(False)
            await d.mission.upload_mission(MissionPlan(items))
            plan = await d.mission.download_mission()
            assert len(plan.mission_items) == 3
            assert plan.mission_items[1].latitude_deg == pytest.approx(items[1].latitude_deg, abs=1e-7)
            assert plan.mission_items[1].speed_m_s == pytest.approx(5.0)
            progress = []

            async def rec():
                async for p in d.mission.subscribe_mission_progress():
                    if not progress or progress[-1] != (p.current, p.total):
                        progress.append((p.current, p.total))

            import asyncio

            task = asyncio.ensure_future(rec())
            await d.mission.start_mission()
            await wait_for(lambda: "Executing Mission\t" in d.texts, 2, "Executing Mission")
            await wait_for(lambda: progress and progress[-1][0] >= 1, 15, "first waypoint")
            await d.mission.pause_mission()
            await wait_for(lambda: v.truth()["mode"] == "AUTO_LOITER", 3, "paused")
            await asyncio.sleep(1.0)
            await d.mission.start_mission()
            await wait_for(lambda: progress and progress[-1] == (3, 3), 30, "mission finished")
            assert await d.mission.is_mission_finished()
            await wait_for(lambda: "Mission finished, loitering\t" in d.texts, 2, "finished text")
            await wait_for(lambda: d.flight_modes[-1:] == ["HOLD"], 3, "HOLD after mission")
            task.cancel()
            t0, t1 = phase_window(events, "mission_start", "rtl")
            want = [tuple(int(x.split("=")[1]) for x in s[len("MissionProgress("):-1].split(", "))
                    for s in trace_changes(events, "mission_progress", t0, t1)]
            assert dedup(progress) == dedup(want)
            t0, t1 = phase_window(events, "mission_start", "rtl")
            assert dedup(d.flight_modes)[-4:] == dedup(trace_changes(events, "flight_mode", t0, t1))
        finally:
            await d.close()


async def test_battery_wind_injection_and_auto_disarm(vehicle, drone):
    v, d = vehicle, drone
    v.set_battery(42.0)
    await wait_for(lambda: v.truth()["battery_pct"] < 42.5, 2, "battery set")

    async def remaining():
        b = await d.telemetry.battery()
        return abs(b.remaining_percent - 42.0) < 1.0

    await wait_for(remaining, 5, "MAVSDK battery")
    # GPS loss shows up in MAVSDK's health (SYS_STATUS GPS and PREARM_CHECK bits), and comes back
    v.set_gps(False)

    async def health(ok: bool):
        h = await d.telemetry.health()
        return h.is_global_position_ok == ok and h.is_armable == ok

    await wait_for(lambda: health(False), 3, "GPS loss in MAVSDK health")
    v.set_gps(True)
    await wait_for(lambda: health(True), 3, "GPS back in MAVSDK health")
    await takeoff(d, v, 5.0)
    before = v.truth()["ned"]
    v.set_wind(4.0, 0.0)
    import asyncio

    await asyncio.sleep(3.0)
    after = v.truth()["ned"]
    assert math.dist(before[:2], after[:2]) < 2.5, "Hold fights the wind"
    assert v.truth()["wind_ned"][0] == pytest.approx(4.0)
    await d.action.land()
    await wait_for(lambda: v.truth()["landed_state"] == 1, 20, "landed")
    # auto-disarm after landing; the COM_DISARM_LAND delay (2 s) is checked on a synthetic clock:
    # test_vehicle_commander.py::test_auto_disarm_com_disarm_land_after_landing_detected
    await wait_disarmed(v, 5)
    await wait_for(lambda: "Disarmed by landing\t" in d.texts, 5, "the auto-disarm text")


async def test_datalink_loss_failsafe_when_enabled(fast_params):
    """PX4 default NAV_DLL_ACT=0 ignores GCS loss; with 2 it returns after COM_DL_LOSS_T."""
    params = dict(fast_params, NAV_DLL_ACT=2, COM_DL_LOSS_T=2)
    with SimVehicleProcess(seed=17, params=params, prearm_delay_s=0.5) as v:
        d = await MavsdkDrone().connect(v.mavsdk_url)
        try:
            await d.wait_healthy()
            await takeoff(d, v, 5.0)
            v.set_link_down(True)
            # COM_DL_LOSS_T after the last GCS HEARTBEAT: the delay is checked on a synthetic clock
            # (test_vehicle_commander.py::test_datalink_loss_after_com_dl_loss_t)
            await wait_for(lambda: v.truth()["mode"] == "AUTO_RTL", 5, "RTL on data-link loss")
            assert v.truth()["failsafe"] == "datalink_loss"
            v.set_link_down(False)
            await wait_for(lambda: "Data link regained\t" in d.texts, 5, "link regained text")
            await wait_for(lambda: d.flight_modes[-1:] == ["RETURN_TO_LAUNCH"], 3, "MAVSDK sees RTL")
        finally:
            await d.close()


async def test_mission_from_the_ground_takes_off_first(vehicle, drone):
    from mavsdk.plugins.mission import MissionItem, MissionPlan

    v, d = vehicle, drone
    home = await d.telemetry.home()
    lat, lon = offset(home.latitude_deg, home.longitude_deg, 8.0, 0.0)
    await d.mission.upload_mission(MissionPlan([MissionItem(latitude_deg=lat, longitude_deg=lon,
                                                            relative_altitude_m=4.0, speed_m_s=4.0,
                                                            is_fly_through=False, acceptance_radius_m=1.0)]))
    await d.action.arm()
    await d.mission.start_mission()
    await wait_for(lambda: v.truth()["landed_state"] == 3, 5, "TAKEOFF landed state")
    n0, e0 = v.truth()["ned"][:2]
    await wait_for(lambda: v.truth()["rel_alt"] > 3.0, 10, "climbed")
    assert math.dist(v.truth()["ned"][:2], (n0, e0)) < 1.0, "vertical takeoff before heading out"
    await wait_for(lambda: v.truth()["mission"]["finished"], 15, "mission finished")
    assert distance_m(v.truth(), lat, lon) < 1.5
    await d.action.land()
    await wait_disarmed(v)
    # home is re-set at each arming (the trace's RTL returned to the re-armed home)
    await d.action.arm()
    await wait_for(lambda: distance_m({"lat": v.truth()["home"]["lat"], "lon": v.truth()["home"]["lon"]}, lat, lon) < 1.5,
                   3, "home moved to the new arming point")

    async def mavsdk_home_moved():
        h = await d.telemetry.home()
        return distance_m({"lat": h.latitude_deg, "lon": h.longitude_deg}, lat, lon) < 1.5

    await wait_for(mavsdk_home_moved, 3, "MAVSDK home updated")
    await d.action.disarm()


@needs_trace
async def test_mavsdk_param_plugin_like_px4(vehicle, drone):
    from mavsdk.asyncio.plugins.param import ParamAsync
    from mavsdk.plugins.param import ParamError, ParamResult

    events = load_events()
    p = ParamAsync(drone.system)
    ref = next(e for e in events if e["event"] == "all_params")
    allp = await p.get_all_params()
    assert (len(allp.int_params), len(allp.float_params)) == (ref["n_int"], ref["n_float"])
    assert await p.get_param_float("COM_OF_LOSS_T") == 1.0
    assert await p.get_param_int("COM_OBL_RC_ACT") == 0
    with pytest.raises(ParamError) as err:
        await p.get_param_int("COM_OF_LOSS_T")
    assert err.value.result == ParamResult.WRONG_TYPE
    await p.set_param_float("MPC_XY_VEL_MAX", 10.0)
    assert await p.get_param_float("MPC_XY_VEL_MAX") == 10.0
    assert await drone.action.get_return_to_launch_altitude() == 30.0
    await drone.action.set_takeoff_altitude(7.0)
    assert await drone.action.get_takeoff_altitude() == 7.0

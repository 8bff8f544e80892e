"""Commander rules on a synthetic clock (no sockets): PX4's refusals, failsafes and timers."""

import math

import pytest

from common.geodesy import GeoPoint, geo_from_ned
from sim.vehicle import px4_modes as pm
from sim.vehicle.commander import ON_GROUND, Commander
from sim.vehicle.setpoints import Setpoint
from sim.vehicle.mission import MissionStore
from sim.vehicle.params import ParamTable
from sim.vehicle.physics import Physics
from _vehicle_testkit import load_trace, needs_trace

DT = 0.01
NAN7 = [math.nan] * 7


class Sim:
    def __init__(self, **params):
        base = {"MIS_TAKEOFF_ALT": 5.0, "MPC_TKO_RAMP_T": 0.3, "MPC_TKO_SPEED": 3.0}
        self.params = ParamTable.px4_defaults({**base, **params})
        self.ph = Physics(seed=0)
        self.c = Commander(self.params, self.ph, GeoPoint(47.0, 8.0, 400.0), MissionStore(), now=0.0,
                           prearm_delay_s=0.0)
        self.t = 1.0

    def cmd(self, command: int, *p: float) -> int:
        return self.c.handle_command(command, list(p) + [math.nan] * (7 - len(p)), self.t)

    def run(self, seconds: float, until=None) -> None:
        end = self.t + seconds
        while self.t < end:
            self.ph.step(DT, self.c.demand(self.t))
            self.c.update(self.t)
            self.t += DT
            if until is not None and until():
                return
        if until is not None:
            raise AssertionError("condition not reached")

    def fly(self) -> None:
        assert self.cmd(400, 1) == 0
        assert self.cmd(22) == 0
        self.run(20, lambda: self.c.displayed_mode == pm.HOLD)

    def texts(self) -> list[str]:
        out = [t for _, t in self.c.out.texts]
        self.c.out.texts.clear()
        return out


def test_disarm_refused_in_air_unless_forced():
    s = Sim()
    s.fly()
    assert s.cmd(400, 0) == 1 and "Disarming denied: not landed" in s.texts()
    assert s.cmd(400, 0, 21196) == 0 and not s.c.armed


def test_manual_modes_need_sticks():
    s = Sim()
    assert s.cmd(176, 1, pm.MainMode.POSCTL, 0) == 1
    assert s.texts() == ["Switching to Position is currently not available"]


def test_mission_mode_needs_a_mission():
    s = Sim()
    assert s.cmd(176, 1, 4, 4) == 1


def test_preflight_auto_disarm():
    s = Sim(COM_DISARM_PRFLT=2.0)
    assert s.cmd(400, 1) == 0
    s.run(3.0, lambda: not s.c.armed)
    assert "Disarmed by auto preflight disarming" in s.texts()


@pytest.mark.parametrize("action,mode", [(0, pm.POSCTL), (3, pm.RTL), (4, pm.LAND), (5, pm.HOLD)])
def test_offboard_loss_action_follows_com_obl_rc_act(action, mode):
    s = Sim(COM_OBL_RC_ACT=action)
    s.fly()
    s.c.on_setpoint(Setpoint(s.t, (0.0, 0.0, -5.0), (None, None, None), 0.0, None))
    assert s.cmd(176, 129, 6, 0) == 0
    t_last = s.t
    s.run(3.0, lambda: s.c.displayed_mode != pm.OFFBOARD)
    assert 1.0 <= s.t - t_last <= 1.05  # COM_OF_LOSS_T
    assert s.c.displayed_mode == mode and s.c.mode == pm.OFFBOARD  # intended mode stays OFFBOARD
    assert "Failsafe activated" in s.texts()
    assert not s.c.armable(s.t) and s.c.system_status(s.t) == pm.MAV_STATE_CRITICAL


def test_battery_failsafes_follow_com_low_bat_act():
    s = Sim()
    s.fly()
    s.texts()
    s.ph.set_battery(12.0)
    s.run(0.1)
    assert s.texts() == ["Low battery level! Return advised"] and s.c.displayed_mode == pm.HOLD
    s.ph.set_battery(6.0)
    s.run(0.1)
    assert s.c.displayed_mode == pm.RTL and "Failsafe activated" in s.texts()
    s.ph.set_battery(4.0)
    s.run(0.1)
    assert s.c.displayed_mode == pm.LAND


def test_reposition_relative_frame_and_speed():
    s = Sim()
    s.fly()
    lat, lon = geo_from_ned(s.c.origin, 10.0, 0.0)
    assert s.c.handle_command(192, [3.0, 1, math.nan, math.nan, 0, 0, 8.0], s.t, frame=6,
                              xyz=(int(lat * 1e7), int(lon * 1e7), 8.0)) == 0
    assert s.c.cruise() == 3.0
    s.run(20, lambda: math.dist(s.ph.state.pos, (10.0, 0.0, -8.0)) < 0.3)
    assert s.c.displayed_mode == pm.HOLD


def test_reposition_yaw_is_in_radians_as_px4_reads_it():
    """PX4's navigator puts DO_REPOSITION's param4 into the setpoint as radians (not the degrees of the
    MAVLink text); MAVSDK's goto_location converts its yaw_deg to radians for it."""
    s = Sim()
    s.fly()
    lat, lon = geo_from_ned(s.c.origin, 0.0, 0.0)
    assert s.c.handle_command(192, [math.nan, 1, math.nan, math.pi / 2, 0, 0, 8.0], s.t, frame=6,
                              xyz=(int(lat * 1e7), int(lon * 1e7), 8.0)) == 0
    s.run(20, lambda: abs(s.ph.state.yaw - math.pi / 2) < 0.02)
    assert abs(s.ph.state.yaw - math.pi / 2) < 0.02  # east


def test_gps_loss_blocks_arming_and_descends_in_air():
    s = Sim()
    s.c.set_gps(False, s.t)
    assert not s.c.armable(s.t) and s.cmd(400, 1) == 1
    s.c.set_gps(True, s.t)
    s.fly()
    s.c.set_gps(False, s.t)
    s.run(1.5, lambda: s.c.failsafe_reason == "position_loss")
    assert s.c.displayed_mode == pm.LAND and "Failsafe activated" in s.texts()
    s.run(30, lambda: not s.c.armed)


def test_flight_termination_and_force_disarm_drop_the_vehicle():
    s = Sim()
    s.fly()
    assert s.cmd(185, 1) == 0 and not s.c.armed
    s.run(5, lambda: s.ph.state.on_ground)


# -- timers on the synthetic clock (the flight tests only check that they fire: wall-clock delays on a
# -- busy machine say more about the machine than about the vehicle)
def test_auto_disarm_com_disarm_land_after_landing_detected():
    s = Sim(COM_DISARM_LAND=2.0, LNDMC_TRIG_TIME=0.2)
    s.fly()
    s.texts()
    assert s.cmd(21) == 0  # NAV_LAND
    s.run(60, lambda: s.c.landed_state == ON_GROUND)
    t_landed = s.t
    assert "Landing detected" in s.texts() and s.c.armed
    s.run(5, lambda: not s.c.armed)
    assert s.t - t_landed == pytest.approx(2.0, abs=1.5 * DT)  # PX4 trace: 2.0 s after "Landing detected"
    assert s.texts() == ["Disarmed by landing"]


def test_datalink_loss_after_com_dl_loss_t():
    s = Sim(NAV_DLL_ACT=2, COM_DL_LOSS_T=2.0)
    s.fly()
    for _ in range(3):  # a ground station's 1 Hz HEARTBEAT
        s.c.on_gcs_heartbeat(s.t)
        s.run(1.0)
    s.c.on_gcs_heartbeat(s.t)
    t_last = s.t
    s.run(5, lambda: s.c.displayed_mode == pm.RTL)
    assert 2.0 - 1e-9 <= s.t - t_last <= 2.0 + 3 * DT  # not before COM_DL_LOSS_T, and at the next step after it
    assert s.c.failsafe_reason == "datalink_loss"
    assert "Connection to ground station lost" in s.texts()


def test_datalink_loss_is_only_a_warning_with_px4_defaults():
    s = Sim(COM_DL_LOSS_T=2.0)  # NAV_DLL_ACT 0
    s.fly()
    s.c.on_gcs_heartbeat(s.t)
    s.run(5)
    assert s.c.displayed_mode == pm.HOLD and s.c.failsafe_reason is None
    assert "Connection to ground station lost" in s.texts()


@needs_trace
def test_offboard_loss_delay_matches_the_px4_trace():
    """PX4 said "Failsafe activated" 1.03 s after the last setpoint in the trace; the commander, on its clock, alike."""
    trace = load_trace({"SET_POSITION_TARGET_LOCAL_NED", "STATUSTEXT"})
    t_text = next(r["t"] for r in trace if r["name"] == "STATUSTEXT" and r["fields"]["text"].startswith("Failsafe"))
    t_last = max(r["t"] for r in trace if r["name"] == "SET_POSITION_TARGET_LOCAL_NED" and r["t"] < t_text)
    s = Sim()
    s.fly()
    s.c.on_setpoint(Setpoint(s.t, (0.0, 0.0, -5.0), (None, None, None), 0.0, None))
    assert s.cmd(176, 129, 6, 0) == 0
    sp_t = s.t
    s.texts()
    s.run(3.0, lambda: "Failsafe activated" in [t for _, t in s.c.out.texts])
    assert abs((s.t - sp_t) - (t_text - t_last)) < 0.1, (s.t - sp_t, t_text - t_last)


# -- issue 36 row 13: PX4 goes back to OFFBOARD after a landing that followed offboard flight
def _offboard_then(s: Sim, command: int, *p: float) -> None:
    """Fly in offboard, then land with ``command`` (the setpoints stop) until auto-disarmed."""
    s.fly()
    s.c.on_setpoint(Setpoint(s.t, (0.0, 0.0, -5.0), (None, None, None), 0.0, None))
    assert s.cmd(176, 129, 6, 0) == 0
    assert s.cmd(command, *p) == 0
    s.run(120, lambda: not s.c.armed)
    s.run(s.params.f("COM_OF_LOSS_T") + 0.5)  # the last setpoint is stale now
    s.texts()


@pytest.mark.parametrize("command", [21, 20])  # NAV_LAND, NAV_RETURN_TO_LAUNCH
def test_landing_after_offboard_leaves_offboard_selected_and_unarmable(command):
    s = Sim(COM_DISARM_LAND=0.5, LNDMC_TRIG_TIME=0.2, RTL_RETURN_ALT=6.0)
    _offboard_then(s, command)
    assert s.c.displayed_mode == pm.OFFBOARD and s.c.base_mode() == 17  # trace: base 17 after the landing
    assert not s.c.armable(s.t) and s.c.system_status(s.t) == pm.MAV_STATE_UNINIT
    assert s.cmd(400, 1) == 1 and s.texts() == ["Arming denied: Resolve system health failures first"]
    assert s.cmd(176, 1, 4, 3) == 0  # Hold, as `px4-commander mode auto:loiter` or MAVSDK's action.hold
    assert s.c.armable(s.t) and s.cmd(400, 1) == 0


def test_offboard_loss_failsafe_landing_ends_in_offboard():
    s = Sim(COM_OBL_RC_ACT=4, COM_DISARM_LAND=0.5, LNDMC_TRIG_TIME=0.2)  # failsafe action: Land
    s.fly()
    s.c.on_setpoint(Setpoint(s.t, (0.0, 0.0, -5.0), (None, None, None), 0.0, None))
    assert s.cmd(176, 129, 6, 0) == 0
    s.run(120, lambda: not s.c.armed)
    assert s.c.displayed_mode == pm.OFFBOARD and not s.c.armable(s.t)


def test_landing_without_offboard_still_ends_in_hold():
    s = Sim(COM_DISARM_LAND=0.5, LNDMC_TRIG_TIME=0.2)
    s.fly()
    assert s.cmd(21) == 0
    s.run(120, lambda: not s.c.armed)
    assert s.c.displayed_mode == pm.HOLD and s.c.armable(s.t)  # trace: AUTO/LOITER after Land


# -- issue 36 row 14: PX4 does not land where Land was commanded when the vehicle was moving
def _land_at_speed(s: Sim, speed: float, *land: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Fly north in offboard at ``speed``, command Land; (where it was commanded, where it came down)."""
    s.fly()
    for _ in range(int(8.0 / DT)):  # a velocity setpoint every step: offboard at speed, level
        s.c.on_setpoint(Setpoint(s.t, (None, None, None), (speed, 0.0, 0.0), 0.0, None))
        if s.c.displayed_mode != pm.OFFBOARD:
            assert s.cmd(176, 129, 6, 0) == 0
        s.run(DT)
    assert math.hypot(*s.ph.state.vel[:2]) == pytest.approx(speed, abs=0.3)
    commanded = s.c.pos()[:2]
    assert s.cmd(21, *land) == 0
    s.run(120, lambda: not s.c.armed)
    return commanded, s.c.pos()[:2]


def test_land_commanded_at_speed_comes_down_a_braking_distance_on():
    from common.stopping import braking_distance_m

    s = Sim(COM_DISARM_LAND=0.5, LNDMC_TRIG_TIME=0.2)
    (n0, e0), (n1, e1) = _land_at_speed(s, 7.0)
    carried = n1 - n0
    # PX4 SITL carried members 9-10 m on at ~7 m/s; its navigator aims braking_distance_m ahead
    assert carried == pytest.approx(braking_distance_m(7.0, s.params.f("MPC_ACC_HOR")), abs=1.5), carried
    assert abs(e1 - e0) < 0.5
    assert carried > 8.0


def test_land_commanded_in_a_hover_comes_down_where_it_is():
    s = Sim(COM_DISARM_LAND=0.5, LNDMC_TRIG_TIME=0.2)
    (n0, e0), (n1, e1) = _land_at_speed(s, 0.0)
    assert math.hypot(n1 - n0, e1 - e0) < 0.5

"""The simulated gimbal: its mechanics on a synthetic clock, and its MAVLink gimbal protocol v2 without a socket.

MAVSDK's gimbal plugin finding and pointing it over real UDP is tests/firmware_bridge/test_gimbal.py.
"""

from __future__ import annotations

import math

import pytest
from pymavlink.dialects.v20 import development as mavlink2

from sim.vehicle.gimbal import AxisTarget, GimbalDevice, GimbalSpec
from sim.vehicle.gimbal_manager import (
    FLAG_YAW_IN_EARTH_FRAME, FLAG_YAW_IN_VEHICLE_FRAME, FLAG_YAW_LOCK, GIMBAL_COMPID, GimbalManager,
    quat_to_pitch_yaw_deg, yaw_in_earth_frame,
)
from sim.vehicle.mav_constants import ACCEPTED, DENIED, UNSUPPORTED
from sim.vehicle.telemetry import euler_to_quat

DT = 0.01
NAN = float("nan")
GCS = (245, 190)


def _run(device: GimbalDevice, seconds: float, vehicle_yaw=lambda t: 0.0) -> list[tuple[float, float, float]]:
    out, t = [], 0.0
    for _ in range(int(round(seconds / DT))):
        t += DT
        device.step(DT, vehicle_yaw(t))
        out.append((t, device.pitch_deg, device.yaw_body_deg))
    return out


def test_each_axis_slews_at_its_rate_and_stops_on_the_angle():
    spec = GimbalSpec()
    g = GimbalDevice(spec)
    g.set_target(AxisTarget(-60.0), AxisTarget(120.0), yaw_in_earth_frame=False)
    track = _run(g, 2.0)
    # after 0.5 s: pitch 30 deg down, yaw 45 deg round, at their rates exactly
    t, pitch, yaw = track[49]
    assert pitch == pytest.approx(-spec.pitch_rate_deg_s * t) and yaw == pytest.approx(spec.yaw_rate_deg_s * t)
    assert (g.pitch_deg, g.yaw_body_deg) == (-60.0, 120.0)  # there, and no overshoot on the way
    assert all(-60.0 <= p <= 0.0 and 0.0 <= y <= 120.0 for _, p, y in track)
    assert next(t for t, p, _ in track if p == -60.0) == pytest.approx(1.0)
    assert next(t for t, _, y in track if y == 120.0) == pytest.approx(120.0 / spec.yaw_rate_deg_s, abs=DT)


def test_the_end_stops_hold_and_yaw_never_wraps_through_them():
    g = GimbalDevice(GimbalSpec(yaw_min_deg=-160.0, yaw_max_deg=160.0, pitch_min_deg=-90.0, pitch_max_deg=30.0))
    g.set_target(AxisTarget(-120.0), AxisTarget(175.0), yaw_in_earth_frame=False)
    _run(g, 3.0)
    assert (g.pitch_deg, g.yaw_body_deg) == (-90.0, 160.0)
    g.set_target(None, AxisTarget(-150.0), yaw_in_earth_frame=False)  # 50 deg away across the back: the long way
    track = _run(g, 4.0)
    assert g.yaw_body_deg == -150.0 and all(-150.0 <= y <= 160.0 for _, _, y in track)
    assert track[99][2] == pytest.approx(160.0 - 90.0)  # still turning through the front after 1 s


def test_a_rate_alone_turns_until_the_stop_and_an_angle_with_a_rate_goes_at_that_rate():
    g = GimbalDevice(GimbalSpec())
    g.set_target(AxisTarget(None, -20.0), AxisTarget(None, 500.0), yaw_in_earth_frame=False)
    _run(g, 1.0)
    assert g.pitch_deg == pytest.approx(-20.0) and g.yaw_body_deg == pytest.approx(90.0)  # 500 deg/s capped at 90
    g.set_target(None, AxisTarget(100.0, 10.0), yaw_in_earth_frame=False)
    _run(g, 0.5)
    assert g.yaw_body_deg == pytest.approx(95.0)


def test_a_yaw_locked_to_north_holds_its_heading_while_the_vehicle_turns_under_it():
    g = GimbalDevice(GimbalSpec())
    g.set_target(AxisTarget(-30.0), AxisTarget(90.0), yaw_in_earth_frame=True)
    _run(g, 1.5)
    assert g.yaw_north_deg(0.0) == pytest.approx(90.0)
    _run(g, 1.0, vehicle_yaw=lambda t: 30.0 * t)  # the vehicle yaws 30 deg/s, slower than the gimbal
    assert g.yaw_north_deg(30.0) == pytest.approx(90.0, abs=30.0 * DT + 1e-6) and g.yaw_body_deg == pytest.approx(60.0, abs=0.31)
    g.set_target(None, AxisTarget(90.0), yaw_in_earth_frame=False)  # follow: 90 from the nose
    _run(g, 1.0, vehicle_yaw=lambda t: 30.0)
    assert g.yaw_north_deg(30.0) == pytest.approx(120.0)


def test_the_yaw_frame_follows_the_newer_flags_then_the_lock():
    assert yaw_in_earth_frame(FLAG_YAW_IN_EARTH_FRAME) and yaw_in_earth_frame(FLAG_YAW_LOCK)
    assert not yaw_in_earth_frame(FLAG_YAW_LOCK | FLAG_YAW_IN_VEHICLE_FRAME) and not yaw_in_earth_frame(0)
    q = euler_to_quat(0.0, math.radians(-35.0), math.radians(-120.0))
    assert quat_to_pitch_yaw_deg(list(q)) == pytest.approx((-35.0, -120.0))


class _Wire:
    """What the manager sent, as (message, source component) pairs, through a real pymavlink encoder."""

    def __init__(self) -> None:
        self.mav = mavlink2.MAVLink(None, srcSystem=1, srcComponent=1)
        self.sent: list[tuple[object, int]] = []
        self.manager = GimbalManager(self.mav, 1, 0.0, lambda m, c: self.sent.append((m, c)))

    def of(self, name: str) -> list[tuple[object, int]]:
        return [(m, c) for m, c in self.sent if m.get_type() == name]


def test_discovery_answers_as_mavsdk_asks_and_only_the_controller_is_obeyed():
    w = _Wire()
    g = w.manager
    nan7 = [NAN] * 7
    # MAVSDK asks the autopilot, and every other component that beats, for the manager's information
    assert g.handle_command(512, [280.0] + nan7[1:], GCS, 1, 1.0) == (ACCEPTED, 1)
    (info, compid), = w.of("GIMBAL_MANAGER_INFORMATION")
    assert compid == 1 and info.gimbal_device_id == GIMBAL_COMPID
    assert math.degrees(info.yaw_min) == pytest.approx(-160.0) and math.degrees(info.pitch_min) == pytest.approx(-90.0)
    assert g.handle_command(512, [280.0] + nan7[1:], GCS, GIMBAL_COMPID, 1.0) == (UNSUPPORTED, GIMBAL_COMPID)
    assert g.handle_command(512, [283.0] + nan7[1:], GCS, GIMBAL_COMPID, 1.1) == (ACCEPTED, GIMBAL_COMPID)
    (dev, compid), = w.of("GIMBAL_DEVICE_INFORMATION")
    assert compid == GIMBAL_COMPID and dev.gimbal_device_id == 0  # a component of its own, as the protocol has it
    assert g.handle_command(176, [1.0] + nan7[1:], GCS, 1, 1.1) is None  # not the gimbal's: the commander's
    # pointing without control: refused; after DO_GIMBAL_MANAGER_CONFIGURE (MAVSDK's take_control): obeyed
    pitchyaw = [-40.0, 60.0, NAN, NAN, float(FLAG_YAW_LOCK | 12), NAN, float(GIMBAL_COMPID)]
    assert g.handle_command(1000, pitchyaw, GCS, 1, 1.2) == (DENIED, 1)
    assert g.handle_command(1001, [245.0, 190.0, 245.0, 190.0, NAN, NAN, float(GIMBAL_COMPID)], GCS, 1, 1.3) == (
        ACCEPTED, 1)
    assert g.primary == GCS
    assert g.handle_command(1000, pitchyaw, GCS, 1, 1.4) == (ACCEPTED, 1)
    assert g.device.pitch_target.angle_deg == -40.0 and g.device.yaw_target.angle_deg == 60.0
    assert g.device.yaw_in_earth_frame
    assert g.handle_command(1000, pitchyaw, (1, 100), 1, 1.5) == (DENIED, 1)  # another component: not in control
    # released by the holder (-3): nobody controls it
    assert g.handle_command(1001, [-3.0] * 4 + [NAN, NAN, float(GIMBAL_COMPID)], GCS, 1, 1.6) == (ACCEPTED, 1)
    assert g.primary == (0, 0) and g.secondary == (0, 0)


def test_streamed_setpoints_from_the_controller_and_the_reports_it_sends():
    w = _Wire()
    g = w.manager
    g.handle_command(1001, [245.0, 190.0, -1.0, -1.0, NAN, NAN, 0.0], GCS, 1, 0.0)
    q = euler_to_quat(0.0, math.radians(-25.0), math.radians(45.0))
    m = w.mav.gimbal_manager_set_attitude_encode(1, 1, 0, GIMBAL_COMPID, list(q), NAN, NAN, NAN)
    m.pack(mavlink2.MAVLink(None, srcSystem=245, srcComponent=190))  # as received: it knows its sender
    g.handle_message(m, 0.1)
    assert g.device.pitch_target.angle_deg == pytest.approx(-25.0) and g.device.yaw_target.angle_deg == pytest.approx(45.0)
    assert not g.device.yaw_in_earth_frame  # no lock flag: from the nose
    for k in range(200):
        g.step(DT, 10.0, 0.0)
        g.stream(k * DT)
    att = [m for m, c in w.of("GIMBAL_DEVICE_ATTITUDE_STATUS") if c == GIMBAL_COMPID]
    assert 18 <= len(att) <= 21  # 10 Hz over 2 s
    assert att[-1].flags & FLAG_YAW_IN_VEHICLE_FRAME and quat_to_pitch_yaw_deg(list(att[-1].q)) == pytest.approx((-25.0, 45.0))
    assert math.degrees(att[-1].delta_yaw) == pytest.approx(10.0)
    assert {c for _, c in w.of("HEARTBEAT")} == {GIMBAL_COMPID} and w.of("HEARTBEAT")[0][0].type == 26
    status = [m for m, c in w.of("GIMBAL_MANAGER_STATUS") if c == 1]
    assert 9 <= len(status) <= 11 and (status[-1].primary_control_sysid, status[-1].primary_control_compid) == GCS
    assert g.truth()["gimbal_yaw_deg"] == pytest.approx(55.0) and g.truth()["gimbal_yaw_body_deg"] == pytest.approx(45.0)


def test_a_silent_gimbal_answers_nothing_and_obeys_nothing():
    w = _Wire()
    g = w.manager
    g.silent = True
    assert g.handle_command(512, [280.0] + [NAN] * 6, GCS, 1, 0.0) == (-1, -1)
    assert g.handle_command(1001, [245.0, 190.0, -1.0, -1.0, NAN, NAN, 0.0], GCS, 1, 0.0) == (-1, -1)
    assert g.primary == (0, 0)
    g.stream(0.0)
    g.stream(5.0)
    assert w.sent == []

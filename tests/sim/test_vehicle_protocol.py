"""Wire-level conformance of the simulated vehicle against the PX4 SITL trace.

Expected values are read from /work/shared/px4-trace (the recorded PX4
session), not copied: if the reference changes, these tests follow it.
"""

from __future__ import annotations

import math
import os
import struct

import pytest
from _vehicle_testkit import needs_trace

from _vehicle_testkit import RawGcs, count, load_trace, payload_u32, poll_until

pytestmark = needs_trace

PREARM_CHECK = 0x10000000


@pytest.fixture(scope="module")
def trace() -> list[dict]:
    return load_trace({"HEARTBEAT", "COMMAND_LONG", "COMMAND_INT", "COMMAND_ACK", "STATUSTEXT", "PARAM_VALUE",
                       "PARAM_REQUEST_READ", "PARAM_SET", "AUTOPILOT_VERSION", "MISSION_ITEM_INT", "MISSION_REQUEST_INT",
                       "MISSION_COUNT", "MISSION_ACK", "SYS_STATUS", "PING"})


def _px4(trace, name, phase=None):
    return [r for r in trace if r["dir"] == "px4->gcs" and r["name"] == name and (phase is None or r["phase"] == phase)]


def _ack_after(trace, t: float, command: int) -> dict:
    return next(r for r in trace if r["dir"] == "px4->gcs" and r["name"] == "COMMAND_ACK" and r["t"] >= t
                and r["fields"]["command"] == command)


def _trace_cmd(trace, phase: str, command: int) -> dict:
    return next(r for r in trace if r["dir"] == "gcs->px4" and r["name"] in ("COMMAND_LONG", "COMMAND_INT")
                and r["phase"] == phase and r["fields"]["command"] == command)


def _params_of(rec: dict) -> list[float]:
    f = rec["fields"]
    return [math.nan if f[f"param{i}"] is None else f[f"param{i}"] for i in range(1, 8)]


def _last_hb_in_phase(trace, phase: str) -> dict:
    return _px4(trace, "HEARTBEAT", phase)[-1]["fields"]


def _texts(gcs: RawGcs, duration: float) -> list[tuple[int, str]]:
    return [(m.severity, m.text) for m in gcs.recv_all(duration) if m.get_type() == "STATUSTEXT"]


def _hb(gcs: RawGcs, pred=lambda m: True, timeout: float = 3.0):
    return gcs.wait("HEARTBEAT", pred, timeout)


def test_heartbeat_identity_matches_px4(raw_gcs, trace):
    ref = _px4(trace, "HEARTBEAT")[0]
    m = _hb(raw_gcs)
    assert (m.get_srcSystem(), m.get_srcComponent()) == (ref["sysid"], ref["compid"])
    assert (m.type, m.autopilot, m.mavlink_version) == (ref["fields"]["type"], ref["fields"]["autopilot"],
                                                         ref["fields"]["mavlink_version"])
    # MAVLink 2 framing, as every PX4 datagram in the trace
    assert m._datagram[0] == 0xFD


def test_boot_heartbeat_then_standby_with_prearm():
    """UNINIT and no PREARM_CHECK until pre-arm checks pass, then STANDBY (trace boot vs idle_ground)."""
    from sim.vehicle import SimVehicleProcess

    trace = load_trace({"HEARTBEAT", "SYS_STATUS"}, "px4->gcs")
    boot_hb = trace[[r["name"] for r in trace].index("HEARTBEAT")]["fields"]
    idle_hb = [r for r in trace if r["name"] == "HEARTBEAT" and r["phase"] == "idle_ground"][0]["fields"]
    idle_health = [r for r in trace if r["name"] == "SYS_STATUS" and r["phase"] == "idle_ground"][0]["fields"]
    with SimVehicleProcess(prearm_delay_s=2.0, gimbal=False) as v:  # as the traced PX4
        g = RawGcs(v.gcs_port, v.port)
        try:
            first = _hb(g)
            assert (first.base_mode, first.custom_mode, first.system_status) == (
                boot_hb["base_mode"], boot_hb["custom_mode"], boot_hb["system_status"])
            st = g.wait("SYS_STATUS")
            assert not st.onboard_control_sensors_health & PREARM_CHECK
            later = _hb(g, lambda m: m.system_status == idle_hb["system_status"], timeout=4.0)
            assert (later.base_mode, later.custom_mode) == (idle_hb["base_mode"], idle_hb["custom_mode"])
            st = g.wait("SYS_STATUS", lambda m: m.onboard_control_sensors_health & PREARM_CHECK)
            assert st.onboard_control_sensors_health == idle_health["onboard_control_sensors_health"]
            assert st.onboard_control_sensors_present == idle_health["onboard_control_sensors_present"]
        finally:
            g.close()


def test_connect_requests_answered_like_px4(raw_gcs, trace):
    ref_ver = _px4(trace, "AUTOPILOT_VERSION")[0]["fields"]
    _hb(raw_gcs)
    raw_gcs.send(raw_gcs.mav.command_long_encode(1, 1, 512, 0, 148, 0, 0, 0, 0, 0, 0))
    got = raw_gcs.recv_until(lambda got: count(got, "COMMAND_ACK"))
    names = [m.get_type() for m in got]
    assert "AUTOPILOT_VERSION" in names and "COMMAND_ACK" in names
    assert names.index("AUTOPILOT_VERSION") < names.index("COMMAND_ACK"), "PX4 sends the message before the ACK"
    ver = got[names.index("AUTOPILOT_VERSION")]
    ack = got[names.index("COMMAND_ACK")]
    for k in ("capabilities", "flight_sw_version", "os_sw_version", "board_version", "uid"):
        assert getattr(ver, k) == ref_ver[k], k
    assert list(ver.flight_custom_version) == ref_ver["flight_custom_version"]
    assert (ack.result, ack.target_system, ack.target_component) == (0, 245, 190)

    raw_gcs.send(raw_gcs.mav.command_long_encode(1, 1, 512, 0, 242, 0, 0, 0, 0, 0, 0))
    got = raw_gcs.recv_until(lambda got: count(got, "COMMAND_ACK"))
    names = [m.get_type() for m in got]
    assert names.index("HOME_POSITION") < names.index("COMMAND_ACK")
    rec = next(r for r in trace if r["dir"] == "gcs->px4" and r["name"] == "COMMAND_LONG"
               and r["fields"]["command"] == 511)
    assert raw_gcs.command_long(511, *_params_of(rec)).result == _ack_after(trace, rec["t"], 511)["fields"]["result"]


def test_ground_command_sequence_matches_trace(raw_gcs, trace):
    """Replays the trace's on-ground phases: same ACK codes, STATUSTEXTs and HEARTBEAT modes."""
    g = raw_gcs
    _hb(g, lambda m: m.system_status == 3)

    def replay(phase: str, command: int):
        rec = _trace_cmd(trace, phase, command)
        ack = g.command_long(command, *_params_of(rec))
        return ack.result, _ack_after(trace, rec["t"], command)["fields"]["result"]

    # takeoff while disarmed: accepted, only the mode changes
    got, want = replay("neg_takeoff_disarmed", 22)
    assert got == want
    hb = _hb(g, lambda m: m.custom_mode != 50593792)
    ref = _last_hb_in_phase(trace, "neg_takeoff_disarmed")
    assert (hb.base_mode, hb.custom_mode, hb.system_status) == (ref["base_mode"], ref["custom_mode"], ref["system_status"])

    got, want = replay("hold_on_ground", 176)
    assert got == want
    # unknown command
    got, want = replay("neg_unknown_command", 31010)
    assert got == want == 3
    # OFFBOARD on the ground without setpoints: accepted; heartbeat base 1 / UNINIT, PREARM_CHECK cleared
    got, want = replay("neg_offboard_start_no_setpoint_ground", 176)
    assert got == want
    ref = _last_hb_in_phase(trace, "neg_offboard_start_no_setpoint_ground")
    hb = _hb(g, lambda m: m.custom_mode == ref["custom_mode"])
    assert (hb.base_mode, hb.system_status) == (ref["base_mode"], ref["system_status"])
    st = g.wait("SYS_STATUS")
    assert not st.onboard_control_sensors_health & PREARM_CHECK
    # arming in OFFBOARD without setpoints: TEMPORARILY_REJECTED with PX4's chunked text
    rec = _trace_cmd(trace, "neg_arm_in_offboard_without_setpoints", 400)
    theirs = [(r["fields"]["severity"], r["fields"]["text"], r["fields"]["chunk_seq"])
              for r in _px4(trace, "STATUSTEXT", "neg_arm_in_offboard_without_setpoints")]
    g.send(g.mav.command_long_encode(1, 1, 400, 0, *_params_of(rec)))
    got = g.recv_until(lambda got: count(got, "COMMAND_ACK") and count(got, "STATUSTEXT") >= len(theirs))
    got += g.recv_all(0.3)  # and nothing more than PX4 said
    ack = next(m for m in got if m.get_type() == "COMMAND_ACK")
    assert ack.result == _ack_after(trace, rec["t"], 400)["fields"]["result"] == 1
    ours = [(m.severity, m.text, m.chunk_seq) for m in got if m.get_type() == "STATUSTEXT"]
    assert ours == theirs
    # back to Hold, arm, arm again: all accepted
    got, want = replay("hold_on_ground_2", 176)
    assert got == want
    _hb(g, lambda m: m.system_status == 3)
    got, want = replay("arm", 400)
    assert got == want == 0
    ref = _last_hb_in_phase(trace, "arm")
    hb = _hb(g, lambda m: m.base_mode & 128)
    assert (hb.base_mode, hb.custom_mode, hb.system_status) == (ref["base_mode"], ref["custom_mode"], ref["system_status"])
    got, want = replay("neg_arm_again", 400)
    assert got == want == 0
    g.command_long(400, 0)  # disarm on the ground: accepted


def test_param_values_match_trace(raw_gcs, trace):
    ref: dict[str, dict] = {}
    for r in _px4(trace, "PARAM_VALUE"):
        if r["phase"] in ("params", "set_takeoff_altitude"):
            ref.setdefault(r["fields"]["param_id"], r["fields"])  # the first answer: PX4's default
    names = ["COM_OF_LOSS_T", "COM_OBL_RC_ACT", "COM_FAIL_ACT_T", "NAV_DLL_ACT", "RTL_RETURN_ALT"]
    for name in names:
        want = ref[name]
        got = raw_gcs.param_read(name)
        assert (got.param_type, got.param_index, got.param_count) == (
            want["param_type"], want["param_index"], want["param_count"]), name
        if want["param_type"] == 9:
            assert got.param_value == pytest.approx(want["param_value"])
        else:
            assert struct.unpack("<i", struct.pack("<f", got.param_value))[0] == want["_param_value_as_int32"]
    # the first read of MPC_XY_VEL_MAX in the trace is before the script changed it: PX4's default
    first = next(r["fields"] for r in _px4(trace, "PARAM_VALUE", "params") if r["fields"]["param_id"] == "MPC_XY_VEL_MAX")
    assert raw_gcs.param_read("MPC_XY_VEL_MAX").param_value == pytest.approx(first["param_value"])


def test_unknown_param_is_silent(raw_gcs):
    raw_gcs.send(raw_gcs.mav.param_request_read_encode(1, 1, b"NO_SUCH_PARAM", -1))
    got = [m for m in raw_gcs.recv_all(0.6) if m.get_type() == "PARAM_VALUE"]
    assert got == []


def test_param_set_echo_then_broadcast(raw_gcs):
    raw_gcs.drain()
    raw_gcs.send(raw_gcs.mav.param_set_encode(1, 1, b"MPC_XY_VEL_MAX", 10.0, 9))
    got = raw_gcs.recv_until(lambda got: count(got, "PARAM_VALUE") >= 2) + raw_gcs.recv_all(0.3)
    got = [m for m in got if m.get_type() == "PARAM_VALUE"]
    assert len(got) == 2 and all(m.param_value == 10.0 for m in got)
    raw_gcs.send(raw_gcs.mav.param_set_encode(1, 1, b"MPC_XY_VEL_MAX", 10.0, 9))
    got = raw_gcs.recv_until(lambda got: count(got, "PARAM_VALUE") >= 1) + raw_gcs.recv_all(0.3)
    got = [m for m in got if m.get_type() == "PARAM_VALUE"]
    assert len(got) == 1, "an unchanged value is only echoed"
    # ints are bytewise in the float field
    raw_gcs.send(raw_gcs.mav.param_set_encode(1, 1, b"NAV_DLL_ACT", struct.unpack("<f", struct.pack("<i", 2))[0], 6))
    m = raw_gcs.wait("PARAM_VALUE", lambda m: m.param_id == "NAV_DLL_ACT")
    assert m.param_type == 6 and struct.unpack("<i", struct.pack("<f", m.param_value))[0] == 2


def _stalled(got: list, quiet: int = 200) -> bool:
    """The list stream has ended: this many messages in a row since the last PARAM_VALUE."""
    last = max((i for i, m in enumerate(got) if m.get_type() == "PARAM_VALUE"), default=None)
    return last is not None and len(got) - 1 - last >= quiet


def test_param_list_matches_px4_list(raw_gcs, trace):
    ref = {r["fields"]["param_index"]: r["fields"] for r in _px4(trace, "PARAM_VALUE", "param_list")}
    raw_gcs.drain()
    raw_gcs.send(raw_gcs.mav.param_request_list_encode(1, 1))
    got = raw_gcs.recv_until(lambda got: count(got, "PARAM_VALUE") >= len(ref) or _stalled(got)) + raw_gcs.recv_all(0.3)
    got = [m for m in got if m.get_type() == "PARAM_VALUE"]
    # A busy test process can overflow its UDP receive buffer during the burst; a GCS (QGC, MAVSDK) then
    # reads the missing indices one by one, and so does this test: the reply must match PX4's all the same.
    have = {m.param_index for m in got}
    for index in sorted(set(ref) - have - {65535}):
        raw_gcs.send(raw_gcs.mav.param_request_read_encode(1, 1, b"", index))
        got.append(raw_gcs.wait("PARAM_VALUE", lambda m, i=index: m.param_index == i))
    got = sorted({m.param_index: m for m in got}.values(), key=lambda m: (m.param_index != 65535, m.param_index))
    assert len(got) == len(ref) == 903
    assert got[0].param_id == "_HASH_CHECK" and got[0].param_index == 65535
    assert [m.param_index for m in got[1:]] == list(range(902))
    for m in got[1:]:
        want = ref[m.param_index]
        assert (m.param_id, m.param_type, m.param_count) == (want["param_id"], want["param_type"], want["param_count"])


def test_ping_reply(raw_gcs):
    raw_gcs.send(raw_gcs.mav.ping_encode(123456789, 0, 0, 0))
    m = raw_gcs.wait("PING", lambda m: m.target_system == 245)
    assert (m.time_usec, m.seq, m.target_component) == (123456789, 0, 190)


def test_mission_upload_download_like_px4(raw_gcs, trace):
    g = raw_gcs
    up = [r["fields"] for r in trace if r["dir"] == "gcs->px4" and r["name"] == "MISSION_ITEM_INT"
          and r["phase"] == "mission_upload"]
    down = [r["fields"] for r in _px4(trace, "MISSION_ITEM_INT", "mission_download")]
    nan = lambda x: math.nan if x is None else x  # noqa: E731
    g.drain()
    g.send(g.mav.mission_count_encode(1, 1, len(up), 0))
    for f in up:
        req = g.wait("MISSION_REQUEST_INT", lambda m: True, 1.0)
        assert (req.seq, req.target_system, req.target_component) == (f["seq"], 245, 190)
        g.send(g.mav.mission_item_int_encode(1, 1, f["seq"], f["frame"], f["command"], f["current"], f["autocontinue"],
                                             nan(f["param1"]), nan(f["param2"]), nan(f["param3"]), nan(f["param4"]),
                                             f["x"], f["y"], nan(f["z"]), 0))
    ack = g.wait("MISSION_ACK", timeout=1.0)
    assert ack.type == 0
    opaque_id = payload_u32(ack, 4)  # extension after target_system, target_component, type, mission_type
    assert opaque_id != 0
    g.send(g.mav.mission_request_list_encode(1, 1, 0))
    cnt = g.wait("MISSION_COUNT", timeout=1.0)
    assert cnt.count == len(down)
    assert payload_u32(cnt, 5) == opaque_id  # as PX4: the download carries the upload's opaque_id
    for want in down:
        g.send(g.mav.mission_request_int_encode(1, 1, want["seq"], 0))
        m = g.wait("MISSION_ITEM_INT", lambda m: m.seq == want["seq"], 1.0)
        for k in ("frame", "command", "current", "autocontinue", "x", "y"):
            assert getattr(m, k) == want[k], (want["seq"], k)
        for k in ("param1", "param2", "param3", "param4", "z"):
            a, b = getattr(m, k), want[k]
            assert (math.isnan(a) and b is None) or a == pytest.approx(b), (want["seq"], k)
    g.send(g.mav.mission_ack_encode(1, 1, 0, 0))
    mc = g.wait("MISSION_CURRENT", timeout=2.0)
    assert (mc.seq, mc.total) == (0, len(up))
    assert payload_u32(mc, 6) == opaque_id  # mission_id = opaque_id, as in the trace


def test_garbage_and_truncated_frames_are_counted_and_ignored(vehicle, raw_gcs):
    g = raw_gcs
    _hb(g, lambda m: m.system_status == 3)
    rnd = os.urandom
    good = g.mav.ping_encode(42, 0, 0, 0).pack(g.mav)
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    for _ in range(50):
        g.send_raw(rnd(1 + rnd(1)[0]))  # random garbage
    for _ in range(20):
        g.send_raw(good[: len(good) // 2])  # truncated frame
        g.send_raw(bytes(bad_crc))  # CRC failure
        g.send_raw(b"\xfd")  # a lone start byte
        g.send_raw(b"\xfe\x05")  # MAVLink 1 start, truncated
        g.send_raw(b"")  # empty datagram
    st = poll_until(lambda: (s := vehicle.stats()["stats"])["rx_truncated"] >= 20 and s["rx_bad_data"] >= 20 and s,
                    5, "the vehicle to count the bad datagrams")
    assert st["rx_truncated"] >= 20
    assert st["rx_bad_data"] >= 20
    # the vehicle still answers and still flies its state machine
    g.drain()
    g.send_raw(good)
    m = g.wait("PING", lambda m: m.target_system == 245 and m.time_usec == 42, 2.0)
    assert m.seq == 0
    assert g.command_long(400, 1).result == 0
    assert g.command_long(400, 0).result == 0


def test_stream_rates_close_to_px4_on_ground(raw_gcs, trace):
    """Per-message rates on the ground vs PX4's idle_ground phase (PX4 'onboard' link profile)."""
    full = load_trace({"ATTITUDE", "ATTITUDE_QUATERNION", "GLOBAL_POSITION_INT", "LOCAL_POSITION_NED", "VFR_HUD",
                       "ALTITUDE", "GPS_RAW_INT", "SYS_STATUS", "HEARTBEAT", "EXTENDED_SYS_STATE", "MISSION_CURRENT",
                       "BATTERY_STATUS", "HOME_POSITION", "CURRENT_MODE"}, "px4->gcs")
    idle = [r for r in full if r["phase"] == "idle_ground"]
    span = max(r["t"] for r in idle) - min(r["t"] for r in idle)
    want = {}
    for r in idle:
        want[r["name"]] = want.get(r["name"], 0) + 1
    want = {k: n / span for k, n in want.items()}
    _hb(raw_gcs)
    raw_gcs.drain()
    window = 4.0
    got_msgs = raw_gcs.recv_all(window)
    got = {}
    for m in got_msgs:
        got[m.get_type()] = got.get(m.get_type(), 0) + 1
    for name, hz in want.items():
        ours = got.get(name, 0) / window
        # never faster than PX4 (+25 %); slower only by what a loaded 2-core CI box can explain
        assert hz - max(0.5 * hz, 0.6) <= ours <= hz + max(0.25 * hz, 0.6), (name, ours, hz)

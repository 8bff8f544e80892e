"""The simulated vehicle's gimbal over MAVLink gimbal protocol v2, as MAVSDK's gimbal plugin finds and drives it.

Two components, as on a PX4 vehicle with a MAVLink gimbal: the autopilot (component 1) is the
gimbal manager, and the gimbal device is a component of its own (154, MAV_COMP_ID_GIMBAL) with
its own HEARTBEAT. MAVSDK 4's plugin (read in its source, cpp/src/mavsdk/plugins/gimbal) asks
every component that sends a HEARTBEAT for GIMBAL_MANAGER_INFORMATION (MAV_CMD_REQUEST_MESSAGE),
then the device named there for GIMBAL_DEVICE_INFORMATION, and announces the gimbal when that
answers (or, failing it, on the device's first GIMBAL_DEVICE_ATTITUDE_STATUS). Control is
taken and released with MAV_CMD_DO_GIMBAL_MANAGER_CONFIGURE; angles come as
MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW (MAVSDK's SendMode.ONCE, a COMMAND_LONG; rates as a
COMMAND_INT), GIMBAL_MANAGER_SET_ATTITUDE (SendMode.STREAM) or GIMBAL_MANAGER_SET_PITCHYAW. Only
the component in control is obeyed (others: DENIED, or ignored for the streamed messages), as the
protocol asks. GIMBAL_MANAGER_STATUS (5 Hz) says who controls it; GIMBAL_DEVICE_ATTITUDE_STATUS
(10 Hz) reports the attitude with yaw in the vehicle frame, which MAVSDK turns into a heading
from the vehicle's ATTITUDE. A silenced gimbal (`silent`) answers and sends nothing at all.
"""

from __future__ import annotations

import math
from typing import Callable

from .gimbal import AxisTarget, GimbalDevice, GimbalSpec
from .mav_constants import ACCEPTED, DENIED, UNSUPPORTED
from .telemetry import euler_to_quat

GIMBAL_COMPID = 154  # MAV_COMP_ID_GIMBAL
MANAGER_COMPID = 1  # the autopilot is the gimbal manager, as on PX4
MAV_TYPE_GIMBAL = 26
MAV_AUTOPILOT_INVALID = 8
MAV_STATE_ACTIVE = 4

# MAVLink message and command ids
GIMBAL_MANAGER_INFORMATION = 280
GIMBAL_MANAGER_STATUS = 281
GIMBAL_DEVICE_INFORMATION = 283
GIMBAL_DEVICE_ATTITUDE_STATUS = 285
CMD_REQUEST_MESSAGE = 512
CMD_DO_GIMBAL_MANAGER_PITCHYAW = 1000
CMD_DO_GIMBAL_MANAGER_CONFIGURE = 1001

# GIMBAL_MANAGER_FLAGS / GIMBAL_DEVICE_FLAGS (shared low bits)
FLAG_ROLL_LOCK = 4
FLAG_PITCH_LOCK = 8
FLAG_YAW_LOCK = 16
FLAG_YAW_IN_VEHICLE_FRAME = 32
FLAG_YAW_IN_EARTH_FRAME = 64
# GIMBAL_DEVICE_CAP_FLAGS: pitch axis (lock), yaw axis (follow, lock, earth frame); no roll axis
CAP_FLAGS = 32 | 128 | 256 | 512 | 1024 | 4096

STATUS_HZ = 5.0
ATTITUDE_HZ = 10.0
HEARTBEAT_HZ = 1.0

Send = Callable[[object, int], None]  # (message, source component id)


def yaw_in_earth_frame(flags: int) -> bool:
    """The protocol's frame of a yaw target: the newer frame flags if set, else the older YAW_LOCK."""
    if flags & FLAG_YAW_IN_EARTH_FRAME:
        return True
    if flags & FLAG_YAW_IN_VEHICLE_FRAME:
        return False
    return bool(flags & FLAG_YAW_LOCK)


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def quat_to_pitch_yaw_deg(q: list[float]) -> tuple[float, float]:
    """Pitch and yaw (ZYX Euler) of a MAVLink quaternion [w, x, y, z], degrees."""
    w, x, y, z = q
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return math.degrees(pitch), math.degrees(yaw)


class GimbalManager:
    """Gimbal manager (component 1) and gimbal device (component 154) of one simulated vehicle."""

    def __init__(self, mav, sysid: int, boot_t: float, send: Send, spec: GimbalSpec | None = None) -> None:
        self.mav = mav  # message factory only: the link packs each message as the component given to `send`
        self.sysid = sysid
        self.boot_t = boot_t
        self._send = send
        self.device = GimbalDevice(spec)
        self.primary: tuple[int, int] = (0, 0)
        self.secondary: tuple[int, int] = (0, 0)
        self.flags = FLAG_ROLL_LOCK | FLAG_PITCH_LOCK
        self.silent = False  # fault injection: the gimbal neither answers nor reports
        self.vehicle_yaw_deg = 0.0
        self.vehicle_yaw_rate_deg_s = 0.0
        self._due: dict[str, float] = {}
        self.commands: list[tuple[float, int, int]] = []  # (t, command or message id, MAV_RESULT or -1) received

    # -- motion -------------------------------------------------------------------------------
    def step(self, dt: float, vehicle_yaw_deg: float, vehicle_yaw_rate_deg_s: float) -> None:
        self.vehicle_yaw_deg = vehicle_yaw_deg
        self.vehicle_yaw_rate_deg_s = vehicle_yaw_rate_deg_s
        self.device.step(dt, vehicle_yaw_deg)

    def truth(self) -> dict:
        d = self.device
        return {"gimbal_pitch_deg": d.pitch_deg, "gimbal_yaw_deg": d.yaw_north_deg(self.vehicle_yaw_deg),
                "gimbal_yaw_body_deg": d.yaw_body_deg, "gimbal_primary_control": list(self.primary),
                "gimbal_silent": self.silent}

    # -- periodic -----------------------------------------------------------------------------
    def stream(self, now: float) -> None:
        """Send what is due: the device's HEARTBEAT and attitude, the manager's status."""
        if self.silent:
            return
        for name, hz, build, compid in (("hb", HEARTBEAT_HZ, self.device_heartbeat, GIMBAL_COMPID),
                                        ("att", ATTITUDE_HZ, self.device_attitude_status, GIMBAL_COMPID),
                                        ("status", STATUS_HZ, self.manager_status, MANAGER_COMPID)):
            due = self._due.get(name)
            if due is None or now >= due:
                self._due[name] = now + 1.0 / hz if due is None or now - due > 1.0 / hz else due + 1.0 / hz
                self._send(build(now), compid)

    def _ms(self, now: float) -> int:
        return int((now - self.boot_t) * 1000) & 0xFFFFFFFF

    def device_heartbeat(self, now: float):
        return self.mav.heartbeat_encode(MAV_TYPE_GIMBAL, MAV_AUTOPILOT_INVALID, 0, 0, MAV_STATE_ACTIVE, 3)

    def device_attitude_status(self, now: float):
        d = self.device
        q = euler_to_quat(0.0, math.radians(d.pitch_deg), math.radians(d.yaw_body_deg))
        flags = FLAG_ROLL_LOCK | FLAG_PITCH_LOCK | FLAG_YAW_IN_VEHICLE_FRAME | (
            FLAG_YAW_LOCK if d.yaw_in_earth_frame else 0)
        return self.mav.gimbal_device_attitude_status_encode(
            0, 0, self._ms(now), flags, list(q), 0.0, math.radians(d.pitch_rate_deg_s),
            math.radians(d.yaw_rate_deg_s), 0, math.radians(self.vehicle_yaw_deg),
            math.radians(self.vehicle_yaw_rate_deg_s), 0)

    def manager_status(self, now: float):
        return self.mav.gimbal_manager_status_encode(self._ms(now), self.flags, GIMBAL_COMPID, *self.primary,
                                                     *self.secondary)

    def manager_information(self, now: float):
        s = self.device.spec
        r = math.radians
        return self.mav.gimbal_manager_information_encode(self._ms(now), CAP_FLAGS, GIMBAL_COMPID, 0.0, 0.0,
                                                          r(s.pitch_min_deg), r(s.pitch_max_deg), r(s.yaw_min_deg),
                                                          r(s.yaw_max_deg))

    def device_information(self, now: float):
        s = self.device.spec
        r = math.radians
        return self.mav.gimbal_device_information_encode(
            self._ms(now), b"Aerie", b"SimGimbal 2-axis", b"", 0x01000000, 0x01000000, 0x5147, CAP_FLAGS, 0,
            0.0, 0.0, r(s.pitch_min_deg), r(s.pitch_max_deg), r(s.yaw_min_deg), r(s.yaw_max_deg), 0, 0)

    # -- commands -----------------------------------------------------------------------------
    def handle_command(self, command: int, p: list[float], source: tuple[int, int], target_compid: int,
                       now: float) -> tuple[int, int] | None:
        """A COMMAND_LONG/INT for the manager or the device: (MAV_RESULT, the component that answers),
        None when it is no gimbal command, or (-1, -1) when the gimbal is silent (no answer, no effect)."""
        ours = (target_compid == GIMBAL_COMPID
                or command in (CMD_DO_GIMBAL_MANAGER_CONFIGURE, CMD_DO_GIMBAL_MANAGER_PITCHYAW)
                or (command == CMD_REQUEST_MESSAGE
                    and _num(p[0]) in (GIMBAL_MANAGER_INFORMATION, GIMBAL_MANAGER_STATUS)))
        if not ours or target_compid not in (0, MANAGER_COMPID, GIMBAL_COMPID):
            return None
        if self.silent:
            self.commands.append((now, command, -1))
            return -1, -1
        if target_compid == GIMBAL_COMPID:
            result = self._device_command(command, p, now)
            return self._answered(now, command, result, GIMBAL_COMPID)
        if command == CMD_REQUEST_MESSAGE:
            self._send(self.manager_information(now) if int(p[0]) == GIMBAL_MANAGER_INFORMATION
                       else self.manager_status(now), MANAGER_COMPID)
            return self._answered(now, command, ACCEPTED, MANAGER_COMPID)
        if command == CMD_DO_GIMBAL_MANAGER_CONFIGURE:
            return self._answered(now, command, self._configure(p, source), MANAGER_COMPID)
        if not self._in_control(source):  # DO_GIMBAL_MANAGER_PITCHYAW
            return self._answered(now, command, DENIED, MANAGER_COMPID)
        flags = int(p[4]) if _num(p[4]) is not None else 0
        self._aim(AxisTarget(_num(p[0]), _num(p[2])), AxisTarget(_num(p[1]), _num(p[3])), flags)
        return self._answered(now, command, ACCEPTED, MANAGER_COMPID)

    def _answered(self, now: float, command: int, result: int, compid: int) -> tuple[int, int]:
        self.commands.append((now, command, result))
        return result, compid

    def _device_command(self, command: int, p: list[float], now: float) -> int:
        if command != CMD_REQUEST_MESSAGE:
            return UNSUPPORTED
        msgid = _num(p[0])
        if msgid == GIMBAL_DEVICE_INFORMATION:
            msg = self.device_information(now)
        elif msgid == GIMBAL_DEVICE_ATTITUDE_STATUS:
            msg = self.device_attitude_status(now)
        else:
            return UNSUPPORTED  # GIMBAL_MANAGER_INFORMATION asked of the device: it is no manager
        self._send(msg, GIMBAL_COMPID)
        return ACCEPTED

    def _configure(self, p: list[float], source: tuple[int, int]) -> int:
        """Who controls the gimbal: per pair, >= 0 that component, -1 unchanged, -2 the sender, -3 release
        (when the sender holds it)."""
        device = _num(p[6]) if len(p) > 6 else None
        if device not in (None, 0, GIMBAL_COMPID):
            return DENIED
        for slot, (sys_v, comp_v) in (("primary", (p[0], p[1])), ("secondary", (p[2], p[3]))):
            sys_v = _num(sys_v)
            if sys_v is None or sys_v == -1:
                continue
            if sys_v == -2:
                setattr(self, slot, source)
            elif sys_v == -3:
                if getattr(self, slot) == source:
                    setattr(self, slot, (0, 0))
            elif sys_v >= 0:
                setattr(self, slot, (int(sys_v), int(_num(comp_v) or 0)))
        return ACCEPTED

    def _in_control(self, source: tuple[int, int]) -> bool:
        return source in (self.primary, self.secondary) and source != (0, 0)

    def _aim(self, pitch: AxisTarget, yaw: AxisTarget, flags: int) -> None:
        self.flags = (flags & 0xFFFF) | FLAG_ROLL_LOCK | FLAG_PITCH_LOCK
        self.device.set_target(pitch if (pitch.angle_deg, pitch.rate_deg_s) != (None, None) else None,
                               yaw if (yaw.angle_deg, yaw.rate_deg_s) != (None, None) else None,
                               yaw_in_earth_frame(flags))

    # -- streamed setpoints ---------------------------------------------------------------------
    def handle_message(self, m, now: float) -> None:
        """GIMBAL_MANAGER_SET_ATTITUDE / _SET_PITCHYAW from the component in control; others are ignored."""
        if self.silent or not self._in_control((m.get_srcSystem(), m.get_srcComponent())):
            return
        if m.gimbal_device_id not in (0, GIMBAL_COMPID):
            return
        t = m.get_type()
        self.commands.append((now, m.get_msgId(), -1))
        deg = lambda x: None if _num(x) is None else math.degrees(x)  # noqa: E731
        if t == "GIMBAL_MANAGER_SET_PITCHYAW":
            self._aim(AxisTarget(deg(m.pitch), deg(m.pitch_rate)), AxisTarget(deg(m.yaw), deg(m.yaw_rate)), m.flags)
            return
        q = list(m.q)
        pitch = yaw = None
        if all(_num(v) is not None for v in q):
            pitch, yaw = quat_to_pitch_yaw_deg(q)
        self._aim(AxisTarget(pitch, deg(m.angular_velocity_y)), AxisTarget(yaw, deg(m.angular_velocity_z)), m.flags)

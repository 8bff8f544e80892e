# Over 400 lines: the vehicle loop ties every part of the simulated PX4 to the one UDP link and the fixed step, as PX4's modules meet on uORB; each handler is short.
"""The vehicle loop: one thread, one UDP link, fixed-step physics.

It ties the parts together the way PX4's modules talk: MAVLink in ->
commander / parameters / mission transfer; commander -> velocity demand ->
physics; state -> telemetry streams out. Physics runs at a fixed 100 Hz on a
monotonic clock so behaviour does not depend on how busy the machine is
(late steps are caught up, up to a limit).
"""

from __future__ import annotations

import json
import math
import os
import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import Callable

from common.geodesy import GeoPoint
from contract.sim_control import SimControl, SimControlReply
from contract.sim_control import replies as control_replies
from contract.sim_control import requests as control_requests

from . import px4_modes as pm
from .commander import ACCEPTED, UNSUPPORTED, Commander
from .gimbal_manager import GIMBAL_COMPID, GimbalManager
from .mavlink_link import VEHICLE_COMPID, MavlinkLink
from .mission import MissionStore, MissionTransfer
from .params import HASH_CHECK_INDEX, HASH_CHECK_NAME, MAV_PARAM_TYPE_UINT32, ParamTable, uint_to_wire
from .physics import Physics
from .setpoints import Setpoint, decode_setpoint
from .telemetry import StreamScheduler, TelemetryBuilder

_REQUESTS, _REPLIES = control_requests(), control_replies()

PHYSICS_DT = 0.01
MAX_CATCHUP_STEPS = 20
PARAM_LIST_BURST = 20  # PARAM_VALUEs per loop turn while streaming the list
DEFAULT_HOME = (47.397743, 8.5455941, 489.3)


@dataclass
class VehicleConfig:
    """Everything the vehicle needs to start; all CLI flags map here."""

    home: tuple[float, float, float] = DEFAULT_HOME
    port: int = 14580  # our UDP port (PX4 SITL: 14580); 0 = any free port
    gcs_port: int = 14540  # where telemetry goes (MAVSDK udpin port)
    host: str = "127.0.0.1"
    seed: int = 0
    params: dict[str, float] = field(default_factory=dict)
    prearm_delay_s: float = 4.0  # PX4: PREARM_CHECK health comes ~4 s after start
    control_port: int | None = 0  # JSON control channel (0 = any free port, None = off)
    setpoint_log: str | None = None  # JSON lines per received setpoint/command
    rate_scale: float = 1.0  # multiplies every default stream rate (CPU knob)
    battery_drain_scale: float = 1.0
    speed_factor: float = 1.0  # simulated seconds per wall second (all timers and rates scale with it)
    wind: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # north, east, down m/s, gust sigma
    sysid: int = 1  # MAVLink system id (PX4's MAV_SYS_ID), for several vehicles side by side
    gimbal: bool = True  # a camera gimbal (protocol v2 manager + device, gimbal_manager.py); False: none announced


class SetpointLog:
    """JSON lines ``{t, mono, msg, mode, ...}``: what arrived when, as the vehicle saw it.

    ``mono`` is ``time.monotonic()`` (comparable across processes on this
    machine); ``sim_t`` is the vehicle's clock (differs only with a speed factor).
    Received SET_POSITION_TARGET_*/SET_ATTITUDE_TARGET/COMMAND_* lines have no
    ``dir`` and carry ``kt``, the kernel's receive timestamp (SO_TIMESTAMPNS)
    converted to the monotonic clock, where the OS provides it; the vehicle's
    own STATUSTEXTs (``dir: tx``) and mode changes
    (``msg: MODE_CHANGE``, ``dir: event``) are logged too, so loss-to-failsafe
    delays can be measured on one clock.
    """

    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1)

    def write(self, rec: dict) -> None:
        self.f.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.f.close()


class Vehicle:
    def __init__(self, cfg: VehicleConfig, clock: Callable[[], float] | None = None):
        self.cfg = cfg
        self.speed = max(1e-3, cfg.speed_factor)
        if clock is None:
            if self.speed == 1.0:
                clock = time.monotonic
            else:
                t0 = time.monotonic()
                clock = lambda: t0 + (time.monotonic() - t0) * self.speed  # noqa: E731
        self.clock = clock
        now = clock()
        self.boot_t = now
        self.params = ParamTable.px4_defaults({"MAV_SYS_ID": cfg.sysid, "SIH_LOC_LAT0": cfg.home[0],
                                               "SIH_LOC_LON0": cfg.home[1], "SIH_LOC_H0": cfg.home[2], **cfg.params})
        self.origin = GeoPoint(*cfg.home)
        self.physics = Physics(seed=cfg.seed)
        self.physics.battery_drain_scale = cfg.battery_drain_scale
        self.physics.set_wind(*cfg.wind)
        self.store = MissionStore()
        self.cmdr = Commander(self.params, self.physics, self.origin, self.store, now, cfg.prearm_delay_s)
        self.link = MavlinkLink(cfg.port, cfg.gcs_port, cfg.host, sysid=cfg.sysid)
        self.mav = self.link.mav
        self.telemetry = TelemetryBuilder(self.mav, self.cmdr, now)
        self.streams = StreamScheduler()
        if cfg.rate_scale != 1.0:
            for k in list(self.streams.rates_hz):
                if k not in (0, 245, 4):  # heartbeat-class timing stays PX4's
                    self.streams.rates_hz[k] *= cfg.rate_scale
        self.transfer = MissionTransfer(self.store, self.mav, self.link.send)
        self.transfer.on_upload_done = self.cmdr.missions.on_uploaded
        self.control: socket.socket | None = None
        if cfg.control_port is not None:
            self.control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.control.bind((cfg.host, cfg.control_port))
            self.control.setblocking(False)
        self.setpoint_log = SetpointLog(cfg.setpoint_log) if cfg.setpoint_log else None
        self.gimbal = GimbalManager(self.mav, cfg.sysid, now, self.send) if cfg.gimbal else None
        self.link_down = False
        self.last_error: str | None = None  # last exception a received message caused (counted in rx_errors)
        self.text_id = 0
        self.param_queue: list[int] = []
        self.param_peer = (0, 0)
        self.delayed: list[tuple[float, object]] = []  # (send_at, message)
        self.next_phys = now
        self.last_reached_repeat = 0.0
        self.logged_mode = str(self.cmdr.displayed_mode)
        self.cpu_t0 = time.process_time()
        self.wall_t0 = time.monotonic()

    @property
    def port(self) -> int:
        return self.link.port

    @property
    def control_port(self) -> int | None:
        return None if self.control is None else self.control.getsockname()[1]

    # ------------------------------------------------------------------ loop
    def run(self, should_stop: Callable[[], bool]) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.link.sock, selectors.EVENT_READ, "link")
        if self.control is not None:
            sel.register(self.control, selectors.EVENT_READ, "control")
        try:
            while not should_stop():
                self.spin_once()
                timeout = max(0.0, self.next_phys - self.clock()) / self.speed
                for key, _ in sel.select(timeout):
                    if key.data == "link":
                        self.receive(self.clock())
                    else:
                        self._control_receive()
        finally:
            sel.close()
            self.close()

    def spin_once(self) -> None:
        """Advance physics to now and send whatever is due."""
        now = self.clock()
        steps = 0
        while now >= self.next_phys and steps < MAX_CATCHUP_STEPS:
            t = self.next_phys
            demand = self.cmdr.demand(t)
            self.physics.step(PHYSICS_DT, demand)
            if self.gimbal is not None:
                s = self.physics.state
                self.gimbal.step(PHYSICS_DT, math.degrees(s.yaw), math.degrees(s.yaw_rate))
            self.cmdr.update(t)
            self.next_phys += PHYSICS_DT
            steps += 1
        if now - self.next_phys > 0.5:
            self.next_phys = now + PHYSICS_DT  # hopelessly late (suspended?): skip ahead
        self._note_mode_change()
        if steps:
            self.transfer.tick(now)
            self._flush_outbox(now)
            for msgid in self.streams.due(now):
                msg = self.telemetry.build(msgid, now)
                if msg is not None:
                    self.send(msg)
            if self.gimbal is not None:
                self.gimbal.stream(now)
            self._repeat_item_reached(now)
        self._send_param_burst()
        if self.delayed:
            keep = []
            for at, msg in self.delayed:
                if now >= at:
                    self.send(msg)
                else:
                    keep.append((at, msg))
            self.delayed = keep

    def _note_mode_change(self) -> None:
        if self.setpoint_log is not None and str(self.cmdr.displayed_mode) != self.logged_mode:
            self.logged_mode = str(self.cmdr.displayed_mode)
            self._log({"msg": "MODE_CHANGE", "dir": "event", "armed": self.cmdr.armed})

    def send(self, msg, compid: int = VEHICLE_COMPID) -> None:
        if not self.link_down:
            self.link.send(msg, compid)

    def close(self) -> None:
        self._note_mode_change()
        self.link.close()
        if self.control is not None:
            self.control.close()
        if self.setpoint_log is not None:
            self.setpoint_log.close()

    # ------------------------------------------------------------- outgoing
    def _flush_outbox(self, now: float) -> None:
        out = self.cmdr.out
        for sev, text in out.texts:
            self.send_statustext(sev, text)
        out.texts.clear()
        if out.home_changed:
            out.home_changed = False
            self.send(self.telemetry.home_position(now))
        for seq in out.item_reached:
            self.send(self.mav.mission_item_reached_encode(seq))
        out.item_reached.clear()
        if out.mission_current_changed:
            out.mission_current_changed = False
            self.send(self.telemetry.mission_current(now))

    def _repeat_item_reached(self, now: float) -> None:
        # PX4 repeats the last MISSION_ITEM_REACHED about once a second
        run = self.cmdr.mission
        if run.reached >= 0 and now - self.last_reached_repeat >= 1.0 and now - run.reached_t >= 0.05:
            self.last_reached_repeat = now
            self.send(self.mav.mission_item_reached_encode(run.reached))

    def send_statustext(self, severity: int, text: str) -> None:
        """PX4 appends a tab and splits > 50 chars into chunks sharing one id."""
        self._log({"msg": "STATUSTEXT", "dir": "tx", "severity": severity, "text": text})
        data = (text + "\t").encode("utf-8")
        chunks = [data[i:i + 50] for i in range(0, len(data), 50)] or [b""]
        tid = self.text_id
        self.text_id = (self.text_id + 1) & 0xFFFF
        for i, chunk in enumerate(chunks):
            self.send(self.mav.statustext_encode(severity, chunk, tid, i))

    # ------------------------------------------------------------- incoming
    def receive(self, now: float) -> None:
        msgs = self.link.receive()
        if self.link_down:
            return
        for m in msgs:
            try:
                self.handle(m, now)
            except Exception as exc:  # a bad message must never stop the vehicle
                self.link.stats.rx_errors += 1
                self.last_error = repr(exc)
        self._note_mode_change()

    def _for_us(self, m) -> bool:
        ts = getattr(m, "target_system", 0)
        tc = getattr(m, "target_component", 0)
        ours = (0, VEHICLE_COMPID, GIMBAL_COMPID) if self.gimbal is not None else (0, VEHICLE_COMPID)
        return ts in (0, self.cfg.sysid) and tc in ours

    def handle(self, m, now: float) -> None:
        t = m.get_type()
        if t == "HEARTBEAT":
            if m.type == 6:  # MAV_TYPE_GCS: feeds the data-link-loss check
                self.cmdr.on_gcs_heartbeat(now)
            return
        if t == "PING":
            if m.target_system == 0 and m.target_component == 0:
                self.send(self.mav.ping_encode(m.time_usec, m.seq, m.get_srcSystem(), m.get_srcComponent()))
            return
        if not self._for_us(m):
            return
        if t in ("SET_POSITION_TARGET_LOCAL_NED", "SET_POSITION_TARGET_GLOBAL_INT", "SET_ATTITUDE_TARGET"):
            self._handle_setpoint(m, t, now)
        elif t in ("GIMBAL_MANAGER_SET_ATTITUDE", "GIMBAL_MANAGER_SET_PITCHYAW"):
            if self.gimbal is not None:
                self._log({"msg": t, "flags": m.flags}, m)
                self.gimbal.handle_message(m, now)
        elif getattr(m, "target_component", 0) == GIMBAL_COMPID and t not in ("COMMAND_LONG", "COMMAND_INT"):
            return  # nothing else is for the gimbal device
        elif t in ("COMMAND_LONG", "COMMAND_INT"):
            self._handle_command(m, t, now)
        elif t in ("PARAM_REQUEST_READ", "PARAM_REQUEST_LIST", "PARAM_SET"):
            self._handle_param(m, t, now)
        elif t.startswith("MISSION_"):
            if t == "MISSION_SET_CURRENT":
                self.cmdr.missions.set_current(m.seq)
                self.send(self.telemetry.mission_current(now))
            else:
                self.transfer.handle(m, now)

    # -- commands ---------------------------------------------------------------
    def _handle_command(self, m, t: str, now: float) -> None:
        p = [m.param1, m.param2, m.param3, m.param4]
        if t == "COMMAND_LONG":
            p += [m.param5, m.param6, m.param7]
            frame, xyz = None, None
        else:
            p += [float(m.x), float(m.y), m.z]
            frame, xyz = m.frame, (m.x, m.y, m.z)
        self._log({"msg": t, "command": m.command}, m)
        cmd = m.command
        compid = VEHICLE_COMPID
        answer = None
        if self.gimbal is not None:
            answer = self.gimbal.handle_command(cmd, p, (m.get_srcSystem(), m.get_srcComponent()), m.target_component,
                                                now)
        if answer is not None:
            result, compid = answer
            if result < 0:
                return  # a silenced gimbal: no answer at all
        elif m.target_component not in (0, VEHICLE_COMPID):
            return  # for another component that is not there
        else:
            result = self._handle_system_command(cmd, p, now)
            if result is None:
                result = self.cmdr.handle_command(cmd, p, now, frame=frame, xyz=xyz)
        self._flush_outbox(now)
        self.send(self.mav.command_ack_encode(cmd, result, 0, 0, m.get_srcSystem(), m.get_srcComponent()), compid)

    def _handle_system_command(self, cmd: int, p: list[float], now: float) -> int | None:
        """Commands about the link rather than the flight; None = not one of these."""
        if cmd == 512:  # REQUEST_MESSAGE
            msgid = int(p[0]) if not math.isnan(p[0]) else -1
            msg = self.telemetry.build(msgid, now) if self.telemetry.can_build(msgid) else None
            if msg is None:
                return UNSUPPORTED if not self.telemetry.can_build(msgid) else ACCEPTED
            self.send(msg)
            return ACCEPTED
        if cmd == 520:  # REQUEST_AUTOPILOT_CAPABILITIES
            self.send(self.telemetry.autopilot_version(now))
            return ACCEPTED
        if cmd == 410:  # GET_HOME_POSITION
            self.send(self.telemetry.home_position(now))
            return ACCEPTED
        if cmd == 511:  # SET_MESSAGE_INTERVAL
            if math.isnan(p[0]) or math.isnan(p[1]):
                return UNSUPPORTED
            self.streams.set_interval(int(p[0]), p[1])
            return ACCEPTED
        return None

    # -- setpoints --------------------------------------------------------------
    def _handle_setpoint(self, m, t: str, now: float) -> None:
        mask = getattr(m, "type_mask", 0)
        self._log({"msg": t, "type_mask": mask, "frame": getattr(m, "coordinate_frame", None)}, m)
        sp = self._decode_setpoint(m, t, now)
        if sp is not None:
            self.cmdr.on_setpoint(sp)

    def _decode_setpoint(self, m, t: str, now: float) -> Setpoint | None:
        s = self.physics.state
        return decode_setpoint(m, t, now, tuple(s.pos), s.yaw, self.origin, self.cmdr._alt_to_d)

    def _log(self, rec: dict, received=None) -> None:
        if self.setpoint_log is None:
            return
        wall, mono = time.time(), time.monotonic()
        rec = {"t": wall, "mono": mono, **rec, "mode": str(self.cmdr.displayed_mode)}
        if self.speed != 1.0:
            rec["sim_t"] = self.clock()
        kt = getattr(received, "_kernel_rx_time", None)
        if kt is not None:
            rec["kt"] = kt - (wall - mono)  # kernel arrival time on the monotonic clock
        self.setpoint_log.write(rec)

    def _gimbal_truth(self) -> dict:
        """The camera's pointing (degrees): pitch from the horizon, yaw from north and from the nose; None without
        a gimbal (the camera looks along the nose at its mounting pitch)."""
        if self.gimbal is None:
            return {"gimbal_pitch_deg": None, "gimbal_yaw_deg": None, "gimbal_yaw_body_deg": None}
        return self.gimbal.truth()

    # -- parameters -------------------------------------------------------------
    def _param_value(self, index: int):
        if index == HASH_CHECK_INDEX:
            return self.mav.param_value_encode(HASH_CHECK_NAME.encode(), uint_to_wire(self.params.hash_check()),
                                               MAV_PARAM_TYPE_UINT32, len(self.params), HASH_CHECK_INDEX)
        p = self.params.by_index(index)
        return self.mav.param_value_encode(p.name.encode(), p.wire_value, p.type, len(self.params), index)

    def _handle_param(self, m, t: str, now: float) -> None:
        if t == "PARAM_REQUEST_LIST":
            self.param_queue = [HASH_CHECK_INDEX] + list(range(len(self.params)))
            return
        if t == "PARAM_REQUEST_READ":
            if m.param_index >= 0:
                if self.params.by_index(m.param_index) is not None:
                    self.send(self._param_value(m.param_index))
                return
            name = m.param_id
            if name in self.params:
                self.send(self._param_value(self.params.index(name)))
            return  # unknown names: PX4 stays silent
        name = m.param_id
        if name not in self.params:
            return
        changed = self.params.set_from_wire(name, m.param_value, m.param_type)
        msg = self._param_value(self.params.index(name))
        self.send(msg)
        if changed:
            self.delayed.append((now + 0.01, msg))

    def _send_param_burst(self) -> None:
        if not self.param_queue:
            return
        burst, self.param_queue = self.param_queue[:PARAM_LIST_BURST], self.param_queue[PARAM_LIST_BURST:]
        for i in burst:
            self.send(self._param_value(i))

    # -- control channel ----------------------------------------------------------
    def _control_receive(self) -> None:
        assert self.control is not None
        while True:
            try:
                data, addr = self.control.recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            try:
                result = self.control_command(_REQUESTS.unpack(data))
                reply = SimControlReply(True, result=result or {})
                frame = _REPLIES.pack(reply)
            except Exception as exc:
                frame = _REPLIES.pack(SimControlReply(False, repr(exc)[:2000]))
            try:
                self.control.sendto(frame, addr)
            except OSError:
                pass

    def control_command(self, req: SimControl) -> dict | None:
        """Test hooks: ground truth, fault injection (`contract.sim_control`, its arguments checked)."""
        cmd = req.cmd
        now = self.clock()
        if cmd == "truth":
            return {"truth": {**self.cmdr.truth(now), **self._gimbal_truth()}}
        if cmd == "stats":
            st = self.link.stats
            cpu = time.process_time() - self.cpu_t0
            return {"stats": {k: v for k, v in vars(st).items()}, "cpu_s": cpu, "wall_s": time.monotonic() - self.wall_t0,
                    "last_error": self.last_error, "link_down": self.link_down,
                    "streams_hz": {str(k): v for k, v in self.streams.rates_hz.items()}}
        if cmd == "battery":
            self.physics.set_battery(req.percent)
            return None
        if cmd == "battery_drain_scale":
            self.physics.battery_drain_scale = req.scale
            return None
        if cmd == "wind":
            self.physics.set_wind(req.n, req.e, req.d, req.gust)
            return None
        if cmd == "param":
            changed = self.params.set(req.name, req.value)
            return {"changed": changed, "value": self.params.get(req.name)}
        if cmd == "gps":
            self.cmdr.set_gps(req.fix, now)
            return None
        if cmd == "link":
            self.link_down = req.down
            return None
        if cmd == "gimbal":  # the gimbal stops answering and reporting (down), or comes back
            if self.gimbal is None:
                raise ValueError("this vehicle has no gimbal (started with --no-gimbal)")
            self.gimbal.silent = req.down
            return None
        if cmd == "statustext":
            self.send_statustext(req.severity, req.text)
            return None
        if cmd == "mode":  # a pilot's switch on the RC or a ground station's, not the companion's command
            modes = {"HOLD": pm.HOLD, "POSCTL": pm.POSCTL, "LAND": pm.LAND, "RTL": pm.RTL}
            self.cmdr._set_mode(modes[req.mode], now)
            return {"t": now}
        if cmd == "commands":  # every COMMAND_LONG/INT received: [[t, command id], ...]
            return {"commands": [list(c) for c in self.cmdr.commands],
                    "gimbal": [list(c) for c in self.gimbal.commands] if self.gimbal is not None else []}
        if cmd == "ping":
            return {"pid": os.getpid()}
        raise ValueError(f"unknown control command {cmd!r}")

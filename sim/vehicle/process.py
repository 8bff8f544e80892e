"""Run the vehicle as a child process and talk to its control channel.

Tests and other engineers use this instead of spawning `aerie sim vehicle`
by hand: it picks free ports, waits for the ready line, and offers ground
truth and fault injection over the JSON/UDP control channel.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from contract.sim_control import MAX_REPLY_BYTES, SimControl
from contract.sim_control import replies as control_replies
from contract.sim_control import requests as control_requests

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_ports(n: int, *, udp: bool = False, host: str = "127.0.0.1") -> list[int]:
    """`n` distinct ports that were free a moment ago: all are bound at once, then released.

    Picked one at a time (bind 0, read back, release) two picks may return the
    same port: that put two members of one simulated fleet on one MAVLink port.
    """
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
            socks.append(s)
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A UDP port that was free a moment ago."""
    return free_ports(1, udp=True, host=host)[0]


class SimVehicleProcess:
    """``python -m sim.vehicle.cli`` as a subprocess; see sim/vehicle/__init__.py."""

    def __init__(
        self,
        home: tuple[float, float] | tuple[float, float, float] = (47.397743, 8.5455941, 489.3),
        gcs_port: int | None = None,
        port: int = 0,
        seed: int = 0,
        params: dict[str, float] | None = None,
        prearm_delay_s: float = 1.0,
        setpoint_log: str | os.PathLike | None = None,
        extra_args: list[str] | None = None,
        python: str = sys.executable,
        ready_timeout_s: float = 20.0,
        sysid: int = 1,
        gimbal: bool = True,
    ):
        self.home = tuple(home)
        self.gcs_port = gcs_port if gcs_port is not None else free_udp_port()
        self.requested_port = port
        self.seed = seed
        self.params = dict(params or {})
        self.prearm_delay_s = prearm_delay_s
        self.setpoint_log = str(setpoint_log) if setpoint_log is not None else None
        self.extra_args = list(extra_args or [])
        self.python = python
        self.ready_timeout_s = ready_timeout_s
        self.sysid = sysid  # MAVLink system id (PX4's MAV_SYS_ID): distinct for every vehicle of a fleet
        self.gimbal = gimbal  # a camera gimbal announced over MAVLink gimbal protocol v2 (sim/vehicle/gimbal_manager.py)
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.control_port: int | None = None
        self._ctl: socket.socket | None = None

    @classmethod
    def for_flight_check(cls, **kw) -> "SimVehicleProcess":
        """PX4 defaults (no speed-ups), free ports, for `aerie flight-check --sim`."""
        kw.setdefault("prearm_delay_s", 1.0)
        return cls(**kw)

    @property
    def mavsdk_url(self) -> str:
        """What to pass to ``Mavsdk.add_any_connection``."""
        return f"udpin://127.0.0.1:{self.gcs_port}"

    def argv(self) -> list[str]:
        a = [self.python, "-m", "sim.vehicle.cli", "--home", ",".join(str(x) for x in self.home),
             "--gcs-port", str(self.gcs_port), "--port", str(self.requested_port), "--seed", str(self.seed),
             "--prearm-delay", str(self.prearm_delay_s), "--sysid", str(self.sysid)]
        for k, v in self.params.items():
            a += ["--param", f"{k}={v}"]
        if self.setpoint_log:
            a += ["--setpoint-log", self.setpoint_log]
        if not self.gimbal:
            a.append("--no-gimbal")
        return a + self.extra_args

    def start(self) -> "SimVehicleProcess":
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=None, cwd=str(REPO_ROOT), env=env,
                                     text=True)
        deadline = time.monotonic() + self.ready_timeout_s
        assert self.proc.stdout is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.kill()
                raise RuntimeError(f"sim vehicle did not become ready (rc={self.proc.returncode})")
            r, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.5))
            if not r:
                continue
            line = self.proc.stdout.readline()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("event") == "ready":
                self.port = msg["port"]
                self.control_port = msg["control_port"]
                return self

    # -- lifecycle ------------------------------------------------------------
    def stop(self, timeout_s: float = 5.0) -> int | None:
        """SIGTERM, wait, then SIGKILL if needed. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: the vehicle vanishes mid-flight, for link-loss tests."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self) -> None:
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> "SimVehicleProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- control channel --------------------------------------------------------
    def control(self, cmd: str, timeout_s: float = 2.0, **kw) -> dict:
        """Send one `contract.sim_control` command, return its result (raises on error or timeout)."""
        if self.control_port is None:
            raise RuntimeError("vehicle not started or control channel off")
        if self._ctl is None:
            self._ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._ctl.bind(("127.0.0.1", 0))
        self._ctl.settimeout(timeout_s)
        self._ctl.sendto(control_requests().pack(SimControl.of(cmd, **kw)), ("127.0.0.1", self.control_port))
        data, _ = self._ctl.recvfrom(MAX_REPLY_BYTES)
        reply = control_replies().unpack(data)
        if not reply.ok:
            raise RuntimeError(reply.error or "control command failed")
        return reply.result

    def truth(self) -> dict:
        """Ground truth: position, velocity, mode, armed, landed state, battery, wind, home."""
        return self.control("truth")["truth"]

    def stats(self) -> dict:
        """Link counters (rx_bad_data, rx_truncated, ...) and CPU seconds used."""
        return self.control("stats")

    def set_battery(self, percent: float) -> None:
        self.control("battery", percent=percent)

    def set_wind(self, north: float, east: float, down: float = 0.0, gust: float = 0.0) -> None:
        self.control("wind", n=north, e=east, d=down, gust=gust)

    def set_param(self, name: str, value: float) -> None:
        """Change a parameter behind MAVLink's back (no PARAM_VALUE is sent)."""
        self.control("param", name=name, value=value)

    def set_gps(self, fix: bool) -> None:
        """GPS fix lost/regained: health bits, GPS_RAW_INT, no global/local position, PX4's descend failsafe."""
        self.control("gps", fix=fix)

    def set_link_down(self, down: bool = True) -> None:
        """Silence the MAVLink link both ways without killing the process."""
        self.control("link", down=down)

    def set_gimbal_silent(self, silent: bool = True) -> None:
        """The gimbal (manager and device) stops answering and reporting, or comes back; the vehicle flies on."""
        self.control("gimbal", down=silent)


class SimVehicleThread:
    """The same vehicle in a background thread of this process (no subprocess).

    Cheaper to start than :class:`SimVehicleProcess` and handy for unit tests;
    it shares the GIL with the caller, so prefer the subprocess for timing
    measurements. ``truth()``/``control()`` call straight into the vehicle.
    """

    def __init__(self, **config):
        from .vehicle import VehicleConfig

        config.setdefault("port", 0)
        config.setdefault("gcs_port", free_udp_port())
        config.setdefault("prearm_delay_s", 1.0)
        config.setdefault("control_port", None)
        self.config = VehicleConfig(**config)
        self.vehicle = None
        self._stop = False
        self._thread = None

    @property
    def gcs_port(self) -> int:
        return self.config.gcs_port

    @property
    def port(self) -> int:
        return self.vehicle.port

    @property
    def mavsdk_url(self) -> str:
        return f"udpin://127.0.0.1:{self.config.gcs_port}"

    def start(self) -> "SimVehicleThread":
        import threading

        from .vehicle import Vehicle

        self.vehicle = Vehicle(self.config)
        self._stop = False
        self._thread = threading.Thread(target=self.vehicle.run, args=(lambda: self._stop,), name="sim-vehicle",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop = True
        if self._thread is not None:
            self._thread.join(5.0)

    def control(self, cmd: str, **kw) -> dict:
        req = control_requests().unpack(control_requests().pack(SimControl.of(cmd, **kw)))  # as the socket reads it
        return self.vehicle.control_command(req) or {}

    def truth(self) -> dict:
        return self.control("truth")["truth"]

    def __enter__(self) -> "SimVehicleThread":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

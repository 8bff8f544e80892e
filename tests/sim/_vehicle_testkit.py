"""Helpers for tests/sim: a raw MAVLink GCS socket and the PX4 trace reader.

The raw client checks wire-level details (exact ACK codes, PARAM_VALUE types,
mission frames) that MAVSDK hides; flights use the real MAVSDK.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import socket
import time
from pathlib import Path

import pytest
from pymavlink.dialects.v20 import development as mavlink2

def _trace_dir() -> Path:
    """The recorded PX4 session: $AERIE_PX4_TRACE_DIR, else ../shared beside the checkout."""
    env = os.environ.get("AERIE_PX4_TRACE_DIR")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[3] / "shared" / "px4-trace", Path("/work/shared/px4-trace")]
    return next((c for c in candidates if c.exists()), candidates[0])


TRACE_DIR = _trace_dir()
TRACE_FILE = TRACE_DIR / "px4_sih_session.jsonl.gz"
needs_trace = pytest.mark.skipif(not TRACE_FILE.exists(), reason="PX4 reference trace not present")
EVENTS_FILE = TRACE_DIR / "px4_sih_session_events.jsonl"

# Every wait in these tests is a deadline for a hung test, never a claim about speed: on a busy
# machine (two cores, other suites running) everything takes longer, so no wait gives up sooner
# than this. Timings belong in benchmarks (``aerie bench link``) and in the synthetic-clock
# commander tests (tests/sim/test_vehicle_commander.py).
MIN_WAIT_S = 30.0

# fast but PX4-shaped flight for tests (default behaviour stays PX4's)
FAST_PARAMS = {
    "MPC_TKO_SPEED": 3.0,
    "MPC_TKO_RAMP_T": 0.3,
    "MPC_LAND_SPEED": 2.5,
    "MPC_Z_V_AUTO_DN": 3.0,
    "MPC_LAND_ALT1": 4.0,
    "MPC_LAND_ALT2": 2.0,
    "MPC_LAND_CRWL": 2.5,
    "LNDMC_TRIG_TIME": 0.2,
    "MIS_TAKEOFF_ALT": 5.0,
}


@functools.lru_cache(maxsize=1)
def _all_trace_records() -> tuple[dict, ...]:
    """The whole decoded session, parsed once per test session (~3 s)."""
    with gzip.open(TRACE_FILE, "rt") as f:
        return tuple(r for r in map(json.loads, f) if r.get("dir") != "marker")


def load_trace(names: set[str] | None = None, direction: str | None = None) -> list[dict]:
    """Records of the PX4 session, optionally only some message names / one direction."""
    return [r for r in _all_trace_records()
            if (names is None or r["name"] in names) and (direction is None or r["dir"] == direction)]


def load_events() -> list[dict]:
    return [json.loads(l) for l in EVENTS_FILE.read_text().splitlines() if l.strip()]


class RawGcs:
    """A GCS socket on ``gcs_port`` speaking pymavlink, as sysid 245 / compid 190 like MAVSDK."""

    def __init__(self, gcs_port: int, vehicle_port: int):
        """``gcs_port`` 0 binds any free port: a second client the vehicle learns from its first message."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", gcs_port))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.2)
        self.vehicle = ("127.0.0.1", vehicle_port)
        self.mav = mavlink2.MAVLink(None, srcSystem=245, srcComponent=190)
        self.rx = mavlink2.MAVLink(None)
        self.rx.robust_parsing = True

    def close(self) -> None:
        self.sock.close()

    def send(self, msg) -> None:
        self.sock.sendto(msg.pack(self.mav), self.vehicle)
        self.mav.seq = (self.mav.seq + 1) % 256

    def send_raw(self, data: bytes) -> None:
        self.sock.sendto(data, self.vehicle)

    def recv_all(self, duration: float) -> list:
        out, end = [], time.monotonic() + duration
        while time.monotonic() < end:
            m = self._recv_one(end)
            if m is not None:
                out.append(m)
        return out

    def recv_until(self, done, timeout: float = 5.0) -> list:
        """Every message received until ``done(received_so_far)`` holds (deadline at least MIN_WAIT_S).

        For replies that must arrive: a fixed listening window would miss them on a busy machine."""
        out, end = [], time.monotonic() + max(timeout, MIN_WAIT_S)
        while not done(out):
            if time.monotonic() > end:
                raise TimeoutError(f"condition on received messages not met within {timeout} s: {[m.get_type() for m in out][-20:]}")
            m = self._recv_one(end)
            if m is not None:
                out.append(m)
        return out

    def _recv_one(self, deadline: float):
        try:
            self.sock.settimeout(max(0.001, min(0.2, deadline - time.monotonic())))
            data, _ = self.sock.recvfrom(65535)
        except (socket.timeout, BlockingIOError):
            return None
        msgs = self.rx.parse_buffer(data) or []
        for m in msgs:
            m._rx_time = time.monotonic()
            m._datagram = data
        return msgs[0] if msgs else None

    def wait(self, name: str, pred=lambda m: True, timeout: float = 5.0):
        end = time.monotonic() + max(timeout, MIN_WAIT_S)
        while time.monotonic() < end:
            m = self._recv_one(end)
            if m is not None and m.get_type() == name and pred(m):
                return m
        raise TimeoutError(f"no {name} within {timeout} s")

    def drain(self) -> None:
        self.sock.settimeout(0.0)
        try:
            while True:
                self.sock.recvfrom(65535)
        except (BlockingIOError, socket.timeout):
            pass

    def command_long(self, command: int, *params: float, timeout: float = 2.0):
        p = list(params) + [math.nan] * (7 - len(params))
        self.send(self.mav.command_long_encode(1, 1, command, 0, *p))
        return self.wait("COMMAND_ACK", lambda m: m.command == command, timeout)

    def param_read(self, name: str, timeout: float = 1.0):
        self.send(self.mav.param_request_read_encode(1, 1, name.encode(), -1))
        return self.wait("PARAM_VALUE", lambda m: m.param_id == name, timeout)


def phase_window(events: list[dict], first: str, last_exclusive: str) -> tuple[float, float]:
    """Start of phase ``first`` to start of phase ``last_exclusive`` in the events file."""
    starts = {e["phase"]: e["t"] for e in events if e["event"] == "phase"}
    return starts[first], starts[last_exclusive]


def trace_changes(events: list[dict], what: str, t0: float, t1: float) -> list[str]:
    """Values MAVSDK reported for ``what`` (landed_state, flight_mode...) between t0 and t1."""
    return [e["value"] for e in events if e["event"] == "telemetry_change" and e["what"] == what and t0 <= e["t"] < t1]


def dedup(seq: list) -> list:
    out = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


class MavsdkDrone:
    """The real MAVSDK (native binding) connected to a simulated vehicle, plus recorders."""

    def __init__(self):
        self.mavsdk = None
        self.system = None
        self.action = self.telemetry = self.offboard = self.mission = None
        self.landed_states: list[str] = []
        self.flight_modes: list[str] = []
        self.texts: list[str] = []
        self._tasks: list = []

    async def connect(self, url: str, timeout_s: float = 10.0) -> "MavsdkDrone":
        import asyncio

        from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
        from mavsdk.asyncio.plugins.action import ActionAsync
        from mavsdk.asyncio.plugins.mission import MissionAsync
        from mavsdk.asyncio.plugins.offboard import OffboardAsync
        from mavsdk.asyncio.plugins.telemetry import TelemetryAsync

        self.mavsdk = Mavsdk(Configuration.create_with_component_type(ComponentType.GROUND_STATION))
        await self.mavsdk.add_any_connection(url)
        self.system = await self.mavsdk.first_autopilot(timeout_s)
        assert self.system is not None, "no autopilot discovered"
        self.action = ActionAsync(self.system)
        self.telemetry = TelemetryAsync(self.system)
        self.offboard = OffboardAsync(self.system)
        self.mission = MissionAsync(self.system)
        self._tasks = [asyncio.ensure_future(self._record(self.telemetry.subscribe_landed_state(), self.landed_states)),
                       asyncio.ensure_future(self._record(self.telemetry.subscribe_flight_mode(), self.flight_modes)),
                       asyncio.ensure_future(self._record_texts())]
        return self

    @staticmethod
    async def _record(gen, out: list) -> None:
        async for v in gen:
            name = getattr(v, "name", str(v))
            if not out or out[-1] != name:
                out.append(name)

    async def _record_texts(self) -> None:
        async for st in self.telemetry.subscribe_status_text():
            self.texts.append(st.text)

    async def wait_healthy(self, timeout_s: float = 15.0) -> None:
        import asyncio

        async def _w():
            async for h in self.telemetry.subscribe_health():
                if h.is_armable and h.is_global_position_ok and h.is_home_position_ok and h.is_local_position_ok:
                    return

        await asyncio.wait_for(_w(), timeout_s)

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except BaseException:
                pass
        if self.mavsdk is not None:
            self.mavsdk.destroy()


async def wait_for(pred, timeout_s: float, what: str, period_s: float = 0.05):
    """Poll a sync or async predicate until it returns truthy; return that value.

    ``timeout_s`` is what the condition should take on a quiet machine; the deadline is at least
    ``MIN_WAIT_S`` so that a loaded machine does not fail the test."""
    import asyncio
    import inspect

    end = time.monotonic() + max(timeout_s, MIN_WAIT_S)
    while True:
        v = pred()
        if inspect.isawaitable(v):
            v = await v
        if v:
            return v
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(period_s)


def poll_until(pred, timeout_s: float, what: str, period_s: float = 0.02):
    """The blocking twin of :func:`wait_for`, for tests without an event loop."""
    end = time.monotonic() + max(timeout_s, MIN_WAIT_S)
    while not (v := pred()):
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(period_s)
    return v


def count(msgs: list, name: str) -> int:
    return sum(m.get_type() == name for m in msgs)


def payload_u32(m, offset: int) -> int:
    """A uint32 at ``offset`` of a received frame's payload (extension fields pymavlink skips)."""
    import struct

    raw = m._datagram
    plen = raw[1]
    payload = bytes(raw[10:10 + plen]).ljust(offset + 4, b"\0")  # MAVLink 2 trims trailing zeros
    return struct.unpack_from("<I", payload, offset)[0]

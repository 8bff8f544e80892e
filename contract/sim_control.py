"""The simulated vehicle's control socket: test hooks for ground truth and fault injection.

A test (``sim/vehicle/process.py``) sends one ``sim_control`` JSON datagram to
the vehicle's UDP control port (``sim/vehicle/vehicle.py``) and reads one
``sim_control_reply``. Each command names the arguments it takes
(:data:`COMMANDS`); a missing or out-of-range one is refused naming it, so a
typo in a fault injection fails the test that made it instead of injecting
nothing. The reply's ``result`` is the command's answer (the ground truth,
the link's counters, ...): a free-form map, since only tests read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader
from contract.wire import Channel, channel

MAX_REQUEST_BYTES = 65535        # one UDP datagram
MAX_REPLY_BYTES = 1 << 20
# Pilot switches a ground station or an RC can make (the companion's own commands go over MAVLink).
PILOT_MODES = ("HOLD", "POSCTL", "LAND", "RTL")
MAX_WIND_MPS = 100.0
MAX_PARAM_NAME_CHARS = 16        # MAVLink's param_id
MAX_STATUSTEXT_CHARS = 200

# command -> the arguments it needs
COMMANDS: dict[str, tuple[str, ...]] = {
    "truth": (), "stats": (), "commands": (), "ping": (),
    "battery": ("percent",), "battery_drain_scale": ("scale",), "wind": ("n", "e", "d", "gust"),
    "param": ("name", "value"), "gps": ("fix",), "link": ("down",), "statustext": ("severity", "text"),
    "mode": ("mode",), "gimbal": ("down",),
}


@dataclass(frozen=True)
class SimControl(Payload):
    """One command; the arguments it does not take stay None."""

    MSG_TYPE: ClassVar[str] = "sim_control"
    SCHEMA_VERSION: ClassVar[int] = 1

    cmd: str
    percent: float | None = None      # battery: state of charge, %
    scale: float | None = None        # battery_drain_scale: >1 drains faster
    n: float | None = None            # wind: north, east, down (m/s) and gust strength (m/s)
    e: float | None = None
    d: float | None = None
    gust: float | None = None
    name: str | None = None           # param: a PX4 parameter and its new value
    value: float | None = None
    fix: bool | None = None           # gps: fix present
    down: bool | None = None          # link: MAVLink silenced both ways; gimbal: the gimbal silenced
    severity: int | None = None       # statustext: MAVLink severity and text
    text: str | None = None
    mode: str | None = None           # mode: a pilot's switch

    @classmethod
    def of(cls, cmd: str, **args: Any) -> "SimControl":
        """From a caller's keywords; wind's components default to 0 as the socket always allowed."""
        if cmd == "wind":
            args = {"n": 0.0, "e": 0.0, "d": 0.0, "gust": 0.0, **args}
        known = {f.name for f in fields(cls)} - {"cmd"}
        unknown = sorted(set(args) - known)
        if unknown:
            raise TypeError(f"sim_control {cmd!r}: unknown argument(s) {unknown}")
        return cls(cmd, **args)

    def body(self) -> dict[str, Any]:
        return {"cmd": self.cmd, **{k: getattr(self, k) for k in COMMANDS.get(self.cmd, ())}}

    @classmethod
    def _from(cls, r: Reader) -> "SimControl":
        cmd = r.text("cmd")
        if cmd not in COMMANDS:
            raise r.fail("cmd", f"unknown command {cmd[:40]!r}; one of {sorted(COMMANDS)}", "out_of_range")
        read = {
            "percent": lambda: r.number("percent", lo=0.0, hi=100.0),
            "scale": lambda: r.number("scale", lo=0.0, hi=1e6),
            "n": lambda: r.number("n", lo=-MAX_WIND_MPS, hi=MAX_WIND_MPS),
            "e": lambda: r.number("e", lo=-MAX_WIND_MPS, hi=MAX_WIND_MPS),
            "d": lambda: r.number("d", lo=-MAX_WIND_MPS, hi=MAX_WIND_MPS),
            "gust": lambda: r.number("gust", lo=0.0, hi=MAX_WIND_MPS),
            "name": lambda: _bounded_text(r, "name", MAX_PARAM_NAME_CHARS),
            "value": lambda: r.number("value", lo=-1e9, hi=1e9),
            "fix": lambda: r.flag("fix"),
            "down": lambda: r.flag("down"),
            "severity": lambda: r.integer("severity", lo=0, hi=7),
            "text": lambda: _bounded_text(r, "text", MAX_STATUSTEXT_CHARS),
            "mode": lambda: _mode(r),
        }
        return cls(cmd, **{k: read[k]() for k in COMMANDS[cmd]})


def _bounded_text(r: Reader, key: str, most: int) -> str:
    value = r.text(key, non_empty=True)
    if len(value) > most:
        raise r.fail(key, f"longer than {most} characters", "out_of_range")
    return value


def _mode(r: Reader) -> str:
    mode = r.text("mode")
    if mode not in PILOT_MODES:
        raise r.fail("mode", f"{mode[:20]!r} is not a pilot's switch; one of {list(PILOT_MODES)}", "out_of_range")
    return mode


@dataclass(frozen=True)
class SimControlReply(Payload):
    MSG_TYPE: ClassVar[str] = "sim_control_reply"
    SCHEMA_VERSION: ClassVar[int] = 1

    ok: bool
    error: str = ""
    result: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"ok": self.ok, "error": self.error, "result": self.result}

    @classmethod
    def _from(cls, r: Reader) -> "SimControlReply":
        result = r.mapping("result") or {}
        bad = _non_finite(result)
        if bad is not None:
            raise r.fail(f"result.{bad}", "must be a finite number", "out_of_range")
        return cls(r.flag("ok"), r.text("error", ""), result)


def _non_finite(value: Any, path: str = "") -> str | None:
    """The path of the first non-finite number in a result tree (JSON carries none; a Python peer might)."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(value)"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{path}.{k}" if path else str(k))
        if found is not None:
            return found
    return None


def requests() -> Channel[Any]:
    return channel("sim_control", (SimControl,), MAX_REQUEST_BYTES, json=True)


def replies() -> Channel[Any]:
    return channel("sim_control", (SimControlReply,), MAX_REPLY_BYTES, json=True)

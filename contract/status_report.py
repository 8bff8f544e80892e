"""The supervisor's status socket: its live health checks and whether its vehicle is armed.

``aerie status`` (``onboard/status.py``) connects to the supervisor's Unix
socket (``onboard/supervisor/status_server.py``) and reads one JSON line, a
:mod:`contract.wire` frame of type ``supervisor_status``, then the supervisor
closes. JSON, not msgpack, so a person on the vehicle can read it with
``socat``; the decoder refuses NaN and Infinity all the same.

``vehicle.armed`` is what ``make flash`` decides on before it restarts the
service: a typed flag (None when the supervisor cannot tell yet), never a
word to be read out of the human detail next to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader
from contract.wire import Channel, channel

# One report is a handful of short lines; a bigger answer is not the supervisor's.
MAX_REPORT_BYTES = 1 << 20
MAX_CHECKS = 64
MAX_NAME_CHARS = 64
MAX_DETAIL_CHARS = 4000


@dataclass(frozen=True)
class CheckResult:
    """One live check: its name, whether it passed, and why (for a person)."""

    name: str
    ok: bool
    detail: str

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}

    @classmethod
    def read(cls, r: Reader) -> "CheckResult":
        name = r.text("name", non_empty=True)
        if len(name) > MAX_NAME_CHARS:
            raise r.fail("name", f"longer than {MAX_NAME_CHARS} characters", "out_of_range")
        return cls(name, r.flag("ok"), r.text("detail", "")[:MAX_DETAIL_CHARS])


@dataclass(frozen=True)
class VehicleLive:
    """What the autopilot reports now: armed and in the air (None: not known yet), and a line for a person."""

    armed: bool | None
    in_air: bool | None = None
    detail: str = ""

    def body(self) -> dict[str, Any]:
        return {"armed": self.armed, "in_air": self.in_air, "detail": self.detail}

    @classmethod
    def read(cls, r: Reader) -> "VehicleLive":
        return cls(r.opt_flag("armed"), r.opt_flag("in_air"), r.text("detail", "")[:MAX_DETAIL_CHARS])


@dataclass(frozen=True)
class StatusReport(Payload):
    MSG_TYPE: ClassVar[str] = "supervisor_status"
    SCHEMA_VERSION: ClassVar[int] = 1

    checks: tuple[CheckResult, ...] = ()
    vehicle: VehicleLive | None = None   # None: this supervisor does not report its vehicle

    def body(self) -> dict[str, Any]:
        return {"checks": [c.body() for c in self.checks],
                "vehicle": None if self.vehicle is None else self.vehicle.body()}

    @classmethod
    def _from(cls, r: Reader) -> "StatusReport":
        if len(r.items("checks")) > MAX_CHECKS:
            raise r.fail("checks", f"more than {MAX_CHECKS} checks", "out_of_range")
        return cls(r.each("checks", CheckResult.read), r.nested("vehicle", VehicleLive.read))

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)


def reports(max_bytes: int = MAX_REPORT_BYTES) -> Channel[Any]:
    return channel("status", (StatusReport,), max_bytes, json=True)

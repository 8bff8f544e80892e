"""The supervisor's local health socket, read by `aerie status` (see `onboard/status.py`).

One `contract.status_report` line per connection, then close: cheap enough to
serve from the event loop, and `make flash` can ask it right after a restart.
Each check is computed when asked, so the answer is never stale; so is the
vehicle's typed ``armed`` flag, which `make flash` reads before it restarts
the service.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Callable

from contract.status_report import CheckResult, StatusReport, VehicleLive, reports
from onboard.status import STATUS_SOCKET_NAME

# name -> () -> (ok, detail)
CheckFn = Callable[[], tuple[bool, str]]


def vehicle_live(bridge: Any) -> VehicleLive:
    """What the autopilot reports now (``bridge`` None: not connected yet, nothing known)."""
    if bridge is None:
        return VehicleLive(None, None, "unknown: not connected yet")
    s = bridge.state
    where = f"in air at {s.rel_alt_m:.1f} m" if s.in_air else "on ground"
    return VehicleLive(bool(s.armed), bool(s.in_air),
                       f"{'armed' if s.armed else 'disarmed'}, {where}, mode {s.flight_mode}")


class StatusServer:
    def __init__(self, data_dir: str | Path, checks: dict[str, CheckFn],
                 vehicle: Callable[[], VehicleLive] | None = None) -> None:
        self.path = Path(data_dir).expanduser() / STATUS_SOCKET_NAME
        self.checks = checks
        self.vehicle = vehicle
        self._server: asyncio.base_events.Server | None = None

    def report(self) -> StatusReport:
        out: list[CheckResult] = []
        for name, fn in self.checks.items():
            try:
                ok, detail = fn()
            except Exception as exc:  # a check that raises is a failed check, not a dead server
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            out.append(CheckResult(name, bool(ok), str(detail)))
        vehicle = None
        if self.vehicle is not None:
            try:
                vehicle = self.vehicle()
            except Exception as exc:  # noqa: BLE001 - not known is an answer; a dead socket is none
                vehicle = VehicleLive(None, None, f"unknown: {type(exc).__name__}: {exc}")
        return StatusReport(tuple(out), vehicle)

    async def start(self) -> "StatusServer":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()  # a socket file left by a killed supervisor
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        os.chmod(self.path, 0o660)
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(reports().pack(self.report()) + b"\n")
            await writer.drain()
        finally:
            writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

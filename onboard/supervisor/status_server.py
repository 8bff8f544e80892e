"""The supervisor's local health socket, read by `aerie status` (see `onboard/status.py`).

One JSON object per connection, newline-terminated, then close: cheap enough
to serve from the event loop, and `make flash` can ask it right after a
restart. Each check is computed when asked, so the answer is never stale.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Callable

from onboard.status import STATUS_SOCKET_NAME

# name -> () -> (ok, detail)
CheckFn = Callable[[], tuple[bool, str]]


class StatusServer:
    def __init__(self, data_dir: str | Path, checks: dict[str, CheckFn]) -> None:
        self.path = Path(data_dir).expanduser() / STATUS_SOCKET_NAME
        self.checks = checks
        self._server: asyncio.base_events.Server | None = None

    def report(self) -> dict[str, dict[str, object]]:
        out: dict[str, dict[str, object]] = {}
        for name, fn in self.checks.items():
            try:
                ok, detail = fn()
            except Exception as exc:  # a check that raises is a failed check, not a dead server
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            out[name] = {"ok": bool(ok), "detail": str(detail)}
        return out

    async def start(self) -> "StatusServer":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()  # a socket file left by a killed supervisor
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        os.chmod(self.path, 0o660)
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write((json.dumps(self.report()) + "\n").encode())
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

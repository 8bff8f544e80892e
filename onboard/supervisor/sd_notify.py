"""systemd's notify protocol, without a dependency: READY=1 once started, WATCHDOG=1 while alive.

The unit (deploy/aerie.service.in) is ``Type=notify`` with ``WatchdogSec``: systemd
restarts a supervisor whose event loop stops feeding the watchdog, which is
exactly the hang the supervisor cannot detect in itself. Outside systemd
(no ``NOTIFY_SOCKET``) every call is a no-op.
"""

from __future__ import annotations

import os
import socket
from typing import Mapping


def notify(state: str, env: Mapping[str, str] | None = None) -> bool:
    """Send `state` (e.g. "READY=1") to systemd; False when not run by systemd or not delivered."""
    addr = (env if env is not None else os.environ).get("NOTIFY_SOCKET", "")
    if not addr:
        return False
    if addr.startswith("@"):  # abstract namespace
        addr = "\0" + addr[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        # Never block the event loop on a reader that is not reading: a notification that
        # does not fit is dropped (the next one follows within half a watchdog period).
        s.setblocking(False)
        try:
            s.connect(addr)
            s.send(state.encode("utf-8"))
        except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
            return False
    return True


def watchdog_period_s(env: Mapping[str, str] | None = None) -> float | None:
    """How often to send WATCHDOG=1: half of systemd's WatchdogSec, None when no watchdog is set."""
    usec = (env if env is not None else os.environ).get("WATCHDOG_USEC", "")
    try:
        return int(usec) / 2e6 if usec and int(usec) > 0 else None
    except ValueError:
        return None

"""Connecting to an autopilot through MAVSDK's native binding, with deadlines.

The old gRPC MAVSDK-Python waited forever for a vehicle that never came;
here every wait has a timeout that raises an error naming the URL and what
was missing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from firmware_bridge.datagram_gate import DatagramGate, parse_udpin
from firmware_bridge.errors import BridgeError

log = logging.getLogger(__name__)


class ConnectionTimeout(BridgeError):
    """No autopilot HEARTBEAT arrived on the connection in time."""


class HealthTimeout(BridgeError):
    """The autopilot answered but never reported a usable position and home."""


class ConnectionFailed(BridgeError):
    """MAVSDK could not open the connection URL (bad URL, port in use...)."""


@dataclass
class Link:
    """A live MAVSDK instance and the autopilot system found on it."""

    mavsdk: Any
    system: Any
    sysid: int
    url: str
    gate: DatagramGate | None = None

    def close(self) -> None:
        self.mavsdk.destroy()
        if self.gate is not None:
            self.gate.stop()


_mavsdk_log = logging.getLogger("mavsdk")


def _route_mavsdk_log(level: Any, message: str, file: str | None, line: int) -> bool:
    """MAVSDK's own log lines go to our logger (debug) instead of raw stdout."""
    _mavsdk_log.debug("%s", message, extra={"fields": {"mavsdk_level": getattr(level, "name", str(level))}})
    return True  # suppress MAVSDK's default printing


def _open_gate(url: str) -> DatagramGate | None:
    where = parse_udpin(url)
    if where is None:
        return None
    try:
        return DatagramGate(*where).start()
    except OSError as exc:
        raise ConnectionFailed(f"cannot open MAVLink connection {url!r}: {exc}") from exc


async def open_link(url: str, timeout_s: float, gate: bool = True) -> Link:
    """Connect to the first autopilot on ``url``; ``gate`` puts a :class:`DatagramGate` before a ``udpin`` URL."""
    from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
    from mavsdk.logging import log_subscribe

    log_subscribe(_route_mavsdk_log)

    datagram_gate = _open_gate(url) if gate else None
    config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
    mavsdk = Mavsdk(config)

    def give_up() -> None:
        mavsdk.destroy()
        if datagram_gate is not None:
            datagram_gate.stop()

    try:
        await mavsdk.add_any_connection(datagram_gate.inner_url if datagram_gate else url)
    except Exception as exc:
        give_up()
        raise ConnectionFailed(f"cannot open MAVLink connection {url!r}: {exc}") from exc
    system = await mavsdk.first_autopilot(timeout_s=timeout_s)
    if system is None:
        give_up()
        raise ConnectionTimeout(
            f"no autopilot heartbeat on {url} within {timeout_s:.1f} s "
            "(is PX4 or `aerie sim vehicle` running and sending to this port?)"
        )
    sysid = await system.get_system_id()
    log.info("autopilot %d found on %s", sysid, url, extra={"fields": {"event": "connected", "sysid": sysid, "url": url}})
    return Link(mavsdk=mavsdk, system=system, sysid=sysid, url=url, gate=datagram_gate)

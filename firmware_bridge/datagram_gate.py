"""A UDP relay in front of MAVSDK that lets through only whole MAVLink datagrams.

MAVSDK's parser keeps a half-read frame across datagrams, so truncated
frames sent at the autopilot port swallow the autopilot's real ones (issue
19.7, measured: junk at 200 datagrams/s hid 4 of 10 HEARTBEATs and raised a
false ``link_lost``). MAVSDK offers no hook between its socket and its
parser, so the gate owns the public ``udpin`` address itself: a datagram that
is not whole, CRC-valid frames (:mod:`firmware_bridge.mavlink_frames`) is
counted and dropped, the rest goes on to MAVSDK listening on loopback only.
MAVSDK's own datagrams go back to the address each system id last sent from,
as MAVSDK's ``udpin`` does itself.

It runs on its own thread so that a busy event loop never delays telemetry,
and nothing a datagram holds can end that thread.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time
from dataclasses import dataclass

from firmware_bridge.mavlink_frames import first_sysid, whole_frames

log = logging.getLogger(__name__)

MAX_DATAGRAM = 65535
DROP_LOG_EVERY_S = 10.0


@dataclass
class GateCounters:
    passed: int = 0
    dropped: int = 0
    returned: int = 0


class DatagramGate:
    """Listens on ``(host, port)``; MAVSDK connects to :attr:`inner_url` instead."""

    def __init__(self, host: str, port: int) -> None:
        self._outer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._inner = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._outer.bind((host, port))
            self._inner.bind(("127.0.0.1", 0))
            self._mavsdk_port = _free_loopback_port()
        except OSError:
            self._close_sockets()
            raise
        self._outer.setblocking(False)
        self._inner.setblocking(False)
        self.counters = GateCounters()
        self._remotes: dict[int, tuple[str, int]] = {}  # sysid -> address it last sent from
        self._stop = threading.Event()
        self._last_drop_log = 0.0
        self._thread = threading.Thread(target=self._run, name="mavlink-gate", daemon=True)

    @property
    def inner_url(self) -> str:
        """Where MAVSDK listens: loopback only, reached by nothing but the gate."""
        return f"udpin://127.0.0.1:{self._mavsdk_port}"

    def start(self) -> "DatagramGate":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        self._close_sockets()

    def _close_sockets(self) -> None:
        self._outer.close()
        self._inner.close()

    def _run(self) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(self._outer, selectors.EVENT_READ, self._from_outside)
            sel.register(self._inner, selectors.EVENT_READ, self._from_mavsdk)
            while not self._stop.is_set():
                for key, _ in sel.select(0.25):
                    self._drain(key.fileobj, key.data)

    def _drain(self, sock: socket.socket, handle) -> None:
        while True:
            try:
                data, addr = sock.recvfrom(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. ICMP port unreachable reported on the next read
                log.debug("mavlink gate: receive error %s", exc)
                return
            try:
                handle(data, addr)
            except Exception:  # nothing a datagram holds may end the gate
                log.exception("mavlink gate: datagram from %s not handled", addr)

    def _from_outside(self, data: bytes, addr: tuple[str, int]) -> None:
        if not whole_frames(data):
            self.counters.dropped += 1
            self._log_drop(addr, len(data))
            return
        self.counters.passed += 1
        self._remotes[first_sysid(data)] = addr
        self._send(self._inner, data, ("127.0.0.1", self._mavsdk_port))

    def _from_mavsdk(self, data: bytes, addr: tuple[str, int]) -> None:
        if addr != ("127.0.0.1", self._mavsdk_port):
            return  # only MAVSDK may speak through the gate
        for remote in set(self._remotes.values()):
            self._send(self._outer, data, remote)
            self.counters.returned += 1

    @staticmethod
    def _send(sock: socket.socket, data: bytes, addr: tuple[str, int]) -> None:
        try:
            sock.sendto(data, addr)
        except OSError as exc:  # a full buffer or an unreachable peer loses this datagram, as UDP would
            log.debug("mavlink gate: send to %s failed: %s", addr, exc)

    def _log_drop(self, addr: tuple[str, int], size: int) -> None:
        now = time.monotonic()
        if now - self._last_drop_log >= DROP_LOG_EVERY_S:
            self._last_drop_log = now
            log.warning("mavlink gate: dropped a %d-byte datagram from %s:%d that is not whole MAVLink frames "
                        "(%d dropped so far)", size, addr[0], addr[1], self.counters.dropped,
                        extra={"fields": {"event": "mavlink_junk", "from": f"{addr[0]}:{addr[1]}",
                                          "dropped": self.counters.dropped}})


def _free_loopback_port() -> int:
    """A loopback UDP port that was free a moment ago, for MAVSDK to bind."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_udpin(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``udpin://host:port`` URL, else ``None`` (other links are not gated)."""
    prefix = "udpin://"
    if not url.startswith(prefix):
        return None
    host, sep, port = url[len(prefix):].rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)

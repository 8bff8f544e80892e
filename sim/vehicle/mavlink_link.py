"""The vehicle's UDP MAVLink endpoint, shaped like PX4 SITL's.

PX4 binds its own port (14580) and sends to the GCS port (14540) on
127.0.0.1 from boot, before anyone listens; it also answers whoever talked to
it last. Input is untrusted: each datagram is parsed on its own, and garbage,
bad CRCs and truncated frames are counted and dropped, never raised.
"""

from __future__ import annotations

import socket
import struct
import sys
from dataclasses import dataclass, field

from pymavlink.dialects.v20 import development as mavlink2

VEHICLE_SYSID = 1
VEHICLE_COMPID = 1
# Linux SO_TIMESTAMPNS / SCM_TIMESTAMPNS (not exported by Python's socket module)
SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@ll")


@dataclass
class LinkStats:
    rx_datagrams: int = 0
    rx_messages: int = 0
    rx_bad_data: int = 0  # bytes that were not a frame, CRC failures, unknown ids
    rx_truncated: int = 0  # datagrams that ended inside a frame
    rx_errors: int = 0  # anything else the decoder raised
    tx_messages: int = 0
    tx_bytes: int = 0
    tx_errors: int = 0
    rx_by_name: dict[str, int] = field(default_factory=dict)


class MavlinkLink:
    """Bind ``port`` on ``bind_host``; send to ``gcs`` until a peer speaks."""

    def __init__(self, port: int = 14580, gcs_port: int = 14540, host: str = "127.0.0.1",
                 sysid: int = VEHICLE_SYSID):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind((host, port))
        self.sock.setblocking(False)
        self.kernel_timestamps = False
        if sys.platform.startswith("linux"):
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                self.kernel_timestamps = True
            except OSError:
                pass
        self.port: int = self.sock.getsockname()[1]
        self.gcs_addr: tuple[str, int] = (host, gcs_port)
        self.peer: tuple[str, int] | None = None
        self.stats = LinkStats()
        self.sysid = sysid
        self._tx = mavlink2.MAVLink(None, srcSystem=sysid, srcComponent=VEHICLE_COMPID)
        self._tx.robust_parsing = True
        self._rx = self._new_parser()
        self.mav = self._tx  # message factory: link.mav.heartbeat_encode(...)
        self._components: dict[int, mavlink2.MAVLink] = {}  # other components of this system (a gimbal device)

    @staticmethod
    def _new_parser() -> mavlink2.MAVLink:
        rx = mavlink2.MAVLink(None)
        rx.robust_parsing = True
        return rx

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()

    # -- sending ----------------------------------------------------------------
    def send(self, msg, compid: int = VEHICLE_COMPID) -> None:
        """Send ``msg`` as component ``compid`` of this system (each component numbers its own frames)."""
        packer = self._tx if compid == VEHICLE_COMPID else self._packer(compid)
        try:
            buf = msg.pack(packer)
        except Exception:
            self.stats.tx_errors += 1
            return
        packer.seq = (packer.seq + 1) % 256
        dest = self.gcs_addr
        try:
            self.sock.sendto(buf, dest)
            if self.peer is not None and self.peer != dest:
                self.sock.sendto(buf, self.peer)
        except OSError:
            # ECONNREFUSED from a previous datagram, a full buffer: UDP drops it
            self.stats.tx_errors += 1
            return
        self.stats.tx_messages += 1
        self.stats.tx_bytes += len(buf)

    def _packer(self, compid: int) -> mavlink2.MAVLink:
        packer = self._components.get(compid)
        if packer is None:
            packer = self._components[compid] = mavlink2.MAVLink(None, srcSystem=self.sysid, srcComponent=compid)
        return packer

    # -- receiving --------------------------------------------------------------
    def receive(self, max_datagrams: int = 256) -> list:
        """Drain pending datagrams; return the well-formed messages."""
        out = []
        for _ in range(max_datagrams):
            try:
                data, ancdata, _flags, addr = self.sock.recvmsg(65535, 64)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.stats.rx_errors += 1
                continue
            self.stats.rx_datagrams += 1
            kt = None  # kernel receive time (CLOCK_REALTIME s): setpoint timing without our loop's latency
            for level, ctype, cdata in ancdata:
                if level == socket.SOL_SOCKET and ctype == SO_TIMESTAMPNS and len(cdata) >= _TIMESPEC.size:
                    sec, nsec = _TIMESPEC.unpack_from(cdata)
                    kt = sec + nsec * 1e-9
            msgs = self._parse_datagram(data)
            for m in msgs:
                m._kernel_rx_time = kt
            if msgs and addr != self.gcs_addr:
                self.peer = addr
            out.extend(msgs)
        return out

    def _parse_datagram(self, data: bytes) -> list:
        rx = self._rx
        msgs = []
        try:
            m = rx.parse_char(data)
            while m is not None:
                if isinstance(m, mavlink2.MAVLink_bad_data) or m.get_type() == "BAD_DATA":
                    self.stats.rx_bad_data += 1
                else:
                    msgs.append(m)
                    self.stats.rx_messages += 1
                    name = m.get_type()
                    self.stats.rx_by_name[name] = self.stats.rx_by_name.get(name, 0) + 1
                m = rx.parse_char(b"")
        except Exception:
            self.stats.rx_errors += 1
            self._rx = self._new_parser()
            return msgs
        if rx.buf_len() > 0:
            # a datagram carries whole frames; leftover bytes are a truncated frame
            self.stats.rx_truncated += 1
            self._rx = self._new_parser()
        return msgs

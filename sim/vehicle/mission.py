"""Mission storage and the MAVLink mission transfer protocol (PX4 flavour).

Upload: MISSION_COUNT -> one MISSION_REQUEST_INT per item -> MISSION_ACK
ACCEPTED (PX4 first tries a legacy MISSION_REQUEST, MAVSDK NACKs it; we go
straight to the INT form the trace ends up using). Download returns global
waypoints in the *_INT frames, as PX4 does (frame 3 comes back as 6).
Missing items are re-requested, like PX4, so a lost datagram does not stall.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field

from .mavlink_ext import mission_ack, mission_count

MAV_MISSION_TYPE_MISSION = 0
MAV_MISSION_ACCEPTED = 0
MAV_MISSION_ERROR = 1
MAV_MISSION_UNSUPPORTED_FRAME = 2
MAV_MISSION_NO_SPACE = 4
MAV_MISSION_INVALID_SEQUENCE = 13
MAV_MISSION_DENIED = 14

FRAME_TO_INT = {0: 5, 3: 6, 10: 11}
MAX_ITEMS = 2000
RETRY_S = 0.25
MAX_RETRIES = 10


@dataclass
class MissionItem:
    seq: int
    frame: int
    command: int
    current: int
    autocontinue: int
    param1: float
    param2: float
    param3: float
    param4: float
    x: int  # lat * 1e7 (or local x * 1e4 for local frames)
    y: int
    z: float
    mission_type: int = 0

    @classmethod
    def from_msg(cls, m) -> "MissionItem":
        if m.get_type() == "MISSION_ITEM":  # legacy float form
            x, y = int(round(m.x * 1e7)), int(round(m.y * 1e7))
        else:
            x, y = int(m.x), int(m.y)
        return cls(m.seq, m.frame, m.command, m.current, m.autocontinue, m.param1, m.param2, m.param3, m.param4, x, y, m.z,
                   getattr(m, "mission_type", 0))

    @property
    def lat(self) -> float:
        return self.x * 1e-7

    @property
    def lon(self) -> float:
        return self.y * 1e-7


def opaque_id(items: list[MissionItem]) -> int:
    """A content hash that changes with every different upload (PX4 uses a CRC too)."""
    crc = 0
    for it in items:
        crc = zlib.crc32(struct.pack("<HHB4fiif", it.command, it.frame, it.autocontinue, it.param1, it.param2, it.param3,
                                     it.param4, it.x, it.y, it.z), crc)
    return crc or 1


@dataclass
class MissionStore:
    """Items per mission type; ``version`` bumps on every accepted upload."""

    items: dict[int, list[MissionItem]] = field(default_factory=lambda: {0: [], 1: [], 2: []})
    ids: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0, 2: 0})
    version: int = 0

    def replace(self, mission_type: int, items: list[MissionItem]) -> None:
        self.items[mission_type] = items
        self.ids[mission_type] = opaque_id(items) if items else 0
        self.version += 1

    def mission(self) -> list[MissionItem]:
        return self.items[MAV_MISSION_TYPE_MISSION]


@dataclass
class _Upload:
    peer: tuple[int, int]
    mission_type: int
    count: int
    items: list[MissionItem]
    last_request_t: float
    retries: int = 0


class MissionTransfer:
    """Runs the upload/download handshakes; ``send`` takes an encoded message."""

    def __init__(self, store: MissionStore, mav, send):
        self.store = store
        self.mav = mav
        self.send = send
        self.upload: _Upload | None = None
        self.on_upload_done = None  # callable(mission_type) -> None

    def _request(self, up: _Upload, now: float) -> None:
        seq = len(up.items)
        self.send(self.mav.mission_request_int_encode(up.peer[0], up.peer[1], seq, up.mission_type))
        up.last_request_t = now

    def handle(self, m, now: float) -> None:
        t = m.get_type()
        peer = (m.get_srcSystem(), m.get_srcComponent())
        mtype = getattr(m, "mission_type", 0)
        if t == "MISSION_COUNT":
            if mtype not in self.store.items:
                self.send(self.mav.mission_ack_encode(*peer, MAV_MISSION_ERROR, mtype))
                return
            if m.count > MAX_ITEMS:
                self.send(self.mav.mission_ack_encode(*peer, MAV_MISSION_NO_SPACE, mtype))
                return
            if m.count == 0:
                self.upload = None
                self._finish(peer, mtype, [])
                return
            self.upload = _Upload(peer, mtype, m.count, [], now)
            self._request(self.upload, now)
        elif t in ("MISSION_ITEM_INT", "MISSION_ITEM"):
            up = self.upload
            if up is None or mtype != up.mission_type:
                return
            if m.seq != len(up.items):
                if m.seq < len(up.items):
                    return  # a duplicate of something we have
                self._request(up, now)  # a gap: ask again for the one we need
                return
            up.items.append(MissionItem.from_msg(m))
            up.retries = 0
            if len(up.items) < up.count:
                self._request(up, now)
            else:
                self.upload = None
                self._finish(up.peer, up.mission_type, up.items)
        elif t == "MISSION_REQUEST_LIST":
            items = self.store.items.get(mtype, [])
            self.send(mission_count(self.mav, *peer, len(items), mtype, self.store.ids.get(mtype, 0)))
        elif t in ("MISSION_REQUEST_INT", "MISSION_REQUEST"):
            items = self.store.items.get(mtype, [])
            if 0 <= m.seq < len(items):
                it = items[m.seq]
                frame = FRAME_TO_INT.get(it.frame, it.frame)
                self.send(self.mav.mission_item_int_encode(*peer, it.seq, frame, it.command, it.current, it.autocontinue,
                                                           it.param1, it.param2, it.param3, it.param4, it.x, it.y, it.z, mtype))
            else:
                self.send(self.mav.mission_ack_encode(*peer, MAV_MISSION_INVALID_SEQUENCE, mtype))
        elif t == "MISSION_CLEAR_ALL":
            mt = mtype if mtype != 255 else None
            for k in list(self.store.items):
                if mt is None or k == mt:
                    self.store.replace(k, [])
            self.send(self.mav.mission_ack_encode(*peer, MAV_MISSION_ACCEPTED, mtype))
            if self.on_upload_done:
                self.on_upload_done(mtype)
        elif t == "MISSION_ACK":
            if self.upload is not None and mtype == self.upload.mission_type and m.type != MAV_MISSION_ACCEPTED:
                # MAVSDK NACKs requests it does not like; a cancel ends the upload
                if m.type != 3:
                    self.upload = None

    def tick(self, now: float) -> None:
        up = self.upload
        if up is None or now - up.last_request_t < RETRY_S:
            return
        up.retries += 1
        if up.retries > MAX_RETRIES:
            self.send(self.mav.mission_ack_encode(*up.peer, MAV_MISSION_ERROR, up.mission_type))
            self.upload = None
            return
        self._request(up, now)

    def _finish(self, peer: tuple[int, int], mtype: int, items: list[MissionItem]) -> None:
        for i, it in enumerate(items):
            it.seq = i
            if any(isinstance(v, float) and math.isinf(v) for v in (it.param1, it.param2, it.param3, it.param4)):
                self.send(self.mav.mission_ack_encode(*peer, MAV_MISSION_ERROR, mtype))
                return
        self.store.replace(mtype, items)
        self.send(mission_ack(self.mav, *peer, MAV_MISSION_ACCEPTED, mtype, self.store.ids[mtype]))
        if self.on_upload_done:
            self.on_upload_done(mtype)

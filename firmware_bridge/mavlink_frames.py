"""Whether a UDP datagram is nothing but whole, CRC-valid MAVLink frames.

MAVSDK's parser (MAVLink's C ``mavlink_parse_char``) keeps its state across
datagrams: a datagram that ends inside a frame — ``0xFD`` and a length byte
of 255 followed by a few bytes — leaves the parser waiting for the rest, and
the autopilot's next datagram is eaten as that frame's payload and thrown
away with a bad CRC. A stream of such junk swallowed enough HEARTBEATs for a
false ``link_lost`` (issue 19.7). A datagram that passes this check leaves
the parser idle at its end, so nothing can be carried into the next one.

A frame of a message id that pymavlink's ``all`` dialect does not know
(PX4 sends some: EVENT, CURRENT_EVENT_SEQUENCE, LINK_NODE_STATUS...) cannot
have its CRC checked here, so only its framing is: it passes unless its last
byte is ``0xFD``. That is the one byte that matters, because when MAVSDK's
CRC check fails the C parser starts a new frame if the failing byte is a
start byte, and would then swallow the next datagram after all.
"""

from __future__ import annotations

from pymavlink.dialects.v20 import all as _dialect
from pymavlink.generator.mavcrc import x25crc

STX_V1 = 0xFE
STX_V2 = 0xFD
IFLAG_SIGNED = 0x01
SIGNATURE_LEN = 13
_CRC_EXTRA: dict[int, int] = {msgid: cls.crc_extra for msgid, cls in _dialect.mavlink_map.items()}


def frame_end(data: bytes, start: int) -> int | None:
    """End offset of the valid frame beginning at ``start``, or ``None`` if there is none."""
    n = len(data)
    if start >= n:
        return None
    stx = data[start]
    if stx == STX_V2:
        header = 10
        if start + header > n:
            return None
        length, incompat = data[start + 1], data[start + 2]
        if incompat & ~IFLAG_SIGNED:
            return None  # a flag this MAVLink does not know: the C parser drops the frame and rescans
        msgid = int.from_bytes(data[start + 7:start + 10], "little")
        end = start + header + length + 2 + (SIGNATURE_LEN if incompat & IFLAG_SIGNED else 0)
    elif stx == STX_V1:
        header = 6
        if start + header > n:
            return None
        length, msgid = data[start + 1], data[start + 5]
        end = start + header + length + 2
    else:
        return None
    if end > n:
        return None
    crc_extra = _CRC_EXTRA.get(msgid)
    if crc_extra is None:  # framing only; see the module's docstring
        return None if data[end - 1] == STX_V2 else end
    crc_at = start + header + length
    crc = x25crc(data[start + 1:crc_at])
    crc.accumulate(bytes((crc_extra,)))
    if crc.crc != int.from_bytes(data[crc_at:crc_at + 2], "little"):
        return None
    return end


def whole_frames(data: bytes) -> bool:
    """True when ``data`` is one or more valid MAVLink frames back to back, and nothing else."""
    pos = 0
    while pos < len(data):
        end = frame_end(data, pos)
        if end is None:
            return False
        pos = end
    return pos > 0


def first_sysid(data: bytes) -> int:
    """System id of the first frame of a datagram that passed :func:`whole_frames`."""
    return data[5] if data[0] == STX_V2 else data[3]

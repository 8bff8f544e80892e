"""Extension fields PX4 sends that pymavlink's bundled dialect does not know yet.

PX4 builds from a newer development.xml: MISSION_ACK/MISSION_COUNT carry an
``opaque_id`` and MISSION_CURRENT a ``mission_id`` (the trace shows both).
MAVLink 2 extensions are appended after the base payload and do not change the
CRC seed, so we pack the base message and append the extension bytes.
"""

from __future__ import annotations

import struct


def with_extension(msg, fmt: str, *values):
    """Return ``msg`` whose pack() appends ``struct.pack('<'+fmt, *values)``."""
    ext = struct.pack("<" + fmt, *values)

    def pack(mav, force_mavlink1: bool = False) -> bytes:
        base = msg.unpacker.pack(*(getattr(msg, n) for n in msg.ordered_fieldnames))
        return msg._pack(mav, msg.crc_extra, base + ext, force_mavlink1=force_mavlink1)

    msg.pack = pack
    msg.extension_values = values
    return msg


def mission_ack(mav, target_system: int, target_component: int, result: int, mission_type: int, opaque_id: int = 0):
    return with_extension(mav.mission_ack_encode(target_system, target_component, result, mission_type), "I",
                          opaque_id & 0xFFFFFFFF)


def mission_count(mav, target_system: int, target_component: int, count: int, mission_type: int, opaque_id: int = 0):
    return with_extension(mav.mission_count_encode(target_system, target_component, count, mission_type), "I",
                          opaque_id & 0xFFFFFFFF)


def mission_current(mav, seq: int, total: int, mission_state: int, mission_mode: int, mission_id: int,
                    fence_id: int = 0, rally_points_id: int = 0):
    return with_extension(mav.mission_current_encode(seq, total, mission_state, mission_mode), "III",
                          mission_id & 0xFFFFFFFF, fence_id & 0xFFFFFFFF, rally_points_id & 0xFFFFFFFF)

"""The datagram check of the MAVLink gate, on frames packed by pymavlink."""

from pymavlink.dialects.v20 import common as mavlink2

from firmware_bridge.datagram_gate import parse_udpin
from firmware_bridge.mavlink_frames import first_sysid, whole_frames


def _mav(sysid: int = 1) -> mavlink2.MAVLink:
    return mavlink2.MAVLink(None, srcSystem=sysid, srcComponent=1)


def _heartbeat(mav: mavlink2.MAVLink, v1: bool = False) -> bytes:
    return mav.heartbeat_encode(2, 12, 157, 0, 4).pack(mav, force_mavlink1=v1)


def test_whole_frames_pass_and_name_their_system():
    mav = _mav(42)
    hb = _heartbeat(mav)
    two = hb + mav.attitude_encode(1, 0.1, 0.2, 0.3, 0, 0, 0).pack(mav)
    assert whole_frames(hb) and whole_frames(two) and whole_frames(_heartbeat(mav, v1=True))
    assert first_sysid(hb) == 42 and first_sysid(_heartbeat(mav, v1=True)) == 42


def test_signed_frame_passes():
    mav = _mav()
    mav.signing.secret_key = bytes(32)
    mav.signing.sign_outgoing = True
    mav.signing.link_id = 0
    mav.signing.timestamp = 1
    signed = _heartbeat(mav)
    assert signed[2] & 0x01 and whole_frames(signed)


def test_truncated_trailing_bad_crc_and_unknown_are_refused():
    hb = _heartbeat(_mav())
    assert not whole_frames(b"")
    assert not whole_frames(b"\xfd")
    assert not whole_frames(b"\xfd\xff\x00\x00\x01")  # promises 255 bytes
    assert not any(whole_frames(hb[:n]) for n in range(1, len(hb)))
    assert not whole_frames(hb + b"\xfd\x09")  # a whole frame, then the start of another
    assert not whole_frames(b"junk" + hb)
    bad = bytearray(hb)
    bad[-1] ^= 0xFF
    assert not whole_frames(bytes(bad))
    flags = bytearray(hb)
    flags[2] = 0x02  # an incompatibility flag MAVLink does not define
    assert not whole_frames(bytes(flags))


def test_unknown_message_ids_pass_on_framing_unless_they_end_in_a_start_byte():
    hb = _heartbeat(_mav())
    unknown = bytearray(hb)
    unknown[7:10] = (0xFFFFFF).to_bytes(3, "little")  # no dialect defines it: its CRC cannot be checked
    unknown[-1] = 0x00
    assert whole_frames(bytes(unknown)) and not whole_frames(bytes(unknown[:-1]))
    unknown[-1] = 0xFD  # MAVSDK's failing CRC check on this byte would start a frame that eats the next datagram
    assert not whole_frames(bytes(unknown))


def test_only_udpin_urls_are_gated():
    assert parse_udpin("udpin://0.0.0.0:14540") == ("0.0.0.0", 14540)
    assert parse_udpin("udpout://10.0.0.2:14540") is None
    assert parse_udpin("serial:///dev/ttyTHS1:921600") is None
    assert parse_udpin("udpin://:14540") is None
    assert parse_udpin("udpin://127.0.0.1:99999") is None

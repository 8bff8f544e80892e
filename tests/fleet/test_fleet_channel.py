"""The fleet channel on real ZeroMQ sockets: members hear each other, hostile frames are refused, the thread lives.

Pass/fail waits on events set by what the channel delivers; timeouts are only a
hang guard. Ports are picked free per test.
"""

from __future__ import annotations

import math
import socket
import threading
from pathlib import Path

import msgpack
import pytest
import zmq

from contract.bounded_socket import bounded_socket
from contract.curve_keys import generate_keypair
from contract.fleet_frame import pack, unpack
from contract.fleet_report import FleetReport
from contract.payloads.base import PayloadError
from firmware_bridge.fleet_picture import TrafficReport
from onboard.fleet.channel import FleetChannel, position_from_state
from onboard.fleet.settings import FleetChannelConfig, FleetPeer

HANG_GUARD_S = 30.0
HERE = TrafficReport(1, 60.17, 24.94, 40.0, 1.0, -2.0, 0.5, 0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Inbox:
    """A channel's ``deliver``: keeps every batch and wakes a waiter when ``want(reports)`` holds."""

    def __init__(self, want=lambda reports: len(reports) >= 1, fail_first: int = 0) -> None:
        self.reports: list = []
        self.want = want
        self.done = threading.Event()
        self.fail_first = fail_first
        self.lock = threading.Lock()

    def __call__(self, batch):
        if self.fail_first > 0:
            self.fail_first -= 1
            raise RuntimeError("the bridge fell over")
        with self.lock:
            self.reports.extend(batch)
            if self.want(self.reports):
                self.done.set()
        return ()


def report(seq: int, **over) -> dict:
    d = {"type": "fleet_report", **FleetReport(7, seq, 60.17, 24.94, 40.0, 1.0, 0.0, 0.0, 0.0).encode()}
    d.update(over)
    return d


# -- the wire format, no sockets --------------------------------------------------------------------

@pytest.mark.parametrize("frame, reason", [
    (b"\xc1\xc1 not msgpack", "malformed"),
    (msgpack.packb([1, 2, 3]), "unknown_type"),
    (msgpack.packb({"v": 2, "type": "state", "vehicle_id": "x"}), "unknown_type"),
    (msgpack.packb(report(1, v=2)), "wrong_version"),
    (msgpack.packb(report(1, lat=math.nan)), "out_of_range"),
    (msgpack.packb(report(1, vn_m_s=math.inf)), "out_of_range"),
    (msgpack.packb(report(1, lat=300.0)), "out_of_range"),
    (msgpack.packb(report(1, member_id=True)), "bad_field"),
    (msgpack.packb(report(1, member_id=256)), "out_of_range"),
    (msgpack.packb(report(0)), "out_of_range"),
    (msgpack.packb(report(1, age_s=-1.0)), "out_of_range"),
    (msgpack.packb({k: v for k, v in report(1).items() if k != "alt_amsl_m"}), "missing_field"),
    (msgpack.packb(report(1, pad="x" * 2000)), "oversized"),
])
def test_unpack_refuses_what_it_cannot_trust(frame, reason):
    with pytest.raises(PayloadError) as err:
        unpack(frame, max_bytes=1024)
    assert err.value.reason == reason


def test_a_report_round_trips_and_pack_refuses_what_no_member_would_read():
    r = FleetReport(3, 9, 60.1, 24.9, 35.5, -1.5, 2.0, 0.25, 0.12)
    assert unpack(pack(r), max_bytes=1024) == r
    with pytest.raises(PayloadError):
        pack(FleetReport(3, 10, 60.1, 24.9, 35.5, 150.0, 0.0, 0.0, 0.0))  # faster than the wire allows


def test_own_position_is_none_while_any_part_is_unknown():
    class S:
        lat, lon, alt_amsl_m, vn_m_s, ve_m_s, vd_m_s, last_update_t = 60.0, 24.0, 30.0, 0.0, 0.0, 0.0, 100.0

    assert position_from_state(S(), 7, now=100.25) == TrafficReport(7, 60.0, 24.0, 30.0, 0.0, 0.0, 0.0, 0.25)
    s = S()
    s.lat = math.nan
    assert position_from_state(s, 7, now=100.25) is None
    s = S()
    s.last_update_t = math.nan  # never updated: no age, no report
    assert position_from_state(s, 7, now=100.25) is None


# -- real sockets --------------------------------------------------------------------------------------

def _keys(tmp: Path, names: list[str]) -> dict[str, tuple[Path, Path]]:
    return {n: generate_keypair(tmp / "keys", n) for n in names}


def _authorized(tmp: Path, owner: str, keys: dict, admit: list[str]) -> Path:
    d = tmp / f"auth_{owner}"
    d.mkdir()
    for n in admit:
        (d / keys[n][0].name).write_bytes(keys[n][0].read_bytes())
    return d


def test_two_members_hear_each_other_over_curve_and_an_unknown_key_hears_nothing(tmp_path):
    keys = _keys(tmp_path, ["a", "b", "intruder"])
    port_a, port_b = free_port(), free_port()
    ep_a, ep_b = f"tcp://127.0.0.1:{port_a}", f"tcp://127.0.0.1:{port_b}"

    def cfg(me: str, pub: str, peer_ep: str, peer: str, admit: list[str]) -> FleetChannelConfig:
        return FleetChannelConfig(pub_endpoint=pub, peers=(FleetPeer(peer_ep, str(keys[peer][0])),), curve=True,
                                  report_rate_hz=20.0, secret_key=str(keys[me][1]),
                                  authorized_keys_dir=str(_authorized(tmp_path, me, keys, admit)))

    there = TrafficReport(2, 60.171, 24.941, 52.0, 0.0, 3.0, -0.5, 0.0)
    got_a = Inbox(lambda rs: sum(r.member_id == 2 for r in rs) >= 3)
    got_b = Inbox(lambda rs: sum(r.member_id == 1 for r in rs) >= 3)
    got_x = Inbox()
    a = FleetChannel(cfg("a", ep_a, ep_b, "b", ["b"]), 1, lambda: HERE, got_a)
    b = FleetChannel(cfg("b", ep_b, ep_a, "a", ["a"]), 2, lambda: there, got_b)
    # Knows a's public key (it is public) and a's address, but a does not admit its key.
    x = FleetChannel(cfg("intruder", f"tcp://127.0.0.1:{free_port()}", ep_a, "a", []), 9, lambda: None, got_x)
    try:
        for ch in (x, a, b):
            ch.start()
        assert got_a.done.wait(HANG_GUARD_S) and got_b.done.wait(HANG_GUARD_S)
        heard_by_b = [r for r in got_b.reports if r.member_id == 1]
        assert (heard_by_b[0].lat, heard_by_b[0].lon, heard_by_b[0].alt_amsl_m) == (HERE.lat, HERE.lon, HERE.alt_amsl_m)
        assert (heard_by_b[0].vn_m_s, heard_by_b[0].ve_m_s, heard_by_b[0].vd_m_s) == (1.0, -2.0, 0.5)
        assert heard_by_b[0].age_s == pytest.approx(0.05)
        assert {r.member_id for r in got_a.reports} == {2}
        # By now a has sent to b at least three times; the intruder connected before b and heard none.
        assert got_x.reports == [] and x.counters().get("accepted", 0) == 0
        assert a.counters()["sent"] >= 3 and b.counters()["heard"] == {"1": len(heard_by_b)}
        assert x.counters()["not_sent_unknown_position"] >= 1  # no position: nothing sent, nothing made up
    finally:
        for ch in (a, b, x):
            ch.close()
    assert not any(ch.alive for ch in (a, b, x))


def _raw_pub(ctx: zmq.Context) -> tuple[zmq.Socket, str]:
    pub = bounded_socket(ctx, zmq.PUB, 1024)
    pub.bind("tcp://127.0.0.1:*")
    return pub, pub.getsockopt_string(zmq.LAST_ENDPOINT)


HOSTILE = [
    b"\xc1 garbage",
    msgpack.packb([1, 2]),
    msgpack.packb(report(1, type="state")),
    msgpack.packb(report(1, v=99)),
    msgpack.packb(report(1, lat=math.nan)),
    msgpack.packb(report(1, ve_m_s=-math.inf)),
    msgpack.packb(report(1, alt_amsl_m=1e9)),
    msgpack.packb(report(1, member_id="7")),
    msgpack.packb(report(1, member_id=8)),  # another member id on member 7's socket
    msgpack.packb(report(1, member_id=1)),  # claims to be the receiving vehicle itself
]


def test_hostile_frames_are_counted_and_refused_and_the_thread_lives_on(tmp_path):
    """Rounds of bad frames, each followed by one good report: only the good ones reach the bridge."""
    ctx = zmq.Context()
    pub, endpoint = _raw_pub(ctx)
    inbox = Inbox(lambda rs: len(rs) >= 3, fail_first=1)  # and the bridge's first call raises
    ch = FleetChannel(FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", peers=(FleetPeer(endpoint, member_id=7),),
                                         curve=False, report_rate_hz=5.0), 1, lambda: HERE, inbox)
    stop = threading.Event()

    def send() -> None:
        seq = 0
        while not stop.is_set():
            seq += 1
            pub.send(pack(FleetReport(7, seq, 60.17, 24.94, 40.0, 1.0, 0.0, 0.0, 0.0)))
            for frame in HOSTILE:
                pub.send(frame)
            stop.wait(0.02)

    sender = threading.Thread(target=send, daemon=True)
    try:
        ch.start()
        sender.start()
        assert inbox.done.wait(HANG_GUARD_S)
    finally:
        stop.set()
        sender.join(5)
        ch.close()
        pub.close(0)
        ctx.term()
    c = ch.counters()
    for reason in ("malformed", "unknown_type", "wrong_version", "out_of_range", "bad_field", "wrong_member", "own_id"):
        assert c.get(f"rejected_{reason}", 0) >= 1, (reason, c)
    assert c["deliver_failed"] == 1
    assert all(r.member_id == 7 and math.isfinite(r.lat) and r.alt_amsl_m == 40.0 for r in inbox.reports)
    assert [r.age_s for r in inbox.reports] == [0.0] * len(inbox.reports)


def test_an_oversized_frame_costs_the_connection_which_is_re_created(tmp_path):
    ctx = zmq.Context()
    pub, endpoint = _raw_pub(ctx)
    before = threading.Event()
    recovered = threading.Event()
    ch_ref: list[FleetChannel] = []

    def deliver(batch):
        if ch_ref and ch_ref[0].counters().get("peer_reopened", 0) >= 1:
            recovered.set()
        before.set()
        return ()

    ch = FleetChannel(FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", peers=(FleetPeer(endpoint),), curve=False,
                                         max_message_bytes=1024), 1, lambda: None, deliver)
    ch_ref.append(ch)
    stop = threading.Event()

    def send() -> None:
        seq, oversized_sent = 0, False
        while not stop.is_set():
            seq += 1
            pub.send(pack(FleetReport(7, seq, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0)))
            if before.is_set() and not oversized_sent:
                pub.send(msgpack.packb(report(seq, pad=b"\0" * 4096)))
                oversized_sent = True
            stop.wait(0.02)

    sender = threading.Thread(target=send, daemon=True)
    try:
        ch.start()
        sender.start()
        assert recovered.wait(HANG_GUARD_S)
    finally:
        stop.set()
        sender.join(5)
        ch.close()
        pub.close(0)
        ctx.term()
    c = ch.counters()
    assert c["peer_dropped"] >= 1 and c["peer_reopened"] >= 1
    assert c.get("rejected_oversized", 0) == 0  # ZeroMQ dropped it unread: it never reached the decoder


def test_a_channel_without_its_keys_does_not_start(tmp_path):
    """CurveZMQ on and the key files missing: start() says so instead of running unauthenticated."""
    (tmp_path / "auth").mkdir()
    ch = FleetChannel(FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", curve=True,
                                         secret_key=str(tmp_path / "missing.key_secret"),
                                         authorized_keys_dir=str(tmp_path / "auth")), 1, lambda: HERE, Inbox())
    with pytest.raises(RuntimeError, match="missing.key_secret"):
        ch.start()
    assert not ch.alive

"""Fault 36.12: memory-sync junk at ~900 requests/s wrote two log lines and journaled one telemetry event
per request; a stranger holding the wrong CURVE key at a fleet peer's address made "fleet peer socket
re-created" twice a second without end; `incoming_bundles/` was kept forever.

Real parts: the vehicle's memory-sync server on a real ZeroMQ ROUTER on loopback (its events go to a
listener, as the supervisor's go to the journal), attacked by a raw DEALER and by real bundles the
import refuses; a real fleet channel with CurveZMQ whose peer address is held by a stranger's CURVE
PUB with another key; real bundle files on disk. Clocks are synthetic and moved by the test.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path

import msgpack
import pytest
import zmq

from contract.memory_sync import BundleDelivery, SyncRefusal, answers, deliveries
from contract.bounded_socket import bounded_socket
from contract.curve_keys import generate_keypair, make_server
from common.typed_config import ConfigError, build
from onboard.fleet.channel import REOPEN_MIN_INTERVAL_S, FleetChannel
from onboard.fleet.settings import FleetChannelConfig, FleetPeer
from onboard.telemetry.memory_sync import REPORT_BURST, MemorySyncServer
from onboard.telemetry.settings import TelemetryConfig

HANG_GUARD_S = 60.0

ANSWERS, DELIVERIES = answers(1 << 20), deliveries(1 << 20)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _wait(pred, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S   # a hang guard, not a timing claim
    while not pred():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _refuse(path: Path) -> None:
    raise ValueError(f"{path.name}: not a lesson bundle")


def test_a_sync_flood_is_answered_every_time_but_logged_and_journaled_at_a_bounded_rate(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = TelemetryConfig(sync_endpoint="tcp://127.0.0.1:0", curve=False)
    clock = Clock()
    events: list[tuple[str, dict]] = []
    caplog.set_level(logging.INFO, logger="aerie.telemetry.sync")
    with MemorySyncServer(cfg, data_dir=tmp_path, import_fn=_refuse, on_result=lambda k, e: events.append((k, e)),
                          clock=clock) as server:
        ctx = zmq.Context()
        dealer = ctx.socket(zmq.DEALER)
        dealer.linger = 0
        try:
            dealer.connect(server.endpoint)
            junk = [[b"", b"\xc1 not msgpack"], [b"no delimiter"], [b"", msgpack.packb({"type": "hello", "v": 1})]]
            for i in range(900):
                dealer.send_multipart(junk[i % 3])
                assert dealer.poll(10_000), "a junk request was not answered"
                assert isinstance(ANSWERS.unpack(dealer.recv_multipart()[-1]), SyncRefusal)
            _wait(lambda: server.counters["junk"] == 900, "junk not counted")
            assert events == [], "junk was journaled"
            junk_lines = [r for r in caplog.records if "junk" in r.getMessage()]
            assert len(junk_lines) == REPORT_BURST

            # 50 real bundles the import refuses: every one answered, ten journaled, the rest counted.
            for i in range(50):
                data = msgpack.packb({"n": i})
                dealer.send_multipart([b"", DELIVERIES.pack(BundleDelivery.of(data))])
                assert dealer.poll(10_000)
                assert "not a lesson bundle" in ANSWERS.unpack(dealer.recv_multipart()[-1]).reason
            # (the server answers first, then counts and journals: wait for it to have done so)
            _wait(lambda: server.counters["held_back"] == 900 - REPORT_BURST + 50 - REPORT_BURST, "held back")
            assert [k for k, _ in events] == ["lessons_refused"] * REPORT_BURST
            # A second later the next one passes and says how many went unwritten before it.
            clock.t += 1.0
            data = b"one more"
            dealer.send_multipart([b"", DELIVERIES.pack(BundleDelivery.of(data))])
            assert dealer.poll(10_000)
            dealer.recv_multipart()
            _wait(lambda: len(events) == REPORT_BURST + 1, "the event after the wait was not journaled")
            assert events[-1][1]["held_back"] == 50 - REPORT_BURST
        finally:
            dealer.close(0)
            ctx.term()
        assert server.counters["received"] == 951 and server.counters["junk"] == 900


def test_received_bundles_are_bounded_by_count_and_age(tmp_path: Path) -> None:
    cfg = TelemetryConfig(sync_endpoint="tcp://127.0.0.1:0", curve=False, sync_incoming_max_files=5,
                          sync_incoming_max_age_s=3600.0)
    incoming = tmp_path / "incoming_bundles"
    (incoming / "refused").mkdir(parents=True)
    now = time.time()
    for i in range(8):   # left by earlier runs: three of them a day old
        for d in (incoming, incoming / "refused"):
            f = d / f"{i:064x}.msgpack"
            f.write_bytes(b"old")
            age = 86_400 if i < 3 else 100 - i
            os.utime(f, (now - age, now - age))
    with MemorySyncServer(cfg, data_dir=tmp_path, import_fn=_refuse) as server:
        assert server.counters["pruned"] == 6   # the day-old ones, in both directories
        assert len(list(incoming.glob("*.msgpack"))) == 5 and len(list((incoming / "refused").glob("*.msgpack"))) == 5
        ctx = zmq.Context()
        req = ctx.socket(zmq.REQ)
        req.linger = 0
        try:
            req.connect(server.endpoint)
            for i in range(4):
                data = msgpack.packb({"n": i})
                req.send(DELIVERIES.pack(BundleDelivery.of(data)))
                assert req.poll(10_000)
                req.recv()
        finally:
            req.close(0)
            ctx.term()
    refused = sorted(p.name for p in (incoming / "refused").glob("*.msgpack"))
    assert len(refused) == 5 and len(list(incoming.glob("*.msgpack"))) <= 5
    # the four just refused are among the kept, the oldest of the earlier ones went
    assert {f"{hashlib.sha256(msgpack.packb({'n': i})).hexdigest()}.msgpack" for i in range(4)} <= set(refused)


def test_a_stranger_with_the_wrong_key_costs_a_bounded_number_of_re_creations(tmp_path: Path) -> None:
    member = generate_keypair(tmp_path / "keys", "member")
    stranger = generate_keypair(tmp_path / "keys", "stranger")
    me = generate_keypair(tmp_path / "keys", "me")
    ctx = zmq.Context()
    pub = bounded_socket(ctx, zmq.PUB, 1024)
    make_server(pub, stranger[1])            # holds the member's address, but not its key
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    (tmp_path / "auth").mkdir()
    clock = Clock()
    cfg = FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", peers=(FleetPeer(endpoint, str(member[0])),),
                             curve=True, secret_key=str(me[1]), authorized_keys_dir=str(tmp_path / "auth"),
                             peer_reopen_max_interval_s=2.0)
    ch = FleetChannel(cfg, 1, lambda: None, lambda batch: (), clock=clock)

    def drops_beyond(n: int) -> None:
        _wait(lambda: ch.counters().get("peer_dropped", 0) >= n, "the stranger's handshake never failed")

    try:
        ch.start()
        drops_beyond(1)
        _wait(lambda: ch.counters().get("peer_reopened", 0) == 1, "the dropped socket was not re-created")
        reopened = []
        # the waits double: 0.5 (done), 1, 2, then the configured 2 s at most
        for step, expect in ((0.5, 1), (0.5, 2), (1.0, 2), (1.0, 3), (1.0, 3), (1.0, 4), (2.0, 5)):
            clock.t += step
            drops_beyond(ch.counters()["peer_dropped"] + 3)   # the stranger keeps failing meanwhile
            reopened.append(ch.counters()["peer_reopened"])
            assert reopened[-1] == expect, (reopened, ch.counters())
    finally:
        ch.close()
        pub.close(0)
        ctx.term()
    assert ch.counters().get("accepted", 0) == 0
    assert REOPEN_MIN_INTERVAL_S == 0.5


@pytest.mark.parametrize("key, bad", [("sync_incoming_max_files", 0), ("sync_incoming_max_age_s", float("nan")),
                                      ("sync_report_rate_hz", 0.0)])
def test_the_limits_are_range_checked_config(key: str, bad: float) -> None:
    with pytest.raises(ConfigError, match=key):
        build(TelemetryConfig, {key: bad})
    with pytest.raises(ConfigError, match="peer_reopen_max_interval_s"):
        build(FleetChannelConfig, {"peer_reopen_max_interval_s": float("inf")})

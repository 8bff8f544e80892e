"""Fault 36.6: one multipart request to `aerie world serve` killed its REP thread (EFSM); the process
stayed up and every later observe timed out, so the next mission failed.

The feed's socket is now a ROUTER speaking the REQ envelope, as memory sync's is since fault 19.5.
Real parts: `aerie world serve` as its own process on loopback, the attacker a raw DEALER and a REQ
sending multipart messages, the check the supervisor's own `WorldLink` client.
"""

from __future__ import annotations

import signal

import zmq

from contract.world_feed import REPLIES, REQUESTS, FeedError, ObserveRequest
from onboard.supervisor.world_link import WorldLink
from tests.faults.wirekit import Child

OBSERVE = REQUESTS.pack(ObserveRequest(60.1771790, 24.9485724, 0.0))
JUNK: list[list[bytes]] = [
    [b"", OBSERVE, OBSERVE],             # a REQ envelope with two request frames
    [b"one frame, no REQ delimiter"],
    [b"a", b"b", b"c", b"d", b"e"],
    [b"", b"", b""],
    [b""],
    [b"", b"\xc1 not msgpack"],
]


def test_multipart_junk_is_answered_and_the_feed_serves_on() -> None:
    child = Child(["-m", "aerie", "world", "serve", "--endpoint", "tcp://127.0.0.1:*"])
    try:
        endpoint = child.read_until("world feed on").split()[3]
        child.read_until("mission:")
        ctx = zmq.Context()
        try:
            dealer = ctx.socket(zmq.DEALER)
            dealer.linger = 0
            dealer.connect(endpoint)
            for parts in JUNK:
                dealer.send_multipart(parts)
                assert dealer.poll(10_000), f"no answer to {parts!r}"
                reply = REPLIES.unpack(dealer.recv_multipart()[-1])
                assert isinstance(reply, FeedError) and reply.error, reply
            dealer.close(0)
            # The shape the fault was found with: a REQ client sending one request in two frames.
            req = ctx.socket(zmq.REQ)
            req.linger = 0
            req.connect(endpoint)
            req.send_multipart([OBSERVE, OBSERVE])
            assert req.poll(10_000), "the feed did not answer the multipart request"
            assert REPLIES.unpack(req.recv()) == FeedError("expected one request frame, got 2")
            req.close(0)
        finally:
            ctx.destroy(0)
        link = WorldLink(endpoint, timeout_s=30.0)
        try:
            obs = link.observe(60.1771790, 24.9485724, 0.0)
            assert obs.moves, "the next real observe was not served"
            assert link.gazetteer()[0]
        finally:
            link.close()
        assert child.proc.poll() is None
        child.proc.send_signal(signal.SIGTERM)
        out, _ = child.proc.communicate(timeout=30)
        assert f"({len(JUNK) + 1} malformed requests)" in out
    finally:
        if child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait(10)

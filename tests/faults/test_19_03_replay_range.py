"""Issue 19.3: `{op: "replay", from: 1, to: 2^64-1}` killed the vehicle's replay server thread
(OverflowError in the journal) and no gap was ever filled again. Now every seq a request names
is range-checked (`contract.replay`), anything the journal still refuses is answered `replay_error`, and the thread
keeps serving: the next real replay works and the publisher keeps publishing."""

from __future__ import annotations

from pathlib import Path

import msgpack
import zmq

from contract.replay import ReplayError, ReplayReply, replies
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import vehicle_cfg


def test_replay_server_answers_errors_and_keeps_serving(tmp_path: Path) -> None:
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav-r") as pub:
        for i in range(5):
            pub.publish("state", {"i": i})
        assert pub.flush(10.0)
        ctx = zmq.Context()
        dealer = ctx.socket(zmq.DEALER)
        dealer.linger = 0
        dealer.connect(pub.replay_endpoint)

        def ask(body: dict):
            dealer.send(msgpack.packb(body))
            assert dealer.poll(30_000), f"no answer to {body}"
            return replies(1 << 20).unpack(dealer.recv())

        try:
            replay = {"type": "replay", "v": 1}
            hostile = [{**replay, "first": 1, "last": 2 ** 64 - 1}, {**replay, "first": 2 ** 63, "last": 1},
                       {**replay, "first": -1, "last": 3}, {"type": "ack", "v": 1, "upto": 2 ** 64 - 1, "stream": pub.stream_id},
                       {**replay, "first": 1.5, "last": float("nan")}, {**replay, "v": 2, "first": 1, "last": 5}]
            for body in hostile:
                assert isinstance(ask(body), ReplayError), body
            reply = ask({**replay, "first": 1, "last": 5})
            assert isinstance(reply, ReplayReply) and len(reply.frames) == 5
            assert reply.stream == pub.stream_id
            assert pub.replay_counters["bad_request"] == len(hostile)
            # The writer thread did not take the hostile ack either: publishing goes on.
            assert pub.publish("state", {"i": 5}) == 6 and pub.flush(10.0)
            assert ask({"type": "status", "v": 1}).last_seq == 6
        finally:
            dealer.close(0)
            ctx.term()

"""10,000 hostile frames over a real PUB socket: each is rejected and counted, nothing crashes.

This test runs WITHOUT CurveZMQ on purpose: the fuzzing peer stands in for a
vehicle whose frames have passed authentication but are broken.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import msgpack
import zmq

from ground_station.flight_log import FlightLog
from ground_station.settings import GroundConfig, VehicleLinkConfig
from contract.envelope import ENVELOPE_VERSION, encode
from tests.telemetry.linkkit import GroundThread, wait_until

MAX_FRAME = 4096
REJECT_REASONS = ("malformed", "wrong_version", "oversized", "bad_envelope", "out_of_range", "unknown_type",
                  "wrong_vehicle")
STREAM = "5e1f00000000a11e"


def _env(**over):
    doc = {"v": ENVELOPE_VERSION, "type": "state", "vehicle_id": "uav-f", "stream": STREAM, "seq": 1, "t_ns": 1,
           "payload": {}}
    doc.update(over)
    return doc


def hostile_frames(n: int, seed: int = 3) -> tuple[list[bytes], Counter]:
    """``n`` frames that must all be rejected, and the reason each is expected to get."""
    rng = random.Random(seed)
    valid = encode("uav-f", 5, "state", {"x": 1.0}, stream=STREAM)
    makers = [
        ("malformed", lambda: rng.randbytes(rng.randint(1, 300)) + b"\xc1"),          # 0xc1 is never valid msgpack
        ("malformed", lambda: b""),
        ("malformed", lambda: valid[: rng.randint(1, len(valid) - 1)]),              # truncated
        ("malformed", lambda: valid + rng.randbytes(rng.randint(1, 20))),            # trailing garbage
        ("malformed", lambda: msgpack.packb(rng.choice([[1, 2], 7, "state", None, 1.5, b"\x00"]))),
        ("malformed", lambda: b"\x91" * rng.randint(2000, 4000)),                    # nesting bomb
        ("malformed", lambda: msgpack.packb({1: 2, "v": 1})),                        # non-string key
        ("wrong_version", lambda: msgpack.packb(_env(v=rng.choice([0, 1, 2, 4, 99, "3", None, 3.0, True])))),
        ("wrong_version", lambda: msgpack.packb({k: v for k, v in _env().items() if k != "v"})),
        ("oversized", lambda: rng.randbytes(MAX_FRAME + rng.randint(1, 4000))),
        ("oversized", lambda: encode("uav-f", 9, "map", {"png": b"\x89PNG" + bytes(MAX_FRAME)}, stream=STREAM)),
        ("bad_envelope", lambda: msgpack.packb(_env(seq=rng.choice(["7", 1.5, None, True])))),
        ("bad_envelope", lambda: msgpack.packb(_env(t_ns=rng.choice(["now", None])))),
        ("bad_envelope", lambda: msgpack.packb(_env(stream=rng.choice(["", "v1", "ABCDEF0123456789", 7, None])))),
        ("out_of_range", lambda: msgpack.packb(_env(seq=rng.choice([0, -1, 2 ** 63, 2 ** 64 - 1])))),
        ("out_of_range", lambda: msgpack.packb(_env(t_ns=rng.choice([-5, 2 ** 63, 2 ** 64 - 1])))),
        ("bad_envelope", lambda: msgpack.packb(_env(extra=1))),
        ("bad_envelope", lambda: msgpack.packb({k: v for k, v in _env().items() if k != "payload"})),
        ("bad_envelope", lambda: msgpack.packb(_env(vehicle_id=rng.choice(["", 5, None])))),
        ("unknown_type", lambda: msgpack.packb(_env(type=rng.choice(["status", "", "STATE", 3, None])))),
        ("wrong_vehicle", lambda: encode("impostor", rng.randint(1, 10 ** 9), "state", {}, stream=STREAM)),
    ]
    frames, expected = [], Counter()
    for _ in range(n):
        reason, make = rng.choice(makers)
        frames.append(make())
        expected[reason] += 1
    return frames, expected


def test_ten_thousand_hostile_frames_are_rejected_and_counted(tmp_path: Path) -> None:
    ctx = zmq.Context()
    pub, router = ctx.socket(zmq.PUB), ctx.socket(zmq.ROUTER)
    try:
        pub.sndhwm = 0
        for s in (pub, router):
            s.linger = 0
        pub.bind("tcp://127.0.0.1:*")
        router.bind("tcp://127.0.0.1:*")
        link = VehicleLinkConfig(vehicle_id="uav-f", pub_endpoint=pub.getsockopt_string(zmq.LAST_ENDPOINT),
                                 replay_endpoint=router.getsockopt_string(zmq.LAST_ENDPOINT))
        cfg = GroundConfig(db_path=str(tmp_path / "fl.sqlite"), vehicles=[link], curve=False, max_frame_bytes=MAX_FRAME,
                           hard_frame_limit_bytes=1 << 20, stats_interval_s=0.0)
        frames, expected = hostile_frames(10_000)
        with GroundThread(cfg) as ground:
            probe = encode("probe", 1, "state", {}, stream=STREAM)
            # PUB/SUB joins late: probe (a wrong-vehicle frame) until the ground station hears it.
            probes = 0
            while not ground.station.counters()["uav-f"].get("wrong_vehicle") and probes < 500:
                pub.send(probe)
                probes += 1
                wait_until(lambda: False, 0.01)
            assert ground.station.counters()["uav-f"].get("wrong_vehicle"), "subscription never joined"
            probes_heard = ground.station.counters()["uav-f"]["wrong_vehicle"]
            for frame in frames:
                pub.send(frame)
            total = lambda: sum(ground.station.counters()["uav-f"].get(r, 0) for r in REJECT_REASONS)  # noqa: E731
            assert wait_until(lambda: total() >= 10_000 + probes_heard, 60), (ground.station.counters(), expected)
            # Still alive and still storing good frames.
            pub.send(encode("uav-f", 1, "flight_start", {"after": "fuzz"}, stream=STREAM))
            assert wait_until(lambda: ground.station.cursors()["uav-f"] == 1, 10)
            counters = ground.station.counters()["uav-f"]
        expected["wrong_vehicle"] += probes_heard
        assert {r: counters.get(r, 0) for r in REJECT_REASONS} == {r: expected.get(r, 0) for r in REJECT_REASONS}
        assert counters.get("stored") == 1
        with FlightLog.open(cfg.db_path) as fl:
            assert fl.seqs("uav-f") == [1]
            assert fl.rejects("uav-f")["malformed"] == expected["malformed"]  # persisted counters
    finally:
        pub.close(0)
        router.close(0)
        ctx.term()


def test_hostile_replay_answers_are_counted_not_fatal(tmp_path: Path) -> None:
    """A replay endpoint answering garbage (again without CURVE, on purpose)."""
    ctx = zmq.Context()
    pub, router = ctx.socket(zmq.PUB), ctx.socket(zmq.ROUTER)
    rng = random.Random(5)
    try:
        for s in (pub, router):
            s.linger = 0
        pub.bind("tcp://127.0.0.1:*")
        router.bind("tcp://127.0.0.1:*")
        link = VehicleLinkConfig(vehicle_id="uav-r", pub_endpoint=pub.getsockopt_string(zmq.LAST_ENDPOINT),
                                 replay_endpoint=router.getsockopt_string(zmq.LAST_ENDPOINT))
        cfg = GroundConfig(db_path=str(tmp_path / "fl.sqlite"), vehicles=[link], curve=False, max_frame_bytes=MAX_FRAME,
                           status_interval_s=0.01, stats_interval_s=0.0)
        answers = [
            lambda: rng.randbytes(rng.randint(0, 64)),
            lambda: msgpack.packb({"type": "replay_reply", "v": 1, "vehicle_id": "uav-r",
                                   "frames": [rng.randbytes(30), 5, None]}),
            lambda: msgpack.packb({"type": "replay_reply", "v": 1, "vehicle_id": "uav-r", "frames": "nope",
                                   "last_seq": "x"}),
            lambda: msgpack.packb({"type": "status_reply", "v": 1, "vehicle_id": "someone-else", "last_seq": 10 ** 12}),
            lambda: msgpack.packb({"type": "ack_reply", "v": 1, "upto": "all"}),
            lambda: msgpack.packb({"type": "status_reply", "v": 7}),
            lambda: msgpack.packb(["type", "status_reply"]),
        ]
        answered = 0
        with GroundThread(cfg) as ground:
            while answered < 100:
                if router.poll(2000):
                    ident, _ = router.recv_multipart()
                    router.send_multipart([ident, rng.choice(answers)()])
                    answered += 1
                else:
                    break
            assert answered == 100
            counters = ground.station.counters()["uav-r"]
        assert counters.get("bad_reply", 0) + counters.get("malformed", 0) > 0
        assert ground.station.cursors()["uav-r"] == 0 and ground.error is None
    finally:
        pub.close(0)
        router.close(0)
        ctx.term()

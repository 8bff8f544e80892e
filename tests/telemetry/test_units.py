"""Envelope, journal, publisher rules and settings, without a ground station.

Publishers here run WITHOUT CurveZMQ on purpose: nothing connects to them; the link is tested in
test_link.py, test_loss.py and test_auth.py with keys.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import time
from pathlib import Path

import msgpack
import pytest
import yaml

from onboard.telemetry import keys as keys_cli
from contract.envelope import ENVELOPE_VERSION, EnvelopeError, decode, encode
from onboard.telemetry.journal import Journal, JournalError
from contract.messages import AgentStep, Event, Pose, State, bridge_event_listener
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig
from common.typed_config import ConfigError, build, to_dict
from tests.telemetry.linkkit import vehicle_cfg

STREAM = "5e1f00000000a11e"


def test_envelope_round_trip_keeps_binary_payloads() -> None:
    frame = encode("uav", 3, "map", {"png": b"\x89PNG\x00\x01"}, t_ns=42, stream=STREAM)
    env = decode(frame, max_bytes=1000)
    assert (env.v, env.type, env.vehicle_id, env.stream, env.seq, env.t_ns) == (ENVELOPE_VERSION, "map", "uav", STREAM, 3, 42)
    assert env.payload == {"png": b"\x89PNG\x00\x01"}


@pytest.mark.parametrize("frame, reason", [
    (b"\xc1", "malformed"),
    (msgpack.packb([1, 2]), "malformed"),
    (msgpack.packb({"v": 1, "type": "state", "vehicle_id": "u", "seq": 1, "t_ns": 1, "payload": {}}), "wrong_version"),
    (msgpack.packb({"v": 2, "type": "state", "vehicle_id": "u", "stream": STREAM, "seq": 1, "t_ns": 1,
                    "payload": {}}), "wrong_version"),
    (msgpack.packb({"v": 4, "type": "state", "vehicle_id": "u", "stream": STREAM, "seq": 1, "t_ns": 1,
                    "payload": {}}), "wrong_version"),
    (msgpack.packb({"v": 3.0, "type": "state", "vehicle_id": "u", "stream": STREAM, "seq": 1, "t_ns": 1,
                    "payload": {}}), "wrong_version"),
    (msgpack.packb({"v": 3, "type": "nope", "vehicle_id": "u", "stream": STREAM, "seq": 1, "t_ns": 1,
                    "payload": {}}), "unknown_type"),
    (msgpack.packb({"v": 3, "type": "state", "vehicle_id": "u", "stream": STREAM, "seq": 0, "t_ns": 1,
                    "payload": {}}), "out_of_range"),
    (msgpack.packb({"v": 3, "type": "state", "vehicle_id": "u", "stream": "XY", "seq": 1, "t_ns": 1,
                    "payload": {}}), "bad_envelope"),
    (msgpack.packb({"v": 3, "type": "state", "vehicle_id": "u", "seq": 1, "t_ns": 1, "payload": {}}),
     "bad_envelope"),
    (b"\x00" * 2000, "oversized"),
])
def test_decode_rejects_with_a_reason(frame: bytes, reason: str) -> None:
    with pytest.raises(EnvelopeError) as err:
        decode(frame, max_bytes=1000)
    assert err.value.reason == reason


def test_journal_acks_prune_and_the_seq_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal.open(path) as j:
        j.append_many([(s, "state", s, encode("u", s, "state", {}, stream=STREAM)) for s in range(1, 11)])
        assert (j.first_seq(), j.last_seq(), j.pending_count()) == (1, 10, 10)
        assert j.ack(4) == 4 and j.ack(2) == 4          # acks never go back
        assert [s for s, _ in j.frames(1, 10, max_count=3, max_bytes=10 ** 6)] == [5, 6, 7]
        assert len(j.frames(5, 10, max_count=100, max_bytes=1)) == 1  # one frame always goes
        assert j.ack(10 ** 9) == 10                     # clamped to what exists
    with Journal.open(path) as j:
        assert (j.pending_count(), j.last_seq(), j.first_seq()) == (0, 10, 11)


def test_journal_refuses_a_file_that_is_not_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalError):
        Journal.open(bad)


def _frames(tmp_path: Path) -> list[dict]:
    with Journal.open(tmp_path / "journal.sqlite") as j:
        return [msgpack.unpackb(f, raw=False) for _, f in j.frames(1, 10 ** 9, max_count=10 ** 6, max_bytes=1 << 30)]


def test_oversized_payload_is_refused_with_an_event_not_truncated(tmp_path: Path) -> None:
    cfg = vehicle_cfg(tmp_path, curve=False, max_message_bytes=2048)
    with TelemetryPublisher(cfg, "uav") as pub:
        assert pub.publish("map", {"png": b"\x00" * 4096}) is None
        assert pub.publish("map", {"png": b"\x00" * 100}) == 2
        assert pub.flush(5)
        assert pub.counters["refused_oversize"] == 1
    msgs = _frames(tmp_path)
    assert [m["type"] for m in msgs] == ["event", "map"]
    assert msgs[0]["payload"]["kind"] == "payload_refused"
    assert msgs[0]["payload"]["detail"]["type"] == "map" and msgs[0]["payload"]["detail"]["limit"] == 2048


def test_state_and_map_are_throttled_without_using_a_seq(tmp_path: Path) -> None:
    cfg = vehicle_cfg(tmp_path, curve=False, state_rate_hz=10.0, map_min_interval_s=60.0)
    with TelemetryPublisher(cfg, "uav") as pub:
        seqs = [pub.publish("state", {"i": i}) for i in range(5)]
        assert seqs[0] == 1 and seqs[1:] == [None] * 4
        time.sleep(0.11)
        assert pub.publish("state", {"i": 5}) == 2
        assert pub.publish("map", {"png": b"1"}) == 3 and pub.publish("map", {"png": b"2"}) is None
        assert pub.event("failsafe", {"why": "battery"}) == 4    # events are never throttled
        assert pub.counters["throttled"] == 5


def test_seq_continues_after_restart_without_gaps(tmp_path: Path) -> None:
    cfg = vehicle_cfg(tmp_path, curve=False)
    with TelemetryPublisher(cfg, "uav") as pub:
        for i in range(7):
            pub.publish("state", {"i": i})
    with TelemetryPublisher(cfg, "uav") as pub:
        assert pub.publish("state", {"i": 7}) == 8
    assert [m["seq"] for m in _frames(tmp_path)] == list(range(1, 9))


def test_unknown_type_is_a_programming_error(tmp_path: Path) -> None:
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav") as pub:
        with pytest.raises(ValueError):
            pub.publish("gossip", {})


class Mode(enum.Enum):
    OFFBOARD = 1


@dataclasses.dataclass(frozen=True)
class FakeState:
    lat: float
    flight_mode: Mode
    pos: tuple[float, float]


@dataclasses.dataclass(frozen=True)
class FakeBridgeEvent:
    kind: str
    detail: str
    t: float


def test_payloads_take_bridge_objects_by_shape(tmp_path: Path) -> None:
    state = State.from_state(FakeState(60.1, Mode.OFFBOARD, (1.0, 2.0)))
    assert state.lat == 60.1 and state.flight_mode == "OFFBOARD"          # "pos" is not a state field: ignored
    step = AgentStep(step=3, current_state="street", action="forward", reason="clear", pose=Pose(1.0, 2.0, 0.0, 90.0),
                     distance_estimate_m=40.0)
    assert step.encode()["decision"] == {"action": "forward", "reason": "clear"}
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav") as pub:
        listener = bridge_event_listener(pub.publish)
        listener(FakeBridgeEvent("command_refused", "outside geofence", 12.5))
        pub.publish("state", state)
        pub.publish("agent_step", step)
        with pytest.raises(ValueError, match="not a 'state' message"):
            pub.publish("state", step)
    msgs = _frames(tmp_path)
    assert Event.decode(msgs[0]["payload"]) == Event("command_refused", {"value": "outside geofence"}, 12.5, "bridge")
    assert State.decode(msgs[1]["payload"]) == state and AgentStep.decode(msgs[2]["payload"]) == step


def test_config_section_round_trips_and_rejects_unknown_keys() -> None:
    section = yaml.safe_load(yaml.safe_dump(to_dict(TelemetryConfig())))
    assert build(TelemetryConfig, section) == TelemetryConfig()
    with pytest.raises(ConfigError, match="telemetry.pub_endpoit"):
        build(TelemetryConfig, {"pub_endpoit": "x"}, where="telemetry")


def test_keys_cli_writes_a_usable_key_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert keys_cli.main(["generate", str(tmp_path / "k")]) == 0
    names = sorted(p.name for p in (tmp_path / "k").iterdir())
    assert names == ["authorized", "dashboard.token_sha256", "ground.key", "ground.key_secret", "vehicle.key", "vehicle.key_secret"]
    assert (tmp_path / "k" / "authorized" / "ground.key").exists()
    assert oct((tmp_path / "k" / "vehicle.key_secret").stat().st_mode & 0o777) == "0o600"
    assert "vehicle_secret" in capsys.readouterr().out


def test_bench_smoke(tmp_path: Path) -> None:
    from sim import telemetry_bench as benchmark

    out = tmp_path / "bench.json"
    assert benchmark.main(["--json", str(out), "--flat-count", "300", "--rate-seconds", "0.3"]) == 0
    data = json.loads(out.read_text())
    for key in ("msgs_per_s_flat_out", "p50_ms_200hz", "p99_ms_200hz", "msgs_per_s_flat_out_curve",
                "p50_ms_200hz_curve", "p99_ms_200hz_curve", "p50_ms_200hz_zmq_floor", "p99_ms_200hz_zmq_floor"):
        assert data[key] > 0
    # Every paced message arrives, on Aerie's path and on the bare socket alike.
    assert data["received_200hz"] == data["floor_runs"][0]["received"] == 60


def test_a_second_publisher_on_the_same_journal_is_refused(tmp_path: Path) -> None:
    from onboard.telemetry.publisher import PublisherError

    cfg = vehicle_cfg(tmp_path, curve=False)
    with TelemetryPublisher(cfg, "uav"):
        with pytest.raises(PublisherError, match="in use"):
            TelemetryPublisher(cfg, "uav").start()
    with TelemetryPublisher(cfg, "uav") as again:   # released on close
        assert again.publish("event", {"kind": "mission_start", "detail": None}) == 1

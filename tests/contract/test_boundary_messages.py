"""Every process boundary's message: it survives its channel's frame, and its reader refuses what it cannot read.

One sample per message of the world feed, replay and ack, memory sync, the
simulator's control socket, the status socket, the exploration share and the
lesson's refined plan; each must round-trip through its channel's own frame
(msgpack, or JSON for the two JSON sockets), refuse a schema version it was not
written for, and refuse an out-of-range field naming that field.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import msgpack
import pytest

from contract import exploration_discovery, memory_sync, replay, sim_control, status_report, world_feed
from contract.payloads.base import Payload, PayloadError
from contract.payloads.plan_refined import AvoidStep, GoalFix, OnboardLesson, RefinedPlan
from contract.wire import Channel

STREAM = "0123456789abcdef"
SHA = hashlib.sha256(b"lessons").hexdigest()
ED = exploration_discovery

# (channel, sample, a field change that is out of range, the field named)
CASES: list[tuple[Channel[Any], Payload, dict[str, Any], str]] = [
    (world_feed.REQUESTS, world_feed.GazetteerRequest(), {}, ""),
    (world_feed.REQUESTS, world_feed.ObserveRequest(60.17, 24.94, 90.0, 7, True, altitude=40.0),
     {"lat": 91.0}, "lat"),
    (world_feed.REQUESTS, world_feed.ObserveRequest(60.17, 24.94, sightings=False, camera_alt=25.0, camera_pitch=-45.0),
     {"camera_pitch": -91.0}, "camera_pitch"),
    (world_feed.REQUESTS, world_feed.ObserveRequest(60.17, 24.94), {"altitude": math.nan}, "altitude"),
    (world_feed.REPLIES, world_feed.GazetteerReply(("Kiasma",), {"Museum of Modern Art Kiasma": "Kiasma"}),
     {"aliases": {"Five": 5}}, "aliases.Five"),
    (world_feed.REPLIES, world_feed.Observation(
        7, 60.17, 24.94, 0.5, (world_feed.Move(8, 90.0, 40.0, 60.171, 24.941),),
        (world_feed.Sighting("Kiasma", 10.0, 120.0),), (world_feed.Sighting("Kahvila", 200.0, 30.0),),
        b"\x89PNG", 40.0, None), {"moves": [{"node": 8, "bearing": 90.0, "length": -1.0, "lat": 60.0, "lon": 24.0}]},
     "moves[0].length"),
    (world_feed.REPLIES, world_feed.FeedError("altitude out of range"), {"error": 5}, "error"),
    (replay.requests(4096), replay.StatusRequest(), {}, ""),
    (replay.requests(4096), replay.ReplayRequest(1, 5), {"last": 2 ** 63}, "last"),
    (replay.requests(4096), replay.AckRequest(5, STREAM), {"stream": "ABCDEF0123456789"}, "stream"),
    (replay.replies(1 << 20), replay.StatusReply("uav", STREAM, 1, 9, 4), {"first_seq": 11}, "first_seq"),
    (replay.replies(1 << 20), replay.ReplayReply("uav", STREAM, 1, 9, (b"frame",)), {"frames": [b"a", 5]},
     "frames[1]"),
    (replay.replies(1 << 20), replay.AckReply(5), {"upto": -1}, "upto"),
    (replay.replies(1 << 20), replay.AckRefused(STREAM, "another stream"), {"stream": "old"}, "stream"),
    (replay.replies(1 << 20), replay.ReplayError("bad request"), {"reason": None}, "reason"),
    (memory_sync.deliveries(1 << 20), memory_sync.BundleDelivery.of(b"lessons"), {"sha256": "0" * 64}, "sha256"),
    (memory_sync.answers(1 << 20), memory_sync.BundleImported(SHA, 3, 2, 1), {"added": 4}, "added"),
    (memory_sync.answers(1 << 20), memory_sync.SyncRefusal("not a lesson bundle"), {"reason": []}, "reason"),
    (status_report.reports(), status_report.StatusReport(
        (status_report.CheckResult("bridge", True, "link"),), status_report.VehicleLive(True, True, "armed, in air")),
     {"vehicle": {"armed": "yes", "detail": ""}}, "vehicle.armed"),
    (status_report.reports(), status_report.StatusReport(), {"checks": [{"name": "", "ok": True}]}, "checks[0].name"),
    (sim_control.requests(), sim_control.SimControl.of("wind", n=3.0, gust=0.5), {"gust": -1.0}, "gust"),
    (sim_control.requests(), sim_control.SimControl.of("battery", percent=30.0), {"percent": 130.0}, "percent"),
    (sim_control.requests(), sim_control.SimControl.of("mode", mode="HOLD"), {"mode": "OFFBOARD"}, "mode"),
    (sim_control.requests(), sim_control.SimControl.of("truth"), {"cmd": "teleport"}, "cmd"),
    (sim_control.replies(), sim_control.SimControlReply(True, result={"truth": {"lat": 47.0, "armed": False}}),
     {"ok": "yes"}, "ok"),
    (ED.frames(), ED.ExplorationDiscovery(
        "v0", "team", 3, 5, 2, ED.WireFix(3, 10.0, -4.5), (ED.WireVisit(ED.WireFix(3, 10.0, -4.5),
                                                                        (ED.WireFix(4, 20.0, -4.5),)),),
        (ED.WirePoi("Cafe Aalto", 300.5, 299.0),), ED.WireFix(4, 20.0, -4.5), True),
     {"pose": {"waypoint": 3, "east": 1e9, "north": 0.0}}, "pose.east"),
]


def _id(case: tuple) -> str:
    return f"{case[0].name}:{type(case[1]).__name__}"


def _frame(ch: Channel[Any], doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode() if ch.json else msgpack.packb(doc, use_bin_type=True)


def _doc(ch: Channel[Any], sample: Payload) -> dict[str, Any]:
    frame = ch.pack(sample)
    return json.loads(frame) if ch.json else msgpack.unpackb(frame, raw=False)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_round_trip_through_the_channel(case) -> None:
    ch, sample, _, _ = case
    back = ch.unpack(ch.pack(sample))
    assert type(back) is type(sample) and back == sample


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_an_unknown_version_is_refused(case) -> None:
    ch, sample, _, _ = case
    with pytest.raises(PayloadError, match="unknown schema version 99") as err:
        ch.unpack(_frame(ch, {**_doc(ch, sample), "v": 99}))
    assert err.value.reason == "wrong_version" and err.value.field == "v"


@pytest.mark.parametrize("case", [c for c in CASES if c[3]], ids=_id)
def test_an_out_of_range_field_is_refused_naming_it(case) -> None:
    ch, sample, change, field = case
    with pytest.raises(PayloadError) as err:
        ch.unpack(_frame(ch, {**_doc(ch, sample), **change}))
    assert err.value.field == field and err.value.msg_type == sample.MSG_TYPE, err.value
    assert f"field {field!r}" in str(err.value)


def test_the_sender_refuses_what_the_receiver_would() -> None:
    with pytest.raises(PayloadError, match="'lat'"):
        world_feed.REQUESTS.pack(world_feed.ObserveRequest(math.nan, 24.9))
    with pytest.raises(PayloadError, match="'first_seq'"):
        replay.replies(1 << 20).pack(replay.StatusReply("uav", STREAM, 10, 2, 0))


def test_a_frame_of_another_channel_or_too_big_or_not_a_frame_is_refused_by_name() -> None:
    ch = replay.requests(64)
    with pytest.raises(PayloadError, match="not a replay frame") as err:
        ch.unpack(world_feed.REQUESTS.pack(world_feed.GazetteerRequest()))
    assert err.value.reason == "unknown_type"
    with pytest.raises(PayloadError) as err:
        ch.unpack(msgpack.packb({"type": "replay", "v": 1, "first": 1, "last": 2, "pad": "x" * 100}))
    assert err.value.reason == "oversized"
    with pytest.raises(PayloadError) as err:
        ch.unpack(b"\xc1")
    assert err.value.reason == "malformed"
    with pytest.raises(PayloadError, match="not a status frame"):
        status_report.reports().unpack(b'{"bridge": {"ok": true, "detail": "link"}}')   # the old untyped report


def test_json_channels_refuse_nan_and_infinity() -> None:
    with pytest.raises(PayloadError) as err:
        sim_control.requests().unpack(b'{"type": "sim_control", "v": 1, "cmd": "battery", "percent": NaN}')
    assert err.value.reason == "malformed"
    with pytest.raises(PayloadError, match="result.truth.lat") as err:
        sim_control.SimControlReply.decode({"v": 1, "ok": True, "result": {"truth": {"lat": math.inf}}})
    with pytest.raises(ValueError):   # and NaN is never sent as JSON's non-standard NaN
        sim_control.replies().pack(sim_control.SimControlReply(True, result={"x": math.nan}))


def test_a_sim_command_takes_only_its_own_arguments() -> None:
    with pytest.raises(TypeError, match="unknown argument"):
        sim_control.SimControl.of("battery", precent=30.0)
    with pytest.raises(PayloadError, match="'percent'.*missing"):
        sim_control.requests().unpack(b'{"type": "sim_control", "v": 1, "cmd": "battery"}')
    wind = sim_control.requests().unpack(sim_control.requests().pack(sim_control.SimControl.of("wind", e=2.0)))
    assert (wind.n, wind.e, wind.d, wind.gust) == (0.0, 2.0, 0.0, 0.0)


def test_a_delivery_whose_hash_does_not_match_is_no_delivery() -> None:
    with pytest.raises(PayloadError, match="does not match") as err:
        memory_sync.deliveries(1 << 20).unpack(msgpack.packb(
            {"type": "bundle_delivery", "v": 1, "sha256": SHA, "bundle": b"other bytes"}))
    assert err.value.reason == "hash_mismatch"


# -- the lesson's refined plan (a record's JSON text, not a socket frame) -------------------------------------

REFINED = RefinedPlan(plan={"goal": "the kiosk", "steps": []}, goal=GoalFix((120.5, -60.2), "name read"),
                      landmarks={"Tower": (10.0, 6.0)}, avoid=(AvoidStep(1, "turn_left"),),
                      onboard=OnboardLesson("F1", 1, "turned away", ("navigate", "locate")))


def test_refined_plan_round_trip_version_and_range() -> None:
    assert RefinedPlan.from_text(REFINED.to_text()) == REFINED
    doc = json.loads(REFINED.to_text())
    with pytest.raises(PayloadError, match="unknown schema version 2"):
        RefinedPlan.from_text(json.dumps({**doc, "v": 2}))
    with pytest.raises(PayloadError) as err:
        RefinedPlan.from_text(json.dumps({**doc, "goal": {"xy_m": [1e12, 0.0], "source": "name read"}}))
    assert err.value.field == "goal.xy_m"
    with pytest.raises(PayloadError) as err:
        RefinedPlan.from_text(json.dumps({**doc, "goal": {"xy_m": [1.0, 0.0], "source": "a guess"}}))
    assert err.value.field == "goal.source"
    with pytest.raises(PayloadError) as err:
        RefinedPlan.from_text(json.dumps({**doc, "avoid": [{"at_step": -3}]}))
    assert err.value.field == "avoid[0].at_step"


def test_refined_plans_written_before_the_schema_read_as_they_were() -> None:
    plain = RefinedPlan.from_text('{"goal": "the kiosk", "steps": []}')        # a success's plain plan
    assert plain == RefinedPlan(plan={"goal": "the kiosk", "steps": []})
    older = RefinedPlan.from_text(json.dumps({"plan": {}, "goal": {"xy_m": [10, 20], "source": "estimate"},
                                              "onboard": {"flight_id": "F0", "key_timestep": 2, "reason": "r",
                                                          "refined_plan": ["navigate"]}}))
    assert older.goal == GoalFix((10.0, 20.0), "estimate") and older.onboard.flight_id == "F0"
    with pytest.raises(PayloadError) as err:
        RefinedPlan.from_text("not json")
    assert err.value.reason == "malformed"

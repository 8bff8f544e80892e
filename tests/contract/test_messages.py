"""Every telemetry payload is a typed dataclass that survives msgpack, and a reader refuses what it cannot read."""

from __future__ import annotations

import math

import msgpack
import pytest

from contract.envelope import MESSAGE_TYPES, decode, encode
from contract.messages import (PAYLOAD_TYPES, AgentStep, Anchor, AnchorGraph, Detection, Detections, Event,
                               FlightEnd, FlightStart, LlmPlanCall, MapImage, MissionAnalysisReport, Movement, Payload, PayloadError, Place,
                               Plan, PlanStep, Pose, REGION_MOST_VERTICES, RetrievedLesson, SearchRegion, State,
                               decode_payload)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

SAMPLES: list[Payload] = [
    State(lat=60.17, lon=24.94, rel_alt_m=30.0, north_m=1.5, east_m=-2.0, battery_percent=87.5,
          flight_mode="OFFBOARD", armed=True, in_air=True, gps_satellites=11, home_lat=60.1, home_lon=24.9),
    State(),   # everything unknown: NaN round-trips as NaN
    Event("failsafe", {"reason": "rc lost", "levels": [1, 2]}, t=1700000000.5, source="bridge"),
    Event("mission_start"),
    AgentStep(step=3, current_state="over the square", action="move to waypoint 7 bearing 90", reason="kiosk east",
              pose=Pose(10.0, -4.5, 30.0, 90.0), distance_estimate_m=120.5, goal="the red kiosk",
              task_instruction="find the red kiosk", strategy="search", plan_source="llm",
              movement=Movement("move", 7, 90.0), effect="SUCCESS", target_estimate=(100.0, 20.0),
              goal_fix=(98.5, 21.0), landmarks={"church": (50.0, 60.0)},
              anchor_graph=AnchorGraph((Anchor(1, 0.0, 0.0, 1, (2,)), Anchor(2, 10.0, 0.0, None, (1,))),
                                       (Place(1, "square", (1,)),)), plan_version=2, retrieval_mode="single",
              search_region=SearchRegion(((80.0, 0.0), (120.0, 10.5), (110.0, 40.0), (85.0, 30.0)), 1200.0)),
    AgentStep(step=0, current_state="", action="arrive", reason="", pose=Pose(0.0, 0.0), distance_estimate_m=None),
    Detections((Detection("kiosk", 0.91, 45.0, 12.0, 8.5, 8.5), Detection("car", 0.4, -10.0)), step=4,
               timings_ms={"detect": 12.5}),
    Plan("find the kiosk", (PlanStep("reach the square", "navigate", "over the square"),), source="llm",
         reason="the square is north", errors=("late",), retrieved=(RetrievedLesson("ab12", 0.93, "success"),),
         llm=LlmPlanCall(True, 0, "llm", 0, 0, 1.25)),
    MapImage(PNG, step=2, kind="semantic"),
    FlightStart("f1", "survey", "find the kiosk", "geometric", (60.1, 24.9), 40),
    FlightEnd("f1", True, "arrived", 12, "landed", 340.5),
    FlightEnd(),
    MissionAnalysisReport("model", "failure", 3, "turned away at step 3", ("navigate", "locate"),
                          "mission failed; key step 3", ("late",), 1.25, "f1"),
]


def _wire(payload: Payload) -> object:
    return msgpack.unpackb(msgpack.packb(payload.encode(), use_bin_type=True), raw=False)


def test_every_message_type_has_a_payload_class_and_a_sample() -> None:
    assert set(PAYLOAD_TYPES) == MESSAGE_TYPES
    assert {p.MSG_TYPE for p in SAMPLES} == MESSAGE_TYPES


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_round_trip_through_msgpack_is_equal(payload: Payload) -> None:
    wire = _wire(payload)
    assert wire["v"] == payload.SCHEMA_VERSION
    back = decode_payload(payload.MSG_TYPE, wire)
    assert type(back) is type(payload) and back == payload


def test_round_trip_inside_an_envelope() -> None:
    step = SAMPLES[4]
    env = decode(encode("uav", 1, "agent_step", step.encode(), t_ns=5, stream="0123456789abcdef"), max_bytes=1 << 20)
    assert decode_payload(env.type, env.payload) == step


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_an_unknown_schema_version_is_refused_naming_it(payload: Payload) -> None:
    wire = {**payload.encode(), "v": 99}
    with pytest.raises(PayloadError, match=r"unknown schema version 99") as err:
        decode_payload(payload.MSG_TYPE, wire)
    assert err.value.msg_type == payload.MSG_TYPE and err.value.field == "v" and err.value.reason == "wrong_version"
    no_version = payload.encode()
    del no_version["v"]
    with pytest.raises(PayloadError, match="no schema version"):
        decode_payload(payload.MSG_TYPE, no_version)


@pytest.mark.parametrize("msg_type, change, field", [
    ("state", {"lat": 123.0}, "lat"),
    ("state", {"battery_percent": math.inf}, "battery_percent"),
    ("state", {"armed": "yes"}, "armed"),
    ("event", {"kind": 5}, "kind"),
    ("event", {"detail": [1, 2]}, "detail"),
    ("agent_step", {"distance_estimate_m": math.nan}, "distance_estimate_m"),
    ("agent_step", {"step": -1}, "step"),
    ("agent_step", {"step": True}, "step"),
    ("agent_step", {"pose": {"x": 1.0, "y": "north"}}, "pose.y"),
    ("agent_step", {"landmarks": {"church": [1.0]}}, "landmarks.church"),
    ("agent_step", {"anchor_graph": {"anchors": [{"anchor_id": "a", "x": 0, "y": 0}]}}, "anchor_graph.anchors[0].anchor_id"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0], [math.nan, 5]], "unseen_m2": 50.0}},
     "search_region.outline[2]"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0], [1e9, 5]], "unseen_m2": 50.0}},
     "search_region.outline[2]"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0, 3], [5, 5]], "unseen_m2": 50.0}},
     "search_region.outline[1]"),
    ("agent_step", {"search_region": {"outline": "a square", "unseen_m2": 50.0}}, "search_region.outline"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0]], "unseen_m2": 50.0}}, "search_region.outline"),
    ("agent_step", {"search_region": {"outline": [[i, i * i] for i in range(REGION_MOST_VERTICES + 1)],
                                      "unseen_m2": 50.0}}, "search_region.outline"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0], [5, 5]], "unseen_m2": -1.0}},
     "search_region.unseen_m2"),
    ("agent_step", {"search_region": {"outline": [[0, 0], [10, 0], [5, 5]]}}, "search_region.unseen_m2"),
    ("agent_step", {"search_region": [[0, 0], [10, 0], [5, 5]]}, "search_region"),
    ("detections", {"detections": [{"label": "kiosk", "score": 1.5, "bearing_deg": 0.0}]}, "detections[0].score"),
    ("plan", {"steps": "reach the square"}, "steps"),
    ("map", {"png": b"GIF89a"}, "png"),
    ("flight_start", {"home": [95.0, 0.0]}, "home"),
    ("flight_end", {"success": "yes"}, "success"),
    ("mission_analysis", {"source": "oracle"}, "source"),
    ("mission_analysis", {"key_timestep": -1}, "key_timestep"),
    ("mission_analysis", {"seconds": math.nan}, "seconds"),
])
def test_a_malformed_field_is_refused_naming_the_field(msg_type: str, change: dict, field: str) -> None:
    sample = next(p for p in SAMPLES if p.MSG_TYPE == msg_type)
    with pytest.raises(PayloadError) as err:
        decode_payload(msg_type, {**sample.encode(), **change})
    assert err.value.field == field and err.value.msg_type == msg_type
    assert f"{msg_type} payload, field {field!r}" in str(err.value)


@pytest.mark.parametrize("msg_type, key", [("agent_step", "current_state"), ("agent_step", "decision"),
                                           ("agent_step", "distance_estimate_m"), ("event", "kind"),
                                           ("map", "png"), ("plan", "steps")])
def test_a_missing_required_field_is_refused(msg_type: str, key: str) -> None:
    wire = next(p for p in SAMPLES if p.MSG_TYPE == msg_type).encode()
    del wire[key]
    with pytest.raises(PayloadError, match="missing") as err:
        decode_payload(msg_type, wire)
    assert err.value.field == key


def test_not_a_map_and_unknown_type_are_refused() -> None:
    with pytest.raises(PayloadError, match="must be a map"):
        decode_payload("state", [1, 2])
    with pytest.raises(PayloadError, match="unknown message type"):
        decode_payload("telepathy", {"v": 1})


def test_unknown_keys_are_ignored_for_forward_compatibility() -> None:
    step = SAMPLES[4]
    assert decode_payload("agent_step", {**step.encode(), "added_later": {"x": 1}}) == step


def test_an_agent_step_from_before_the_search_region_still_decodes() -> None:
    """``search_region`` came within version 1: a step sent without it reads as a step without a region."""
    wire = SAMPLES[4].encode()
    del wire["search_region"]
    back = decode_payload("agent_step", wire)
    assert back.search_region is None and back.target_estimate == (100.0, 20.0)


def test_an_outline_too_long_or_too_short_says_how_many_vertices_it_may_have() -> None:
    wire = SAMPLES[4].encode()
    wire["search_region"] = {"outline": [[float(i), float(i * i)] for i in range(40)], "unseen_m2": 1.0}
    with pytest.raises(PayloadError, match=f"must have 3 to {REGION_MOST_VERTICES} vertices, got 40") as err:
        decode_payload("agent_step", wire)
    assert err.value.reason == "bad_shape"


def test_state_from_a_vehicle_state_keeps_what_is_valid_and_makes_the_rest_unknown() -> None:
    import enum
    from dataclasses import dataclass

    class Mode(enum.Enum):
        OFFBOARD = 1

    @dataclass
    class FakeState:
        lat: float = 60.1
        lon: float = 999.0          # corrupt: becomes unknown, the snapshot survives
        flight_mode: Mode = Mode.OFFBOARD
        battery_percent: float = math.inf

    s = State.from_state(FakeState())
    assert s.lat == 60.1 and math.isnan(s.lon) and math.isnan(s.battery_percent) and s.flight_mode == "OFFBOARD"
    assert State.decode(_wire(s)) == s

"""The deterministic post-flight analyser: key timestep, the three reflections, the bundle for sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ground_station import service
from ground_station.flight_log import FlightLog
from ground_station.post_flight import PostFlightWatcher, analyse, bundle_name
from contract.payloads.plan_refined import RefinedPlan
from contract.bundle import read_bundle
from onboard.memory.bundle import import_bundle
from contract.records import (NAVIGATE_EXPERIENCE, STRATEGIC_PLAN, TASK_EXPERIENCE, NavigateExperience,
                                    SearchLocateExperience)
from contract.envelope import decode, encode
from contract.messages import AgentStep, FlightEnd, FlightStart, Plan, PlanStep, Pose, State

STREAM = "5e1f00000000a11e"  # the vehicle journal's stream id these envelopes carry

DISTANCES = [100.0, 90.0, 120.0, 80.0, 60.0, 70.0, 15.0]
ACTIONS = ["forward", "turn_left", "forward", "forward", "turn_right", "forward", "stop"]


PLAN = Plan("kiosk", (PlanStep("street", "navigate"), PlanStep("square", "search")))


def flight(start: int = 1, *, end: FlightEnd | None = None, strategy: str | None = None,
           distances: list[float] = DISTANCES) -> list[dict]:
    msgs = [{"seq": start, "type": "flight_start", "payload": FlightStart(mission="find the kiosk").encode()},
            {"seq": start + 1, "type": "plan", "payload": PLAN.encode()}]
    for i, d in enumerate(distances):
        msgs.append({"seq": start + 2 + 2 * i, "type": "state", "payload": State(north_m=float(i)).encode()})
        msgs.append({"seq": start + 3 + 2 * i, "type": "agent_step", "payload": AgentStep(
            step=i, current_state=f"over block {i}", action=ACTIONS[i], reason=f"reason {i}", pose=Pose(float(i), 0.0),
            distance_estimate_m=d, goal="the red kiosk", strategy=strategy or "").encode()})
    msgs.append({"seq": start + 2 + 2 * len(distances), "type": "flight_end", "payload": (end or FlightEnd()).encode()})
    return msgs


def test_key_step_is_the_decision_before_the_largest_increase() -> None:
    a = analyse(flight(), vehicle_id="v", start_seq=1)
    assert a is not None and a.status == "success"          # last distance 15 m <= 20 m
    assert (a.key.step.step, a.key.distance_before_m, a.key.distance_after_m) == (1, 90.0, 120.0)
    d = a.decision
    assert isinstance(d, NavigateExperience)
    # A success's atomic lesson is the flight's best decision, in its own situation: 70 -> 15 m
    # after step 5 ('forward'), not the key step's state paired with another step's move.
    assert (d.current_state, d.navigation_goal, d.is_success) == ("over block 5", "the red kiosk", "success")
    assert "'turn_left' (reason 1)" in d.reflect_reason and "+30 m" in d.reflect_reason
    assert json.loads(d.refined_action) == {"at_step": 5, "avoid": None, "prefer": "forward"}
    assert a.plan.task_instruction == "find the kiosk" and a.plan.status == "success"
    assert json.loads(a.plan.master_plan) == PLAN.body()
    assert RefinedPlan.from_text(a.plan.plan_refined) == RefinedPlan(plan=json.loads(a.plan.master_plan))
    assert a.task.task_goal == "the red kiosk (Strategy: navigate)"
    assert analyse(flight(), vehicle_id="v", start_seq=1) == a           # deterministic


def test_failure_reflection_and_search_records() -> None:
    a = analyse(flight(end=FlightEnd(success=False), strategy="search"), vehicle_id="v", start_seq=1)
    assert a is not None and a.status == "failure"
    assert isinstance(a.decision, SearchLocateExperience) and a.decision.is_success == "failure"
    assert a.decision.reflect_reason.startswith("Failure:")
    refined = json.loads(a.plan.plan_refined)
    # a failure's lesson: the key step's situation and the move to avoid there, nothing from another step
    assert a.decision.current_state == "over block 1"
    assert refined["avoid"] == [{"at_step": 1, "avoid": "turn_left", "prefer": None}]
    assert "key step was 1" in a.plan.reflection_note
    far = analyse(flight(distances=[50.0, 40.0, 30.0]), vehicle_id="v")
    assert far is not None and far.status == "failure" and far.key.step.step == 2 and far.key.increase_m == 0
    assert analyse([{"seq": 1, "type": "state", "payload": State().encode()}]) is None


def test_a_payload_that_does_not_decode_is_counted_and_skipped() -> None:
    msgs = flight()
    bad = [{"seq": 100, "type": "agent_step", "payload": {**msgs[3]["payload"], "v": 9}},
           {"seq": 101, "type": "agent_step", "payload": {**msgs[3]["payload"], "distance_estimate_m": float("nan")}},
           {"seq": 102, "type": "plan", "payload": ["not", "a", "plan"]}]
    a = analyse(msgs[:-1] + bad + msgs[-1:], vehicle_id="v", start_seq=1)
    clean = analyse(msgs, vehicle_id="v", start_seq=1)
    assert a is not None and clean is not None and a.refused == {"agent_step": 2, "plan": 1} and clean.refused == {}
    assert (a.steps, a.plan, a.task, a.decision) == (len(DISTANCES), clean.plan, clean.task, clean.decision)


def _store(fl: FlightLog, msgs: list[dict], vid: str = "aerie-1") -> None:
    items = []
    for m in msgs:
        frame = encode(vid, m["seq"], m["type"], m["payload"], t_ns=m["seq"], stream=STREAM)
        items.append((decode(frame, max_bytes=1 << 20), frame))
    fl.store(items)


def test_watcher_writes_one_bundle_per_ended_flight_ready_for_sync(tmp_path: Path, log_target: str | Path) -> None:
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore

    db = log_target
    with FlightLog.open(db) as fl:
        _store(fl, flight(1))
        _store(fl, flight(100)[:-1])                          # still in the air
    watcher = PostFlightWatcher(db, tmp_path / "out", tmp_path / "ground_memory.sqlite")
    try:
        [path] = watcher.poll()
        assert path.name == bundle_name("aerie-1", 1, STREAM)
        assert watcher.poll() == []                          # analysed once
    finally:
        watcher.stop()
    doc = read_bundle(path)
    exps = doc["experiences"]
    assert doc["vehicle_id"] == "aerie-1"
    assert [e["collection"] for e in exps] == [STRATEGIC_PLAN, TASK_EXPERIENCE, NAVIGATE_EXPERIENCE]
    assert exps[1]["parent_uid"] == exps[0]["uid"] and exps[2]["parent_uid"] == exps[1]["uid"]
    with ExperienceStore.open(tmp_path / "vehicle.sqlite", MiniLMEmbedder.load()) as vehicle:
        report = import_bundle(vehicle, path)
        assert (report.added, report.already_present) == (3, 0)
        hit = vehicle.search("over block 1", NAVIGATE_EXPERIENCE, k=1)[0]
        assert hit.record.refined_action == exps[2]["fields"]["refined_action"]


def test_aerie_ground_analyse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FlightLog.open(tmp_path / "log.sqlite") as fl:
        _store(fl, flight(1, end=FlightEnd(success=False)))
    cfg = tmp_path / "ground.yaml"
    cfg.write_text("db_path: log.sqlite\ncurve: false\n")
    assert service.main(["analyse", "--config", str(cfg)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"bundles": [str(tmp_path / "post_flight" / f"aerie-1-{STREAM}-1.bundle")]}
    assert service.main(["analyse", "--config", str(cfg)]) == 0
    assert json.loads(capsys.readouterr().out) == {"bundles": []}
    assert (tmp_path / "ground_memory.sqlite").exists()


def test_watcher_thread_analyses_a_flight_that_ends_while_it_runs(tmp_path: Path) -> None:
    import time

    db = tmp_path / "fl.sqlite"
    with FlightLog.open(db) as fl:
        msgs = flight(1)
        _store(fl, msgs[:-1])
        watcher = PostFlightWatcher(db, tmp_path / "out", tmp_path / "mem.sqlite", interval_s=0.05).start()
        try:
            time.sleep(0.3)
            assert watcher.written == []                     # not ended yet
            _store(fl, msgs[-1:])
        finally:
            watcher.stop()                                   # the final pass still sees the end
    assert [p.name for p in watcher.written] == [f"aerie-1-{STREAM}-1.bundle"]


def _with_positions(msgs: list[dict], *, read_at: int | None) -> list[dict]:
    """The same flight with what `step_report.step_payload` adds: target, goal fix and landmark map."""
    out = []
    for m in msgs:
        if m["type"] == "agent_step":
            i = m["payload"]["step"]
            p = {**m["payload"], "target_estimate": [100.0 + i, -50.0], "landmarks": {"Tower": [10.0, float(i)]},
                 "goal_fix": [120.5, -60.25] if read_at is not None and i >= read_at else None}
            m = {**m, "payload": p}
        out.append(m)
    return out


def test_success_lesson_carries_where_the_name_was_read_and_the_landmark_map() -> None:
    a = analyse(_with_positions(flight(), read_at=5), vehicle_id="v", start_seq=1)
    assert a is not None and a.status == "success"
    refined = json.loads(a.plan.plan_refined)
    assert refined["plan"] == json.loads(a.plan.master_plan)
    assert refined["goal"] == {"xy_m": [120.5, -60.2], "source": "name read"}
    assert refined["landmarks"] == {"Tower": [10.0, 6.0]}                # the last map the flight fused
    assert "120 m east, 60 m south of take-off" in a.plan.reflection_note


def test_failure_lesson_names_the_area_searched_in_vain() -> None:
    a = analyse(_with_positions(flight(end=FlightEnd(success=False)), read_at=None), vehicle_id="v", start_seq=1)
    assert a is not None and a.status == "failure"
    refined = json.loads(a.plan.plan_refined)
    assert refined["goal"] == {"xy_m": [106.0, -50.0], "source": "estimate"}
    # a failure's lesson: the key step's situation and the move to avoid there, nothing from another step
    assert a.decision.current_state == "over block 1"
    assert refined["avoid"] == [{"at_step": 1, "avoid": "turn_left", "prefer": None}]
    assert "Searched in vain around 106 m east, 50 m south" in a.plan.reflection_note

"""The onboard mission analysis and the ground's lessons of the same flight end as one main-plan lesson."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.messages import AgentStep, FlightEnd, FlightStart, Plan, PlanStep, Pose
from contract.records import STRATEGIC_PLAN
from ground_station.post_flight import analyse, export_analysis
from onboard.agent.mission_analysis import MissionAnalysis
from onboard.agent.mission_lessons import onboard_source, retire_merged, store_analysis
from onboard.inference.contracts import AnalysisOutput, SubGoal
from onboard.memory.bundle import import_bundle
from onboard.memory.embedder import MiniLMEmbedder
from onboard.memory.experience_store import ExperienceStore

TASK = "Fly to the kiosk north of the library"


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder.load()


def _analysis(reason: str) -> MissionAnalysis:
    a = AnalysisOutput("failure", 1, reason, [SubGoal("fly to the library", "navigate", "near it"),
                                              SubGoal("read the kiosk's name", "locate", "arrived")])
    return MissionAnalysis(a, "model", f"mission failed (timeout); key step 1: {reason}; next time: navigate -> locate")


def _flight(flight_id: str, analysis: MissionAnalysis | None) -> list[dict]:
    msgs = [{"type": "flight_start", "payload": FlightStart(flight_id=flight_id, task_instruction=TASK).encode()},
            {"type": "plan", "payload": Plan("kiosk", (PlanStep("library", "navigate"),)).encode()}]
    for i, d in enumerate([300.0, 250.0, 330.0, 320.0]):
        msgs.append({"type": "agent_step", "payload": AgentStep(
            step=i, current_state=f"over block {i}", action="forward", reason="towards the library", pose=Pose(i, 0.0),
            distance_estimate_m=d, goal="kiosk", strategy="navigate").encode()})
    if analysis is not None:
        msgs.append({"type": "mission_analysis", "payload": analysis.to_message(flight_id).encode()})
    msgs.append({"type": "flight_end", "payload": FlightEnd(success=False).encode()})
    return [{**m, "seq": i + 1} for i, m in enumerate(msgs)]


def _plans(store: ExperienceStore) -> list:
    return list(store.iter_experiences(STRATEGIC_PLAN))


def test_the_ground_lesson_of_a_flight_absorbs_the_onboard_analysis(tmp_path: Path, embedder) -> None:
    mine = _analysis("turned away from the library at step 1")
    other = _analysis("an older flight's analysis, no ground lesson yet")
    with ExperienceStore.open(tmp_path / "vehicle.sqlite", embedder) as vehicle, \
            ExperienceStore.open(tmp_path / "ground.sqlite", embedder) as ground:
        store_analysis(vehicle, "F1", TASK, {"sub_goals": []}, mine)
        store_analysis(vehicle, "F0", TASK, {"sub_goals": []}, other)
        assert [p.source for p in _plans(vehicle)] == [onboard_source("F1"), onboard_source("F0")]

        analysis = analyse(_flight("F1", mine), vehicle_id="v", start_seq=1)
        assert analysis is not None
        export_analysis(analysis, ground, tmp_path / "f1.bundle")
        import_bundle(vehicle, tmp_path / "f1.bundle")
        assert len(_plans(vehicle)) == 3  # before the merge: two lessons of flight F1 side by side
        assert len(retire_merged(vehicle)) == 1

        plans = _plans(vehicle)
        assert sorted(p.source for p in plans) == ["bundle:v", onboard_source("F0")]
        merged = next(p.record for p in plans if p.source == "bundle:v")
        assert "The plan did not reach the goal" in merged.reflection_note  # the ground's deterministic lesson
        assert "turned away from the library at step 1" in merged.reflection_note  # the model's analysis
        assert json.loads(merged.plan_refined)["onboard"]["flight_id"] == "F1"  # the merge key
        assert json.loads(merged.plan_refined)["onboard"]["key_timestep"] == 1
        # Re-importing the flight's bundle adds nothing, and the onboard record does not come back.
        assert import_bundle(vehicle, tmp_path / "f1.bundle").added == 0
        assert store_analysis(vehicle, "F1", TASK, {"sub_goals": []}, mine) is None
        assert len(_plans(vehicle)) == 2


def test_a_rule_based_analysis_is_not_folded_into_the_ground_lesson() -> None:
    rule = MissionAnalysis(AnalysisOutput.fallback(False, 1, "mission failed (timeout) after 4 moves"), "rule",
                           "mission failed (timeout) after 4 moves")
    with_rule = analyse(_flight("F2", rule), vehicle_id="v", start_seq=1)
    without = analyse(_flight("F2", None), vehicle_id="v", start_seq=1)
    assert with_rule is not None and without is not None and with_rule.plan == without.plan

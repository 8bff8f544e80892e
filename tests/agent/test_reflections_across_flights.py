"""Two missions in a row with the real SmolLM2 model and a real memory file: flight 2's plan prompt
carries what flight 1 reflected, its end-of-mission analysis included, and the plan is re-asked
mid-mission on the seeds' triggers (not only at take-off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.inference.contracts import AnalysisOutput, PlaceAnchorPlan
from tests.agent.toy_city import ToyCity
from tests.inference.conftest import _prepared

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


class Recording:
    """The real planner model, keeping each prompt it was asked (by contract) before it answers."""

    def __init__(self, model) -> None:
        self.model = model
        self.prompts: list[tuple[type, str]] = []

    def ask_sync(self, messages, contract, fallback):
        self.prompts.append((contract, "\n".join(m["content"] for m in messages)))
        return self.model.ask_sync(messages, contract, fallback)

    def generate_json(self, messages, schema):
        return self.model.generate_json(messages, schema)


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from onboard.inference.planner_model import PlannerModel
    from onboard.inference.settings import InferenceConfig

    _prepared("smollm2-135m-instruct")
    m = PlannerModel.from_config(InferenceConfig(call_deadline_s=120.0))
    yield m
    m.close()


def _fly(store, model, flight_id: str) -> tuple[GraphAgent, Recording]:
    rec = Recording(model)
    agent = GraphAgent(AgentConfig(planner="llm", llm_plan_wait=True), ["Tower"], experience_store=store,
                       plan_model=rec, flight_id=flight_id)
    agent.reset(DESCRIPTION)
    ToyCity().fly(agent, start=0, see_landmarks=lambda step: step >= 2)  # Tower comes into view at step 2
    agent.finish_mission(deadline_s=120.0)
    return agent, rec


def test_the_second_flight_plans_with_the_first_flights_reflections(tmp_path: Path, model) -> None:
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore

    with ExperienceStore.open(tmp_path / "memory.sqlite", MiniLMEmbedder.load()) as store:
        first, rec1 = _fly(store, model, "F1")
        assert first.state.static.reflections.inherited == 0
        contracts = [c for c, _ in rec1.prompts]
        assert contracts[0] is PlaceAnchorPlan and contracts[-1] is AnalysisOutput  # plan first, analysis last
        assert contracts.count(PlaceAnchorPlan) >= 2  # a re-plan was asked mid-mission, on a trigger
        frames = first.state.dynamic.trajectory_history
        assert any(f.replan_triggers for f in frames[1:])
        assert max(f.plan_version for f in frames) >= 1  # ... and a model plan was flown
        analysis = first.state.dynamic.mission_analysis
        assert analysis.source in ("model", "fallback") and analysis.text
        written = [t for f, t in store.conn.execute("SELECT flight_id, text FROM reflections") if f == "F1"]
        assert written and written[-1] == analysis.text

        second, rec2 = _fly(store, model, "F2")
        inherited = second.state.static.reflections.inherited
        assert inherited == min(3, len(written))
        plan_prompt = rec2.prompts[0]
        assert plan_prompt[0] is PlaceAnchorPlan
        assert "Recent reflections" in plan_prompt[1]
        assert analysis.text in plan_prompt[1]  # flight 1's mission analysis steers flight 2's plan
        assert second.summary()["reflections_inherited"] == inherited

"""PlannerModel: SmolLM2 contract calls on a worker (thread and process), deadlines -> fallback."""

import asyncio
import os

import pytest

from onboard.inference.contracts import NavigationDecisionOutput, PlaceAnchorPlan
from onboard.inference.manifest import ModelFileError
from onboard.inference.planner_model import PlannerModel
from onboard.inference.settings import InferenceConfig

MESSAGES = [{"role": "system", "content": "You plan for a drone. Answer with JSON."},
            {"role": "user", "content": "Target: a bicycle. A street is ahead, a park to the left. Where next?"}]


def _cfg(**kw):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    return InferenceConfig(model_dir=os.environ.get("AERIE_MODEL_DIR") or InferenceConfig().model_dir, n_ctx=1024, **kw)


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_contract_call_through_a_worker(kind):
    try:
        planner = PlannerModel.from_config(_cfg(worker_kind=kind, call_deadline_s=60.0))
    except ModelFileError as exc:
        pytest.skip(f"{exc} (run `make models`)")
    try:
        r = asyncio.run(planner.ask(MESSAGES, PlaceAnchorPlan, PlaceAnchorPlan.fallback))
        assert isinstance(r.value, PlaceAnchorPlan) and not r.used_fallback
    finally:
        planner.close()


def test_deadline_gives_the_fallback_with_the_reason():
    try:
        planner = PlannerModel.from_config(_cfg(worker_kind="process", call_deadline_s=0.05))
    except ModelFileError as exc:
        pytest.skip(f"{exc} (run `make models`)")
    planner.worker.start_timeout_s = 60
    try:
        r = asyncio.run(planner.ask_or_fallback(MESSAGES, NavigationDecisionOutput, NavigationDecisionOutput.fallback))
        assert r.used_fallback and r.value == NavigationDecisionOutput.fallback()
        assert "DeadlineExceeded" in r.errors[0]
    finally:
        planner.close()

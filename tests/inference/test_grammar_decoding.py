"""Greedy-first grammar decoding gives the stock sampler chain's answer, token for token.

The model tests run SmolLM2-135M-Instruct (the real GGUF) twice on the same
prompt, once through llama-cpp-python's own penalties → grammar → greedy chain
and once through :mod:`onboard.inference.grammar_decoding`, and compare bytes.
"""

import json

import numpy as np
import pytest

from onboard.inference.contracts import PLANNER_CONTRACTS, PlanOutput
from onboard.inference.grammar_decoding import GrammarDecodeStats, _first_max, greedy_grammar_first
from onboard.inference.json_contract import parse, schema_of
from sim.benchmark.grammar_decoding import plan_prompts

CONTRACT_PROMPTS = {
    "PlanOutput": "Task: find the person in a red jacket near the old mill. Make a short plan of sub-goals.",
    "NavigationDecisionOutput": "Current goal: reach the water tower 120 m north-east. Decide the next movement.",
    "SearchOutput": "Current goal: search the field east of the river for a hiker. Decide the next movement.",
    "LocateOutput": "A person is visible at pixel 312, 208 in a 640x480 image. Lock the target position.",
    "PlaceAnchorPlan": "Target: a bicycle. The panorama shows a street ahead and a park to the left. Plan the next heading.",
    "AnalysisOutput": ("The mission to the cafe failed after 12 steps; at step 4 the drone turned east, away from "
                       "the target. Analyse the mission and rewrite the plan."),
}


def _greedy(values):
    """llama.cpp's llama_sampler_greedy_apply, literally."""
    selected = 0
    for i in range(1, len(values)):
        if values[i] > values[selected]:
            selected = i
    return selected


@pytest.mark.parametrize("values", [
    [1.0, 3.0, 3.0, 2.0],
    [3.0, 3.0],
    [-np.inf, -np.inf, -np.inf],
    [-np.inf, 0.5, -np.inf, 0.5],
    [np.nan, 5.0, 6.0],
    [1.0, np.nan, 6.0, 6.0],
    [-np.inf, np.nan, -np.inf],
])
def test_first_max_is_llama_cpp_greedy(values):
    assert _first_max(np.array(values, dtype=np.float32)) == _greedy(values)


def test_a_llm_without_the_hook_point_is_left_alone():
    class NotLlama:
        pass

    llm = NotLlama()
    with greedy_grammar_first(llm) as stats:
        assert not hasattr(llm, "_init_sampler")
    assert not stats.used


@pytest.fixture(scope="module")
def model(smollm2_model):
    return smollm2_model


def _both(model, messages, schema):
    """(stock answer, greedy-first answer, greedy-first stats), each from a fresh prompt evaluation."""
    out = []
    for first in (False, True):
        model.grammar_first = first
        model.llm.reset()  # no KV-cache reuse: both answers start from the same full prompt pass
        out.append(model.chat(messages, json_schema=schema))
    model.grammar_first = True
    assert model.last_decode.used and model.last_decode.tokens > 0
    return out[0], out[1], model.last_decode


# One real plan prompt in `make test`; the second and every other contract in `make test-all`
# (each answer is decoded twice with the real model, ~10 s a case on 2 cores).
@pytest.mark.parametrize("i", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_plan_prompts_give_byte_identical_answers(model, i):
    messages = plan_prompts(2)[i][1]
    old, new, stats = _both(model, messages, schema_of(PlanOutput))
    assert new == old
    parse(PlanOutput, new)
    assert 0 < stats.full_passes < stats.tokens  # both branches were taken


@pytest.mark.slow
@pytest.mark.parametrize("contract", PLANNER_CONTRACTS, ids=lambda c: c.__name__)
def test_every_contract_gives_byte_identical_answers(model, contract):
    messages = [{"role": "system", "content": "You are the planner of an autonomous drone. Answer only with JSON."},
                {"role": "user", "content": CONTRACT_PROMPTS[contract.__name__]}]
    old, new, _ = _both(model, messages, schema_of(contract))
    assert new == old
    parse(contract, new)


def test_a_greedy_token_the_grammar_rejects_is_resampled_under_the_grammar(model):
    messages = [{"role": "user", "content": "Say hello to the pilot in one friendly sentence."}]
    model.llm.reset()
    free = model.chat(messages, max_tokens=8)
    assert not free.lstrip().startswith("{")  # unconstrained, the model does not open a JSON object
    old, new, stats = _both(model, messages, schema_of(PlanOutput))
    assert new == old
    assert stats.full_passes >= 1
    parse(PlanOutput, new)


def test_other_sampling_settings_keep_the_stock_sampler(model):
    grammar_schema = json.dumps(schema_of(PlanOutput))
    from llama_cpp.llama_grammar import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(grammar_schema, verbose=False)
    for kw in (dict(temperature=0.7), dict(temperature=0.0, repeat_penalty=1.1)):
        with greedy_grammar_first(model.llm) as stats:
            model.llm.create_completion("Plan: ", max_tokens=4, grammar=grammar, **kw)
        assert not stats.used, kw
        assert "_init_sampler" not in vars(model.llm)


def test_the_hook_is_removed_when_the_call_fails(model):
    with pytest.raises(RuntimeError):
        with greedy_grammar_first(model.llm, GrammarDecodeStats()):
            assert "_init_sampler" in vars(model.llm)
            raise RuntimeError("boom")
    assert "_init_sampler" not in vars(model.llm)

"""Planner contracts: schemas, validation, retry once, then the documented fallback."""

import json

import pytest

from onboard.inference.contracts import (
    MOVEMENTS,
    PLANNER_CONTRACTS,
    LocateOutput,
    NavigationDecisionOutput,
    PlaceAnchorPlan,
    PlanOutput,
    SearchOutput,
)
from onboard.inference.json_contract import ContractError, call_contract, parse, schema_of, to_dict


def test_schemas_are_strict_and_ordered():
    s = schema_of(PlanOutput)
    assert s["required"] == ["sub_goals", "reason"] and s["additionalProperties"] is False
    item = s["properties"]["sub_goals"]["items"]
    assert item["properties"]["strategy"]["enum"] == ["navigate", "search", "locate"]
    assert s["properties"]["sub_goals"]["minItems"] == 1
    nav = schema_of(NavigationDecisionOutput)
    assert nav["properties"]["movement"]["enum"] == list(MOVEMENTS)
    assert nav["properties"]["confidence"] == {"type": "number", "minimum": 0.0, "maximum": 1.0}
    pa = schema_of(PlaceAnchorPlan)
    assert list(pa["properties"]) == ["goal_flag", "angle", "discovered_context"]
    assert pa["properties"]["discovered_context"]["required"] == ["goal_scene_type", "why"]


@pytest.mark.parametrize("contract", PLANNER_CONTRACTS)
def test_fallbacks_satisfy_their_own_contract(contract):
    value = contract.fallback()
    assert parse(contract, json.dumps(to_dict(value))) == value


def test_place_anchor_example_from_the_design_parses():
    text = '{"goal_flag": true, "angle": 15.0, "discovered_context": {"goal_scene_type": "kitchen", "why": "likely"}}'
    plan = parse(PlaceAnchorPlan, text)
    assert plan.goal_flag is True and plan.angle == 15.0 and plan.discovered_context.goal_scene_type == "kitchen"


@pytest.mark.parametrize(
    "contract, text, message",
    [
        (PlaceAnchorPlan, '{"goal_flag": true, "angle": 200, "discovered_context": {"goal_scene_type": "x", "why": "y"}}', "angle: 200 outside"),
        (SearchOutput, '{"movement": "fly", "reason": "r", "decision": "continue_search", "confidence": 0.5}', "movement: 'fly' is not one of"),
        (LocateOutput, '{"status": "TARGET_LOCKED", "selected_pos": [1]}', "selected_pos: 1 items"),
        (PlanOutput, '{"sub_goals": [], "reason": "r"}', "sub_goals: 0 items"),
        (PlanOutput, '{"sub_goals": [{"goal": "g", "strategy": "search"}], "reason": "r"}', "missing desired_state"),
        (NavigationDecisionOutput, '{"movement": "stop"', "not valid JSON"),
        (LocateOutput, '{"status": "TARGET_LOCKED", "selected_pos": [1, 2], "extra": 1}', "unexpected extra"),
    ],
)
def test_invalid_answers_name_the_field(contract, text, message):
    with pytest.raises(ContractError, match=message):
        parse(contract, text)


def test_retry_once_with_the_error_then_succeed():
    answers = iter(['{"status": "LOCKED", "selected_pos": [1, 2]}', '{"status": "TARGET_LOCKED", "selected_pos": [3, 4]}'])
    seen = []

    def generate(messages, schema):
        seen.append(messages)
        return next(answers)

    r = call_contract(generate, [{"role": "user", "content": "where?"}], LocateOutput, fallback=LocateOutput.fallback)
    assert r.value == LocateOutput("TARGET_LOCKED", [3.0, 4.0]) and r.attempts == 2 and not r.used_fallback
    assert "invalid" in seen[1][-1]["content"] and "LOCKED" in seen[1][-1]["content"]


def test_two_bad_answers_give_the_documented_fallback():
    r = call_contract(lambda m, s: "not json", [], PlaceAnchorPlan, fallback=PlaceAnchorPlan.fallback)
    assert r.used_fallback and r.attempts == 2 and len(r.errors) == 2
    assert r.value.goal_flag is False and r.value.angle == 0 and r.value.discovered_context.goal_scene_type == "corridor"

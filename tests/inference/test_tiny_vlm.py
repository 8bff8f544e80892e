"""A multimodal GGUF the tests build (sim/tiny_vlm.py), loaded through `open_vlm` as a user's weights are.

Its weights are random, so its answers are noise: these tests judge the plumbing. A camera frame
the simulator renders and the agent's two maps reach the model as image embeddings, a structured
answer is held to the contract by the grammar (a confidence within [0, 1] too), and an answer outside the
contract is retried and then replaced by the contract's fallback, counted.
"""

from __future__ import annotations

import json

import pytest

from onboard.inference.contracts import LocateOutput, NavigationDecisionOutput, PlaceAnchorPlan, SearchOutput
from onboard.inference.json_contract import call_contract
from onboard.inference.llama_backend import vision_messages
from onboard.inference.manifest import load_manifest, read_local_checksums, sha256_file
from sim.tiny_vlm import TinyVlmShape, build_tiny_vlm

PROMPT = "The camera frame, the landmark map and the semantic map. Which way to the goal? JSON only."


def test_the_builder_is_idempotent_and_remakes_a_changed_file(tmp_path):
    first = build_tiny_vlm(tmp_path)
    assert first.built and first.model.stat().st_size < 4_000_000 and first.mmproj.stat().st_size < 1_000_000
    sums = read_local_checksums(tmp_path)
    assert sums[first.model.name] == sha256_file(first.model) and sums[first.mmproj.name] == sha256_file(first.mmproj)
    assert not build_tiny_vlm(tmp_path).built  # found, checksums matching
    first.mmproj.write_bytes(first.mmproj.read_bytes()[:-1] + b"\0")
    again = build_tiny_vlm(tmp_path)
    assert again.built and sha256_file(again.mmproj) == sums[again.mmproj.name]  # same seed, same bytes


def test_the_files_say_what_llama_cpp_needs_to_know():
    """The keys convert_hf_to_gguf.py writes for SmolVLM: a Llama text model and an Idefics3 projector."""
    import gguf

    from sim.tiny_vlm import write_projector, write_text_model

    def fields(path):
        r = gguf.GGUFReader(path)
        return {k: f.contents() for k, f in r.fields.items() if not k.startswith("GGUF.")}, {t.name for t in r.tensors}

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        write_text_model(Path(tmp) / "t.gguf", TinyVlmShape())
        write_projector(Path(tmp) / "p.gguf", TinyVlmShape())
        text, text_tensors = fields(Path(tmp) / "t.gguf")
        proj, proj_tensors = fields(Path(tmp) / "p.gguf")
    assert text["general.architecture"] == "llama" and text["tokenizer.ggml.model"] == "gpt2"
    assert "<fake_token_around_image>" in text["tokenizer.ggml.tokens"] and "<global-img>" in text["tokenizer.ggml.tokens"]
    assert {"token_embd.weight", "output.weight", "blk.1.ffn_down.weight"} <= text_tensors
    assert proj["general.architecture"] == "clip" and proj["clip.projector_type"] == "idefics3"
    assert proj["clip.vision.projection_dim"] == text["llama.embedding_length"]
    assert {"v.patch_embd.weight", "v.position_embd.weight", "v.blk.1.attn_out.weight", "mm.model.fc.weight"} <= proj_tensors


def test_the_manifest_names_it_as_a_built_vlm():
    spec = load_manifest().get("tiny-vlm")
    assert spec.task == "vlm" and spec.format == "gguf" and spec.companions["mmproj"]
    assert spec.source["kind"] == "test-build" and "sim.tiny_vlm" in spec.source["hint"]


def test_a_frame_and_two_maps_reach_the_model_as_image_tokens(tiny_vlm, flight_images):
    shape = TinyVlmShape()
    tiny_vlm.chat_with_images(PROMPT, [], max_tokens=1)
    text_only = tiny_vlm.last_prompt_tokens
    tiny_vlm.chat_with_images(PROMPT, flight_images[:1], max_tokens=1)
    one = tiny_vlm.last_prompt_tokens - text_only
    tiny_vlm.chat_with_images(PROMPT, flight_images, max_tokens=1)
    three = tiny_vlm.last_prompt_tokens - text_only
    # Each image: cut into 2 x 2 tiles of image_size plus an overview, each tile tokens_per_tile embeddings.
    assert one >= 5 * shape.tokens_per_tile
    assert three >= 3 * 5 * shape.tokens_per_tile and three > 2 * one


def test_the_answer_is_grammar_constrained_json_that_validates(tiny_vlm, flight_images):
    """Under the grammar, noise still comes out as a LocateOutput; without it, it is not JSON at all."""
    result = call_contract(lambda m, s: tiny_vlm.chat(m, json_schema=s), vision_messages(PROMPT, flight_images),
                           LocateOutput, fallback=LocateOutput.fallback)
    assert not result.used_fallback and result.attempts == 1
    assert result.value.status in ("TARGET_LOCKED", "SEARCHING_VICINITY") and len(result.value.selected_pos) == 2
    assert tiny_vlm.last_decode.used and tiny_vlm.last_decode.tokens > 5
    free = tiny_vlm.chat_with_images(PROMPT, flight_images, max_tokens=40)
    with pytest.raises(json.JSONDecodeError):
        json.loads(free)


def test_strings_under_the_grammar_hold_no_control_characters(tiny_vlm, flight_images):
    """llama-cpp-python's own schema rule lets raw control bytes into strings, which JSON refuses; ours does not."""
    schema = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 60}}, "required": ["reason"],
              "additionalProperties": False}
    loose_refused = 0
    for k, prompt in enumerate(("Why?", PROMPT, "Which way to the goal? JSON only.")):
        messages = vision_messages(prompt, flight_images[k:k + 1])
        ours = tiny_vlm.chat(messages, json_schema=schema, max_tokens=400)
        assert not any(ord(c) < 0x20 for c in json.loads(ours)["reason"])  # strict JSON: parses
        loose = tiny_vlm.llm.create_chat_completion(messages=messages, max_tokens=400, temperature=0.0,
                                                    response_format={"type": "json_object", "schema": schema})
        try:
            json.loads(loose["choices"][0]["message"]["content"])
        except json.JSONDecodeError:
            loose_refused += 1
    assert loose_refused  # why schema_grammar exists


@pytest.mark.parametrize("contract", [NavigationDecisionOutput, SearchOutput])
def test_the_experts_contracts_come_back_valid_from_a_frame_and_two_maps(tiny_vlm, flight_images, contract):
    """The vlm planner's questions: noise, held by the grammar to the contract, its confidence within [0, 1]."""
    result = call_contract(lambda m, s: tiny_vlm.chat(m, json_schema=s), vision_messages(PROMPT, flight_images),
                           contract, fallback=contract.fallback, retries=0)
    assert not result.used_fallback and result.attempts == 1 and 0.0 <= result.value.confidence <= 1.0
    assert tiny_vlm.last_decode.used and tiny_vlm.last_prompt_tokens > 3 * 5 * TinyVlmShape().tokens_per_tile


def test_a_bounded_number_is_held_by_the_grammar_only_in_the_unit_interval():
    """[0, 1] gets its own rule; another range (PlaceAnchorPlan's angle) is left to the validator."""
    from onboard.inference.json_contract import schema_of
    from onboard.inference.llama_backend import _unit_bounded

    assert _unit_bounded(schema_of(NavigationDecisionOutput)) == {"confidence"}
    assert _unit_bounded(schema_of(PlaceAnchorPlan)) == set()


def test_an_answer_outside_the_contract_falls_back_and_is_counted(tiny_vlm, flight_images):
    """Noise without the grammar is not JSON: retried once, then the contract's fallback, both errors kept."""
    result = call_contract(lambda m, s: tiny_vlm.chat(m, json_schema=None, max_tokens=40),
                           vision_messages(PROMPT, flight_images), NavigationDecisionOutput,
                           fallback=NavigationDecisionOutput.fallback, retries=1)
    assert result.used_fallback and result.attempts == 2 and len(result.errors) == 2
    assert all("not valid JSON" in e for e in result.errors)
    assert result.value == NavigationDecisionOutput.fallback()

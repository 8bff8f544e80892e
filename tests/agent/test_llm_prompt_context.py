"""The plan prompt carries the seeds' context from the real memories, fitted to the model's window.

Reflection window, anchor graph, episodic memory and experience store are the
real objects (the store with the real MiniLM embedder); only the plan model is
a canned answer, recorded to read the prompt it was sent.
"""

import json
from dataclasses import replace

import pytest

from contract.records import NavigateExperience, StrategicPlan, TaskExperience
from onboard.agent import place_memory
from onboard.agent.agent import GraphAgent
from onboard.agent.prompt_context import Section, estimate_tokens, fit
from onboard.agent.settings import AgentConfig
from onboard.memory.settings import MemoryConfig
from tests.agent.test_llm_replan import PLACE, _model
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


class Recording:
    def __init__(self, answer):
        self.model = _model([answer])
        self.prompts: list[str] = []

    def ask_sync(self, messages, contract, fallback):
        self.prompts.append(messages[-1]["content"])
        return self.model.ask_sync(messages, contract, fallback)

    def close(self):
        self.model.close()


def _agent(model, store=None, **kw):
    cfg = replace(AgentConfig(), planner="llm", llm_plan_wait=True, **kw)
    return GraphAgent(cfg, ["Tower"], plan_model=model, experience_store=store)


def test_the_prompt_carries_reflections_navigation_context_hints_summary_and_moves():
    model, city = Recording(json.dumps(PLACE)), ToyCity()
    try:
        agent = _agent(model, retrieval_interval=4, llm_prompt_tokens=1024)  # room for every section
        agent.reset(DESCRIPTION)
        s = agent.state.static
        for text in ("r1 circled the park", "r2 went too far east", "r3 missed the bridge", "r4 never read the name"):
            s.reflections.add(text)
        node = 0
        for step in range(4):
            node = agent.act(city.observe(node, step, 60)).node
        # Been there before: the anchor graph hears of a flight to the commanded waypoint and back, so the
        # next step's own move lands on an anchor of the same place (a same-space candidate, 002 §8).
        d = agent.state.dynamic
        bearing, came_from = d.trajectory_history[-1].movement["bearing"], d.trail[-2]
        place_memory.record_move(s.anchors, bearing, node)
        place_memory.record_move(s.anchors, (bearing + 180.0) % 360.0, came_from)
        agent.act(city.observe(node, 4, 56))  # the interval re-plan
        assert s.anchors.localisation_candidates()
        prompt = model.prompts[-1]
        assert "r1 circled" not in prompt  # the window keeps the last three
        for text in ("r2 went too far east", "r3 missed the bridge", "r4 never read the name"):
            assert text in prompt
        assert "## Navigation Context" in prompt and "Same-space candidates (hints, not merged): A" in prompt
        assert "goal_scene_type=landmark Tower" in prompt  # the discovered-context FIFO (Tower fixed at step 0)
        assert "goal_scene_type=street to the west" in prompt  # and the planner's own earlier answer
        assert "## What you know so far" in prompt and "Landmarks fixed: Tower" in prompt
        assert s.episodic.semantic_summary in prompt and "Covered:" in s.episodic.semantic_summary
        assert "NE (angle " in s.episodic.semantic_summary  # the turn to the estimate, in the answer's own terms
        assert "4. You were at" in prompt  # the episodic sentence of the 4th move
        assert "Current heading:" in prompt
        frame = agent.state.dynamic.trajectory_history[-1]
        assert frame.replan_triggers == ["interval"]
        assert frame.prompt["reflections"] == ["r2 went too far east", "r3 missed the bridge", "r4 never read the name"]
        assert any(x.startswith("hint:A") for x in frame.prompt["navigation"])
        assert "dc1:landmark Tower" in frame.prompt["navigation"]
        assert frame.prompt["episodic"][-1] == "move4" and frame.prompt["summary"] == ["summary"]
    finally:
        model.close()


def test_without_prompt_context_the_prompt_is_the_old_one():
    model, city = Recording(json.dumps(PLACE)), ToyCity()
    try:
        agent = _agent(model, use_prompt_context=False, use_replan=False)
        agent.reset(DESCRIPTION)
        agent.act(city.observe(0, 0, 60))
        assert "Navigation Context" not in model.prompts[0] and "What you know" not in model.prompts[0]
    finally:
        model.close()


def test_sections_are_cut_lowest_priority_and_oldest_first():
    sections = [Section("reflections", "## R", ("keep me",), ("keep",)),
                Section("summary", "## S", ("s" * 90,), ("summary",)),
                Section("navigation", "## N", tuple(f"n{i} " + "x" * 60 for i in range(5))),
                Section("episodic", "## E", tuple(f"e{i} " + "y" * 60 for i in range(10)),
                        tuple(f"move{i}" for i in range(10)))]
    full = sum(estimate_tokens(s.text()) for s in sections)
    kept, dropped = fit(sections, full, 0)
    assert kept == sections and dropped == []
    kept, dropped = fit(sections, full - 30, 0)  # a few episodic lines go, oldest first
    ep = kept[3]
    assert ep.lines[-1].startswith("e9") and not ep.lines[0].startswith("e0") and ep.items[0] != "move0"
    assert kept[2] == sections[2]
    kept, dropped = fit(sections, 110, 0)
    assert dropped == ["episodic"] and 0 < len(kept[2].lines) < 5 and kept[2].lines[-1].startswith("n4")
    assert kept[:2] == sections[:2]
    assert sum(estimate_tokens(s.text()) for s in kept if s.lines) <= 110
    kept, dropped = fit(sections, 10, 0)  # room for the highest priority only
    assert dropped == ["summary", "navigation", "episodic"] and kept[0] == sections[0]
    assert fit(sections, 5, 0)[1] == ["reflections", "summary", "navigation", "episodic"]


def test_a_long_flight_stays_within_the_budget():
    model, city = Recording(json.dumps(PLACE)), ToyCity()
    try:
        agent = _agent(model, retrieval_interval=1, llm_prompt_tokens=500)
        agent.reset(DESCRIPTION)
        for i in range(12):
            agent.state.static.episodic.record_move((i, i), ["north", "east"], "north", (i, i + 1), "a long note " * 5)
        agent.act(city.observe(0, 0, 60))
        frame = agent.state.dynamic.trajectory_history[-1]
        assert frame.prompt["tokens"] <= 500 and "episodic" in frame.prompt["dropped"] or frame.prompt["episodic"]
        assert estimate_tokens(model.prompts[-1]) <= 500
    finally:
        model.close()


@pytest.fixture
def store(tmp_path):
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore

    with ExperienceStore.open(tmp_path / "memory.sqlite", MiniLMEmbedder.load(), MemoryConfig()) as s:
        yield s


@pytest.mark.parametrize("description, mode", [
    (DESCRIPTION, "single"),  # 9 words: medium
    ("Cafe Aalto is about 140 m north-east of Tower, past the small park on the corner", "hierarchical"),
    ("Cafe Aalto near Tower.", "skip"),  # 4 words: simple
])
def test_adaptive_retrieval_chooses_by_complexity_and_the_framelog_counts_hits(store, description, mode):
    plan = store.add_strategic_plan(StrategicPlan(description, "{}", "the cafe is behind the tower", "{}", "success"))
    task = store.add_task_experience(TaskExperience("fly to the area NE of Tower", "navigate", "success", "ok"),
                                     parent_uid=plan)
    store.add_navigate_experience(NavigateExperience("NE of Tower", "success", "approach from the south street",
                                                     "{}", f"Task: {description}"), parent_uid=task)
    model, city = Recording(json.dumps(PLACE)), ToyCity()
    try:
        agent = _agent(model, store, use_replan=False)  # the prompt's retrieval only
        agent.reset(description)
        agent.act(city.observe(0, 0, 60))
        frame = agent.state.dynamic.trajectory_history[0]
        assert frame.retrieval["mode"] == mode
        assert frame.retrieval["hits"]["strategic_plan_memory"] == 1  # the plan priors' search, beside the prompt's
        if mode == "skip":
            assert "navigate_experience_memory" not in frame.retrieval["hits"]
            assert "approach from the south street" not in model.prompts[0]
        else:
            assert frame.retrieval["hits"]["navigate_experience_memory"] == 1
            assert "approach from the south street" in model.prompts[0]
            assert len(frame.prompt["experiences"]) == 1
    finally:
        model.close()


def test_the_token_estimate_covers_smollm2s_tokenizer():
    """The budget is kept by an estimate; the real tokenizer must never count more on a full prompt."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    import llama_cpp

    from tests.inference.conftest import _prepared

    path = _prepared("smollm2-135m-instruct")
    model, city = Recording(json.dumps(PLACE)), ToyCity()
    try:
        agent = _agent(model, retrieval_interval=1)
        agent.reset(DESCRIPTION)
        for text in ("circled the park twice", "went 300 m too far east", "never read the name"):
            agent.state.static.reflections.add(text)
        node = 0
        for step in range(40):
            action = agent.act(city.observe(node, step, 60))
            if action.kind == "arrive":
                break
            node = action.node
    finally:
        model.close()
    vocab = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
    for prompt in model.prompts:
        real = len(vocab.tokenize(prompt.encode(), add_bos=False))
        assert real <= estimate_tokens(prompt), (real, estimate_tokens(prompt))
    longest = max(model.prompts, key=len)
    assert len(vocab.tokenize(longest.encode(), add_bos=False)) > 0.6 * estimate_tokens(longest)  # not absurdly loose

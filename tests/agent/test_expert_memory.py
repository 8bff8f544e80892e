"""The navigate and search experts retrieve their own collection; a hit changes the move chosen."""

import json
from dataclasses import replace

import pytest

from contract.records import NavigateExperience, SearchLocateExperience
from onboard.agent.agent import GraphAgent
from onboard.agent.expert_memory import action_bearing
from onboard.agent.settings import AgentConfig
from onboard.memory.settings import MemoryConfig
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


@pytest.fixture
def store(tmp_path, embedder):
    from onboard.memory.experience_store import ExperienceStore

    with ExperienceStore.open(tmp_path / "memory.sqlite", embedder, MemoryConfig()) as s:
        yield s


def _agent(store=None, **over):
    return GraphAgent(replace(AgentConfig(), reader="parser", **over), ["Tower"], experience_store=store)


def _first_step(store=None, **over):
    city, agent = ToyCity(), _agent(store, **over)
    agent.reset(DESCRIPTION)
    action = agent.act(city.observe(0, 0, 60))
    return city, agent, action


def test_action_bearing_reads_the_ground_analysers_action_strings():
    assert action_bearing("move to waypoint 12 bearing 90") == 90.0
    assert action_bearing("look up from 60 m") is None and action_bearing(None) is None


@pytest.mark.parametrize("status, refined", [
    ("success", {"at_step": 0, "avoid": None, "prefer": "move to waypoint 1 bearing 90"}),
    ("failure", {"at_step": 0, "avoid": "move to waypoint 9 bearing 0", "prefer": None}),
])
def test_a_retrieved_experience_here_changes_the_move(store, status, refined):
    city, plain, action = _first_step()
    assert city.moves(0)[0].node == action.node == 9  # north first when both ways are as good
    here = plain.state.dynamic.current_state
    store.add_navigate_experience(NavigateExperience("fly to the area NE of Tower", status, "lesson",
                                                     json.dumps(refined), here))
    _, agent, action = _first_step(store)
    assert action.node == 1  # east, as the experience says
    frame = agent.state.dynamic.trajectory_history[0]
    assert frame.retrieval["hits"]["navigate_experience_memory"] == 1
    assert "past flight's experience" in frame.reason
    hint = agent.state.dynamic.expert_hints[0]
    assert hint.success == (status == "success") and hint.similarity >= 0.99
    _, off, action = _first_step(store, use_expert_retrieval=False)
    assert action.node == 9
    assert "navigate_experience_memory" not in off.state.dynamic.trajectory_history[0].retrieval.get("hits", {})


def test_a_dissimilar_experience_or_another_collection_steers_nothing(store):
    _, plain, _ = _first_step()
    here = plain.state.dynamic.current_state
    refined = json.dumps({"prefer": "move to waypoint 1 bearing 90"})
    store.add_search_experience(SearchLocateExperience("search", "success", "lesson", refined, here))
    store.add_navigate_experience(NavigateExperience("g", "success", "lesson", refined, "a quiet lake at dawn"))
    _, agent, action = _first_step(store)
    assert action.node == 9
    assert agent.state.dynamic.trajectory_history[0].retrieval["hits"].get("navigate_experience_memory", 0) == 0


def test_experts_retrieve_every_retrieval_interval_steps_and_on_a_sub_goal_change(store):
    city, agent = ToyCity(pois={}), _agent(store, retrieval_interval=3)  # no café: the search goes on
    agent.reset(DESCRIPTION)
    city.fly(agent, start=0, limit=30)
    frames = agent.state.dynamic.trajectory_history
    atomic = ("navigate_experience_memory", "search_and_locate_memory")
    asked = [f.timestep for f in frames if any(c in f.retrieval.get("hits", {}) for c in atomic)]
    strategies = [f.strategy for f in frames]
    first_search = strategies.index("search")
    assert asked[:2] == [0, 3]
    assert first_search in asked  # the search expert asks its own collection when its sub-goal starts
    end = strategies.index("locate") if "locate" in strategies else len(frames)
    before = [t for t in asked if t < end]
    assert all(b - a <= 3 for a, b in zip(before, before[1:]))
    searched = [f for f in frames if f.strategy == "search" and f.timestep in asked]
    assert all("search_and_locate_memory" in f.retrieval["hits"] for f in searched)

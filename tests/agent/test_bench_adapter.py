"""The benchmark adapter, the agent names, the onboard/sim boundary, and a short benchmark run."""

import ast
from pathlib import Path

import pytest

from onboard.vocab.observation import AgentObservation


def test_onboard_agent_imports_no_sim_or_ground_station():
    for path in Path("onboard/agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                assert not n.startswith(("sim", "ground_station")), f"{path} imports {n}"


def test_an_agent_on_the_benchmarks_contract_is_driven_by_the_runner():
    """The baselines speak `agent_api`; the runner's observation reaches them whole and their action comes back."""
    from onboard.vocab.observation import AgentAction, LandmarkSighting, NeighbourMove, PoiSighting
    from sim.benchmark.agent_api import Action
    from sim.benchmark.episode_ports import ContractAgent

    seen = []

    class Baseline:
        name = "b"

        def act(self, obs):
            seen.append(obs)
            return Action.look_up(60.0, "why", 7) if obs.step == 3 else Action("fly sideways")

    class NoSensor:
        def image(self):
            return None

    agent = ContractAgent(Baseline(), NoSensor())
    obs = AgentObservation(3, 40, (NeighbourMove(7, 44.0, 51.5),), (LandmarkSighting("Kiasma", 10.0, 300.0),),
                           (PoiSighting("Café Engel", 200.0, 30.0),), altitude_m=40.0, look_up_ceiling_m=118.0,
                           heading=90.0)
    assert agent.act(obs) == AgentAction.look_up(60.0, "why", 7)
    o = seen[0]
    assert (o.step, o.steps_left, o.heading, o.altitude_m, o.look_up_ceiling_m) == (3, 40, 90.0, 40.0, 118.0)
    assert (o.neighbours[0].node, o.neighbours[0].direction, o.neighbours[0].distance) == (7, "NE", 51.5)
    assert o.landmarks[0].name == "Kiasma" and o.pois[0].name == "Café Engel"
    # an action the runner has no word for is a move to nowhere: the runner spends the step on it
    assert agent.act(AgentObservation(4, 39, ())) == AgentAction.move(None, "")


@pytest.fixture(scope="module")
def world_and_tasks():
    from sim.benchmark.tasks import load_tasks, resolve_all
    from sim.world.cache import load_world

    world = load_world(None, verbose=False)
    city, tasks = load_tasks("bench/tasks/helsinki_public_100.json")
    return world, resolve_all(city, tasks, world)


def test_agent_names_are_registered(world_and_tasks):
    from sim.benchmark.runner import load_agent

    world, _ = world_and_tasks
    for name in ("geometric", "geometric-no-reflection", "geometric-no-plan", "geometric-no-anchors"):
        assert load_agent(name, world).name == name
    assert load_agent("sim.benchmark.aerie_agents:geometric", world).name == "geometric"


def test_geometric_on_twelve_public_tasks(world_and_tasks):
    from sim.benchmark.runner import run_tasks

    world, tasks = world_and_tasks
    res = run_tasks(world, tasks[:12], "geometric", "prep", progress=False)
    assert res["sr"] >= 0.75
    assert res["summary"]["ababa"] <= 0.5


@pytest.mark.slow
@pytest.mark.parametrize("preset, min_sr, min_spl", [("perfect", 0.90, 0.70), ("prep", 0.80, 0.0)])
def test_public_100_goals(world_and_tasks, preset, min_sr, min_spl):
    from sim.benchmark.runner import run_tasks

    world, tasks = world_and_tasks
    res = run_tasks(world, tasks, "geometric", preset, progress=False)
    assert res["sr"] >= min_sr and res["spl"] >= min_spl
    assert res["summary"]["ababa"] <= 0.1

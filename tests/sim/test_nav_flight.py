"""The same agent, the same task, flown for real: MAVSDK over UDP to the simulated PX4.

`aerie bench nav --fly` runs the mission runner over the supervisor's own vehicle port
(`FlightVehicle`: offboard, the envelope, the looks as `aerie fly` flies them). A flown
episode must make the same decisions as the kinematic one (perception is a function of the
node and the seed), every leg must arrive, and its metres are measured from the positions
the autopilot reports.
"""

import pytest

from sim.benchmark.episode import run_episode
from sim.benchmark.flown_vehicle import FlownVehicle
from sim.benchmark.runner import load_agent
from sim.benchmark.tasks import load_tasks, resolve_all
from sim.world.cache import load_world

TASKS = "bench/tasks/helsinki_public_100.json"


@pytest.fixture(scope="module")
def world():
    return load_world()


# 90 s of real-time flight; `aerie fly` over MAVSDK is tested in tests/supervisor/test_fly.py (make test-all runs this).
@pytest.mark.slow
def test_episode_flown_through_mavsdk_matches_the_kinematic_episode(world):
    city, tasks = load_tasks(TASKS)
    shortest = min(tasks, key=lambda t: t.min_steps)
    (rt,) = resolve_all(city, [shortest], world)
    kinematic = run_episode(world, rt, load_agent("memory", world), "perfect", seed=3)
    flight = FlownVehicle(world, rt.start_node, speed_m_s=12.0)
    flown = run_episode(world, rt, load_agent("memory", world), "perfect", seed=3, flown=flight)

    assert flown["trajectory"] == kinematic["trajectory"] and flown["success"] == kinematic["success"]
    assert flight.landed == "landed" and not [e for e in flight.events if e[0] == "move_timeout"], flight.events
    # measured legs end within the arrival tolerance of each waypoint: the path is the graph's within metres
    assert abs(flown["path_m"] - kinematic["path_m"]) <= 3.0 * (flown["steps"] + 1), (flown["path_m"], kinematic["path_m"])


# About 50 s of real-time flight (make test-all runs this).
@pytest.mark.slow
def test_a_look_up_is_flown_through_mavsdk(world):
    """`--fly` climbs for a look-up on the way to the next waypoint and turns there; the come-down back to
    cruise on the way to the next one, then the next move: the supervisor's legs."""
    from dataclasses import replace

    from onboard.agent.agent import GraphAgent
    from onboard.agent.settings import AgentConfig
    from sim.benchmark.aerie_agents import BenchAgent
    from sim.flight_rig import load_task
    from onboard.map.corridors import NODE_SPACING_M

    rt = replace(load_task("t020", world), step_limit=3)  # its landmark is hidden at cruise from the start
    # down as soon as the landmark is placed (from up there), so that the come-down is flown too
    cfg = replace(AgentConfig(), look_up_after_steps=0, look_up_alt_m=40.0, come_down_within_m=10_000.0,
                  vertical_legs=1)
    agent = BenchAgent(GraphAgent(cfg, [lm.name for lm in world.landmarks], step_spacing_m=NODE_SPACING_M))
    flight = FlownVehicle(world, rt.start_node, speed_m_s=12.0)
    flown = run_episode(world, rt, agent, "perfect", seed=3, flown=flight)
    assert flown["look_ups"] == 1 and flown["look_up_at"][0][1:] == [rt.start_node, 40.0, world.cruise_alt], flown
    tr = flown["trajectory"]
    assert tr[1] != rt.start_node and flown["come_down_at"] == [[1, tr[1], 40.0, world.cruise_alt]], flown
    assert tr[2] != tr[1]
    # measured: up about 15 m and down again
    assert abs(flown["climb_m"] - 2 * (40.0 - world.cruise_alt)) <= 3.0, flown["climb_m"]
    assert flight.landed == "landed" and not [e for e in flight.events if e[0] == "move_timeout"], flight.events

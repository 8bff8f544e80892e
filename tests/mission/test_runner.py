"""The mission runner on the simulated world's ports: what it refuses, counts and ends with.

The ports are the benchmark's real ones (`sim.benchmark.episode_ports`: the kinematic vehicle
over the Helsinki graph, the oracle); a vehicle that refuses or misses a waypoint is that port
with a safety rule of its own, as a real envelope refuses a waypoint beyond the fence.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from onboard.vocab.observation import AgentAction
from onboard.mission.legs import Leg, LegStatus
from onboard.mission.record import MissionEnd
from onboard.mission.runner import NO_WAYPOINT_LEFT, MissionLimits, MissionRunner
from tests.sim._world_fixture import helsinki

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def public_task():
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.sim._world_fixture import PUBLIC

    city, tasks = load_tasks(PUBLIC)
    return resolve_all(city, tasks[:1], helsinki())[0]


class Scripted:
    """An agent that plays its actions, then arrives; it keeps what it was shown."""

    def __init__(self, actions, reading=None):
        self.actions = list(actions)
        self.seen = []
        self.reading = reading

    def act(self, obs):
        self.seen.append(obs)
        a = self.actions.pop(0) if self.actions else AgentAction.arrive()
        return a(obs) if callable(a) else a


class Fenced:
    """The kinematic vehicle with a fence around some waypoints (refused, nothing flown) and a slow leg."""

    def __init__(self, inner, refuse=(), slow=()):
        self.inner, self.refuse, self.slow = inner, set(refuse), set(slow)
        self.took_off = False

    async def take_off(self):
        self.took_off = True

    async def ready(self):
        pass

    async def fly_to(self, to):
        if to.node in self.refuse:
            return Leg.refusal("outside the geofence")
        leg = await self.inner.fly_to(to)
        return Leg(LegStatus.TIMED_OUT, leg.metres, 0.0, leg.seconds, error_m=7.0) if to.node in self.slow else leg

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _ports(public_task, **fence):
    from sim.benchmark.kinematic import KinematicMover
    from sim.benchmark.episode_ports import MoverPort, OracleSensor
    from sim.world.perception import OraclePerception

    w = helsinki()
    sensor = OracleSensor(w, OraclePerception(w, "perfect", 0))
    vehicle = Fenced(MoverPort(w, KinematicMover(w, public_task.start_node), public_task.start_node), **fence)
    return w, vehicle, sensor


def _run(agent, vehicle, sensor, w, start, steps=5, stop=None, events=None):
    from onboard.mission.ports import MissionHooks

    class Heard(MissionHooks):
        def event(self, kind, detail):
            (events if events is not None else []).append((kind, detail))

    runner = MissionRunner(agent, vehicle, sensor, MissionLimits(steps, w.cruise_alt, 118.0, None), start=start,
                           hooks=Heard(), stop=stop)
    return asyncio.run(runner.run())


def test_a_refused_waypoint_is_never_offered_again_and_a_slow_leg_is_said(public_task):
    w = helsinki()
    first = [n.node for n in w.graph.neighbours(public_task.start_node)]
    w, vehicle, sensor = _ports(public_task, refuse=[first[0]], slow=[first[1]])
    events = []
    agent = Scripted([AgentAction.move(first[0]), AgentAction.move(first[1])])
    rec = _run(agent, vehicle, sensor, w, public_task.start_node, events=events)
    assert rec.refused_waypoints == [first[0]] and rec.timed_out_legs == 1
    assert first[0] not in {m.node for m in agent.seen[1].moves}  # refused: gone from what is offered
    assert rec.trajectory == [public_task.start_node, public_task.start_node, first[1]]
    assert ("move_timeout", {"waypoint": first[1], "error_m": 7.0}) in events
    assert rec.end is MissionEnd.ARRIVED and rec.steps == 2


def test_when_the_fence_leaves_nowhere_to_go_the_mission_ends_refused(public_task):
    w = helsinki()
    around = [n.node for n in w.graph.neighbours(public_task.start_node)]
    w, vehicle, sensor = _ports(public_task, refuse=around)
    rec = _run(Scripted([lambda o: AgentAction.move(o.moves[0].node)] * len(around)), vehicle, sensor, w,
               public_task.start_node, steps=20)
    assert rec.end is MissionEnd.REFUSED and rec.detail == NO_WAYPOINT_LEFT and rec.steps == len(around)
    assert sorted(rec.refused_waypoints) == sorted(around) and rec.flown_m == 0.0
    assert not rec.refused_before_arming  # it flew: airborne, going nowhere


def test_an_instruction_not_understood_is_refused_before_take_off(public_task):
    from onboard.agent.instruction_reader import read_instruction

    w, vehicle, sensor = _ports(public_task)
    reading = read_instruction("go over there and have a look", [lm.name for lm in w.landmarks])
    events = []
    rec = _run(Scripted([], reading=reading), vehicle, sensor, w, public_task.start_node, events=events)
    assert rec.end is MissionEnd.REFUSED and rec.refused_before_arming and not vehicle.took_off
    assert rec.trajectory == [] and "no relation read" in rec.understood
    assert [k for k, _ in events] == ["instruction_understood", "mission_refused"]


def test_a_stop_before_a_step_ends_the_mission_terminated(public_task):
    w, vehicle, sensor = _ports(public_task)
    stop = asyncio.Event()

    def then_stop(obs):
        stop.set()
        return AgentAction.move(obs.moves[0].node)

    rec = _run(Scripted([then_stop, then_stop]), vehicle, sensor, w, public_task.start_node, stop=stop)
    assert rec.end is MissionEnd.TERMINATED and rec.steps == 1


def test_an_impossible_move_spends_the_step_and_is_said(public_task):
    w, vehicle, sensor = _ports(public_task)
    events = []
    rec = _run(Scripted([AgentAction.move(-1)]), vehicle, sensor, w, public_task.start_node, events=events)
    assert rec.invalid_moves == 1 and rec.steps == 1 and rec.trajectory == [public_task.start_node] * 2
    assert events[0][0] == "command_refused" and events[0][1]["waypoint"] == -1


# Every rule of a mission has one home: nothing outside the runner decides what is refused or flown.
RULES = ("look_up_refusal", "look_low_refusal", "come_down_refusal", "further_climb_refusal")


def test_no_copy_of_the_mission_semantics_remains_outside_the_runner():
    callers = set()
    for folder in ("onboard", "sim", "ground_station", "deploy", "firmware_bridge"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in RULES:
                    callers.add(path.relative_to(ROOT).as_posix())
    assert callers == {"onboard/mission/runner.py"}, callers

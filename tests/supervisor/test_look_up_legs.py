"""A look-up's climb and its come-down flown in legs on the way, on a real flight (the simulated vehicle over
MAVLink): half way up on the way to the next waypoint, on up to the top on the way to the one after, part of
the way down on the way to a third, the rest down on the way to a fourth. Each leg is one goto to a waypoint
at another altitude (the autopilot flies the sloped line); what the agent sees after each is from the altitude
reached, with no names read above cruise. The sequence is scripted over the real agent (its own choices would
depend on what shows from half way up); the altitudes are the vehicle's own reports as the supervisor
published them, placed between the steps by the journal's order.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from onboard.agent.agent import GraphAgent
from onboard.vocab.observation import AgentAction
from onboard.config import AerieConfig
from onboard.mission.record import LookUp
from onboard.supervisor.supervisor import Supervisor
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world
from tests.supervisor.test_faults import TOLERANCE_M, _between, journal_messages

CRUISE_M = 30.0
HALF_M = 35.0
TOP_M = 40.0


class InLegs(GraphAgent):
    """The agent as configured, keeping every observation; the vehicle is asked for the scripted legs instead,
    each on the way to the first waypoint on offer that is not the one just left."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.observations: list = []
        self.came_from: int | None = None

    def act(self, observation):
        self.observations.append(observation)
        own = super().act(observation)
        step = observation.step
        ahead = [m.node for m in observation.moves if m.node != self.came_from]
        node = (ahead or [m.node for m in observation.moves])[0]
        script = {0: AgentAction.look_up(HALF_M, "scripted: half way up", node),
                  1: AgentAction.look_up(TOP_M, "scripted: on up", node),
                  2: AgentAction.come_down("scripted: part of the way down", node, HALF_M),
                  3: AgentAction.come_down("scripted: the rest", node)}
        if step not in script:
            return own
        self.came_from = self.state.dynamic.here  # where the drone is now: not back there next
        return script[step]


def test_a_climb_and_a_come_down_in_legs_on_the_way(tmp_path):
    rig = start_rig("t020", world=world(), noise="perfect")
    try:
        base = replace(AerieConfig(), agent=replace(AerieConfig().agent, look_up_alt_m=TOP_M),
                       supervisor=replace(AerieConfig().supervisor, use_memory=False, status_socket=False,
                                          cruise_alt_m=CRUISE_M))
        cfg = rig.config(base, tmp_path / "vehicle")
        mission = replace(rig.mission(), step_limit=4)
        sup = Supervisor(cfg, mission, agent_factory=InLegs)
        outcome = asyncio.run(sup.run())
        assert outcome.reason == "step_limit" and outcome.steps == 4 and outcome.landed == "landed", outcome
        assert outcome.refused_look_ups == 0, outcome.refused_looks
        nodes = outcome.trajectory
        assert len(nodes) == 5 and all(a != b for a, b in zip(nodes, nodes[1:])), nodes  # every leg moved on
        assert outcome.look_ups == 1  # one look-up, climbed in two legs
        assert outcome.look_up_at == [LookUp(0, nodes[0], HALF_M, CRUISE_M), LookUp(1, nodes[1], TOP_M, HALF_M)]

        seen = sup.agent.observations
        assert [o.altitude_m for o in seen] == [CRUISE_M, HALF_M, TOP_M, HALF_M, CRUISE_M]
        assert all(o.pois == () for o in seen[1:4])  # no names from up there

        msgs = journal_messages(cfg)
        ends = [[m["payload"]["rel_alt_m"] for m in _between(msgs, k, k + 1) if m["type"] == "state"][-1]
                for k in range(4)]
        for got, want in zip(ends, [HALF_M, TOP_M, HALF_M, CRUISE_M]):
            assert abs(got - want) <= TOLERANCE_M, ends
        every = [m["payload"]["rel_alt_m"] for m in msgs if m["type"] == "state"]
        assert max(every) <= TOP_M + TOLERANCE_M
        assert abs(outcome.climb_m - 4 * (HALF_M - CRUISE_M)) <= 4 * TOLERANCE_M, outcome.climb_m
    finally:
        rig.close()

"""Supervisor fault paths on a real flight: a planner model that hangs, link loss mid-look-up, look-ups.

The planner model is the real `PlannerModel` (real worker thread, deadline,
contract validation and retry) around a generate function that misbehaves on
purpose, the way a wedged or confused llama.cpp would; the link loss is the
sim vehicle going silent on MAVLink for a few seconds. The plan is asked
once per mission, on its own thread: no step waits for it, the first step flies
the geometric plan, the call hangs past its deadline (not retried: the worker
is still wedged), so a later step keeps the geometric plan as the fallback
and the flight goes on. Garbage and empty answers take the same fallback
path; tests/agent/test_llm_backend.py covers them one by one. What the supervisor did is read back from its telemetry journal,
the vehicle's own record of everything it published.

The same flight (one flight: the suite's time is short) is the look-up over
the roofs (issue 14): task t020, whose landmark (Stockmann) the blocks hide at
cruise from the start and which is in sight from 40 m, with the agent set to
look up at once. Its first look-up is scripted above the safety envelope's
ceiling and must be refused, not flown; the second, its own 40 m, is climbed
(the link drops as it starts: the look-up pauses and goes on like a move),
turned, seen from, and come back down from; then a move. Altitudes are the
vehicle's own reports as the supervisor published them (``state``), placed
between the steps by the journal's order, never by a clock.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import replace

from onboard.agent.agent import GraphAgent
from onboard.vocab.observation import AgentAction
from onboard.config import AerieConfig
from onboard.inference.inference_worker import ThreadWorker
from onboard.inference.planner_model import PlannerModel
from onboard.supervisor.look_limits import LOOK_UP_CEILING_MARGIN_M
from onboard.mission.record import LookUp
from onboard.supervisor.supervisor import Supervisor
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import journal_messages, world


CRUISE_M = 30.0
LOOK_UP_M = 40.0
TOLERANCE_M = 1.5  # of the vehicle's reported altitude about a held one (GPS/baro noise, overshoot)


class FirstLookUpTooHigh(GraphAgent):
    """The agent as configured, keeping every observation; its first look-up asks for `TOO_HIGH_M` instead, and
    at step `COME_DOWN_AT` it asks for a come-down (the vehicle is at cruise by then) instead of its move."""

    TOO_HIGH_M = 170.0  # above the 120 m ceiling
    COME_DOWN_AT = 3

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.observations: list = []
        self.scripted = False

    def act(self, observation):
        self.observations.append(observation)
        action = super().act(observation)
        if action.kind == "look_up" and not self.scripted:
            self.scripted = True
            return replace(action, altitude_m=self.TOO_HIGH_M)
        if observation.step == self.COME_DOWN_AT:
            return AgentAction.come_down("scripted: nothing to come down from", action.node)
        return action


def _between(msgs: list[dict], first: int, last: int) -> list[dict]:
    """The messages published after agent_step `first` and before agent_step `last` (journal order)."""
    idx = {m["payload"]["step"]: i for i, m in enumerate(msgs) if m["type"] == "agent_step"}
    return msgs[idx[first] + 1:idx[last]]


def hanging_planner() -> tuple[PlannerModel, list[str]]:
    calls: list[str] = []

    def generate(messages, schema):
        calls.append("analysis" if "key_timestep" in schema["properties"] else "hang")
        time.sleep(3.0)  # past the 0.5 s deadline, as a wedged llama.cpp would
        return "{}"

    worker = ThreadWorker("planner-hanging", deadline_s=0.5)
    return PlannerModel(lambda m, s: worker.call(generate, m, s), worker, deadline_s=0.5, retries=1), calls


def test_planner_hang_falls_back_link_loss_pauses_a_look_up_and_one_above_the_ceiling_is_not_flown(tmp_path):
    rig = start_rig("t020", world=world(), noise="perfect")
    try:
        # come_down_within_m: down from the look-up as soon as the landmark is placed, so that one short
        # mission flies the refused look-up, the flown one and the come-down (both on the way to a waypoint) and
        # a move at cruise
        # (one vertical leg each way: the climb and the come-down in legs are tests/supervisor/test_look_up_legs.py)
        agent = replace(AerieConfig().agent, planner="llm", look_up_after_steps=0, look_up_alt_m=LOOK_UP_M,
                        look_up_spacing_m=0.0, max_look_ups=2, come_down_within_m=10_000.0, vertical_legs=1)
        base = replace(AerieConfig(), agent=agent,
                       supervisor=replace(AerieConfig().supervisor, use_memory=False, status_socket=False,
                                          cruise_alt_m=CRUISE_M))
        cfg = rig.config(base, tmp_path / "vehicle")
        ceiling = cfg.safety.altitude_ceiling_m
        mission = replace(rig.mission(), step_limit=4)
        progress: list[str] = []
        dropped = threading.Event()

        def on_progress(line: str) -> None:
            progress.append(line)
            if line.startswith("step   1") and not dropped.is_set():
                dropped.set()

                def drop() -> None:  # silence MAVLink for 5 s as the vehicle starts the look-up of step 1
                    rig.vehicle.set_link_down(True)
                    time.sleep(5.0)
                    rig.vehicle.set_link_down(False)
                threading.Thread(target=drop, daemon=True).start()

        model, calls = hanging_planner()
        try:
            sup = Supervisor(cfg, mission, plan_model=model, on_progress=on_progress, agent_factory=FirstLookUpTooHigh)
            outcome = asyncio.run(sup.run())
        finally:
            model.close()
        print("\n".join(progress), outcome, sep="\n")
        assert outcome.reason == "step_limit" and outcome.steps == 4, outcome
        assert outcome.landed == "landed"
        msgs = journal_messages(cfg)
        plans = [m["payload"] for m in msgs if m["type"] == "plan"]
        # A deadline is not retried within the call: the worker is still wedged. A re-plan trigger (the look-up's
        # new landmarks) may ask again once the worker is free, and that call fails the same way; after landing
        # the mission analysis may ask the recovered worker once more; it hangs too, and the rule-based one stands.
        plan_calls = [c for c in calls if c == "hang"]
        assert calls[0] == "hang" and 1 <= len(plan_calls) <= outcome.steps, calls
        assert calls.count("analysis") <= 1 and ("analysis" not in calls or calls[-1] == "analysis"), calls
        analysis = [m["payload"] for m in msgs if m["type"] == "mission_analysis"]
        assert len(analysis) == 1 and analysis[0]["source"] in ("rule", "fallback"), analysis
        assert plans and plans[0]["source"] == "geometric" and plans[0]["llm"]["source"] == "pending", plans
        assert plans[-1]["source"] == "llm-fallback", plans  # published again when the answer failed
        assert plans[-1]["steps"] == plans[0]["steps"]  # the fallback is the geometric plan already flown
        assert "deadline" in " ".join(plans[-1]["errors"]).lower(), plans[-1]["errors"]
        llm = plans[-1]["llm"]
        assert llm["adopted_step"] is None, llm
        # The failed answer's step, or, where a re-plan trigger already asked the freed worker again, that request.
        assert (llm["answered_step"] or 0) >= 1 or (llm["source"] == "pending" and llm["requested_step"] >= 1), llm
        assert max(outcome.step_ms) < 500.0, outcome.step_ms  # a step that waited would take the 0.5 s deadline
        steps = {m["payload"]["step"]: m["payload"] for m in msgs if m["type"] == "agent_step"}
        assert sorted(steps) == [0, 1, 2, 3, 4]  # the mission went on after the fallback
        # the agent's own step 3 is a move; the vehicle was asked for a come-down at cruise instead (scripted)
        assert [steps[i]["movement"]["kind"] for i in range(4)] == ["look_up", "look_up", "come_down", "move"], steps
        assert steps[1]["decision"]["action"] == f"look up from {LOOK_UP_M:.0f} m", steps[1]["decision"]
        kinds = [m["payload"]["kind"] for m in msgs if m["type"] == "event"]
        assert "link_lost" in kinds and "agent_paused" in kinds and "agent_resumed" in kinds, kinds
        assert kinds.index("agent_paused") < kinds.index("agent_resumed")
        assert outcome.paused_s > 0.5
        assert msgs[-1]["type"] == "flight_end" and msgs[-1]["payload"]["reason"] == "step_limit"

        # What the agent was offered, and what it saw.
        seen = sup.agent.observations
        assert seen[0].look_up_ceiling_m == ceiling - LOOK_UP_CEILING_MARGIN_M and seen[0].altitude_m == CRUISE_M
        assert seen[1].altitude_m == CRUISE_M  # after the refused look-up: still the view from cruise
        assert seen[2].altitude_m == LOOK_UP_M and seen[2].pois == ()  # after the flown one: from 40 m, no names
        assert "Stockmann" in {s.name for s in seen[2].landmarks} - {s.name for s in seen[1].landmarks}
        assert seen[3].altitude_m == CRUISE_M  # came down: the view from cruise again
        assert seen[4].altitude_m == CRUISE_M  # and the flight went on at cruise

        # Step 3: a come-down asked for at cruise (on the way to a waypoint) is refused, not flown: no move, no
        # descent below cruise, a command_refused event, the mission goes on from the same waypoint.
        step3 = _between(msgs, 3, 4)
        refusal = [m["payload"]["detail"] for m in step3 if m["type"] == "event"
                   and m["payload"]["kind"] == "command_refused"]
        assert len(refusal) == 1 and refusal[0]["command"] == "come_down", refusal
        traj = outcome.trajectory  # one waypoint per step; the refused steps stay where they were
        nodes = [n for i, n in enumerate(traj) if i == 0 or n != traj[i - 1]]
        r = outcome.refused_looks[1]
        assert (r.step, r.waypoint) == (3, nodes[-1]) and len(nodes) == 3 and len(traj) == 5, outcome
        alts3 = [m["payload"]["rel_alt_m"] for m in step3 if m["type"] == "state"]
        assert not alts3 or min(alts3) >= CRUISE_M - TOLERANCE_M, alts3

        # Step 0: refused, not flown: the vehicle held cruise altitude throughout.
        step0 = _between(msgs, 0, 1)
        alts = [m["payload"]["rel_alt_m"] for m in step0 if m["type"] == "state"]
        events = [m["payload"] for m in step0 if m["type"] == "event"]
        assert any(e["kind"] == "command_refused" and e["detail"]["command"] == "look_up"
                   and e["detail"]["altitude_m"] == FirstLookUpTooHigh.TOO_HIGH_M for e in events), events
        assert not alts or max(alts) <= CRUISE_M + TOLERANCE_M, alts
        assert outcome.refused_look_ups == 2, outcome  # this one, and the come-down at cruise (step 3)
        r = outcome.refused_looks[0]
        assert (r.step, r.waypoint, r.altitude_m) == (0, nodes[0], FirstLookUpTooHigh.TOO_HIGH_M)

        # Step 1: flown on the way to the next waypoint, paused by the link loss on the way: up to 40 m over that
        # waypoint, and still up there at step 2.
        assert steps[1]["movement"].get("node") == nodes[1] != nodes[0], steps[1]["movement"]
        step1 = _between(msgs, 1, 2)
        assert "agent_paused" in [m["payload"]["kind"] for m in step1 if m["type"] == "event"]
        flown = [m["payload"]["rel_alt_m"] for m in step1 if m["type"] == "state"]
        assert abs(max(flown) - LOOK_UP_M) <= TOLERANCE_M, flown
        assert abs(flown[-1] - LOOK_UP_M) <= TOLERANCE_M, flown
        # Step 2: the come-down on the way to the next waypoint (the expert moves on): one sloped leg, part of
        # the descent flown while the vehicle travels, ending at cruise over that waypoint.
        assert steps[2]["movement"].get("node") == nodes[2], steps[2]["movement"]
        leg = [m["payload"] for m in _between(msgs, 2, 3) if m["type"] == "state"]
        assert abs(leg[-1]["rel_alt_m"] - CRUISE_M) <= TOLERANCE_M, leg[-1]
        start = (leg[0]["north_m"], leg[0]["east_m"])
        travelled = [math.hypot(p["north_m"] - start[0], p["east_m"] - start[1]) for p in leg]
        assert any(t > 5.0 and p["rel_alt_m"] > CRUISE_M + TOLERANCE_M for t, p in zip(travelled, leg)), leg
        assert outcome.look_ups == 1 and outcome.look_up_at == [LookUp(1, nodes[0], LOOK_UP_M, CRUISE_M)]
        assert outcome.climb_m >= 2 * (LOOK_UP_M - CRUISE_M - TOLERANCE_M), outcome.climb_m
        assert outcome.flown_m > outcome.climb_m  # the move's metres besides

        # Never above the look-up's altitude (so never near the ceiling) anywhere in the flight.
        every = [m["payload"]["rel_alt_m"] for m in msgs if m["type"] == "state"]
        assert max(every) <= LOOK_UP_M + TOLERANCE_M < ceiling
    finally:
        rig.close()

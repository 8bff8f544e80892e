"""Supervisor fault paths on a real flight: a planner model that hangs, and link loss mid-mission.

The planner model is the real `PlannerModel` (real worker thread, deadline,
contract validation and retry) around a generate function that misbehaves on
purpose, the way a wedged or confused llama.cpp would; the link loss is the
sim vehicle going silent on MAVLink for a few seconds. The plan is asked
once per mission, on its own thread: no step waits for it, the first step flies
the geometric plan, the call hangs past its deadline (not retried: the worker
is still wedged), so a later step keeps the geometric plan as the fallback
and the three-move flight goes on. Garbage and empty answers take the same fallback
path; tests/agent/test_llm_backend.py covers them one by one. What the supervisor did is read back from its telemetry journal,
the vehicle's own record of everything it published.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace

import msgpack

from onboard.config import AerieConfig
from onboard.inference.inference_worker import ThreadWorker
from onboard.inference.planner_model import PlannerModel
from onboard.supervisor.supervisor import Supervisor
from onboard.telemetry.journal import Journal
from onboard.telemetry.settings import resolve_path
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world


def hanging_planner() -> tuple[PlannerModel, list[str]]:
    calls: list[str] = []

    def generate(messages, schema):
        calls.append("hang")
        time.sleep(3.0)  # past the 0.5 s deadline, as a wedged llama.cpp would
        return "{}"

    worker = ThreadWorker("planner-hanging", deadline_s=0.5)
    return PlannerModel(lambda m, s: worker.call(generate, m, s), worker, deadline_s=0.5, retries=1), calls


def journal_messages(cfg: AerieConfig) -> list[dict]:
    with Journal.open(resolve_path(cfg.data_dir, cfg.telemetry.journal_path)) as j:
        return [msgpack.unpackb(f, raw=False) for _, f in j.frames(0, 2 ** 62, max_count=10 ** 6, max_bytes=1 << 30)]


def test_planner_hang_falls_back_and_link_loss_pauses_the_mission(tmp_path):
    rig = start_rig("t019", world=world())
    try:
        base = replace(AerieConfig(), agent=replace(AerieConfig().agent, planner="llm"),
                       supervisor=replace(AerieConfig().supervisor, use_memory=False, status_socket=False))
        cfg = rig.config(base, tmp_path / "vehicle")
        mission = replace(rig.mission(), step_limit=3)
        progress: list[str] = []
        dropped = threading.Event()

        def on_progress(line: str) -> None:
            progress.append(line)
            if line.startswith("step   1") and not dropped.is_set():
                dropped.set()

                def drop() -> None:  # silence MAVLink for 5 s while the vehicle flies move 2
                    rig.vehicle.set_link_down(True)
                    time.sleep(5.0)
                    rig.vehicle.set_link_down(False)
                threading.Thread(target=drop, daemon=True).start()

        model, calls = hanging_planner()
        try:
            outcome = asyncio.run(Supervisor(cfg, mission, plan_model=model, on_progress=on_progress).run())
        finally:
            model.close()
        assert outcome.reason == "step_limit" and outcome.steps == 3, outcome
        assert outcome.landed == "landed"
        msgs = journal_messages(cfg)
        plans = [m["payload"] for m in msgs if m["type"] == "plan"]
        assert calls == ["hang"]  # a deadline is not retried: the worker is still wedged
        assert plans and plans[0]["source"] == "geometric" and plans[0]["llm"]["source"] == "pending", plans
        assert plans[-1]["source"] == "llm-fallback", plans  # published again when the answer failed
        assert plans[-1]["steps"] == plans[0]["steps"]  # the fallback is the geometric plan already flown
        assert "deadline" in " ".join(plans[-1]["errors"]).lower(), plans[-1]["errors"]
        assert plans[-1]["llm"]["answered_step"] >= 1 and plans[-1]["llm"]["adopted_step"] is None
        assert max(outcome.step_ms) < 500.0, outcome.step_ms  # a step that waited would take the 0.5 s deadline
        steps = [m["payload"] for m in msgs if m["type"] == "agent_step"]
        assert len(steps) == 4  # steps 0..3: the mission went on after the fallback
        kinds = [m["payload"]["kind"] for m in msgs if m["type"] == "event"]
        assert "link_lost" in kinds and "agent_paused" in kinds and "agent_resumed" in kinds, kinds
        assert kinds.index("agent_paused") < kinds.index("agent_resumed")
        assert outcome.paused_s > 0.5
        assert msgs[-1]["type"] == "flight_end" and msgs[-1]["payload"]["reason"] == "step_limit"
    finally:
        rig.close()

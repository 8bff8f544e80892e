"""Real `aerie fly` processes against the simulated vehicle, for the fault tests of issue 19 (items 12-14).

The supervisor runs as its own process (so SIGKILL and SIGTERM are real) with
the geometric planner and no memory (nothing to load: the flight starts at
once); the vehicle's ground truth is read from the simulator's control channel.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import yaml

from onboard.config import AerieConfig
from sim.flight_rig import SimRig
from tests.supervisor.flightkit import write_config

ROOT = Path(__file__).resolve().parents[2]


def fly_config(rig: SimRig, tmp: Path, **supervisor: Any) -> AerieConfig:
    base = AerieConfig()
    base = replace(base, agent=replace(base.agent, planner="geometric"),
                   supervisor=replace(base.supervisor, use_memory=False, **supervisor))
    return rig.config(base, tmp / "vehicle")


def start_fly(rig: SimRig, cfg: AerieConfig, tmp: Path, *extra: str, step_limit: int | None = None) -> subprocess.Popen:
    """`aerie fly` on this rig's mission (or `--standby` given in extra); output to tmp/fly.log.

    `step_limit` cuts the mission short (a test about something other than the route need not fly it all).
    """
    config_file = write_config(cfg, tmp / "config.yaml")
    args = list(extra)
    if "--standby" not in args:
        mission = tmp / "mission.yaml"
        mission.write_text(yaml.safe_dump({"instruction": rig.task.task.description, "name": rig.task.id,
                                           "step_limit": step_limit or rig.task.step_limit}))
        args = ["--mission", str(mission), *args]
    out = open(tmp / "fly.log", "w")
    try:
        return subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), *args],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
    finally:
        out.close()  # the child holds its own copy


def wait_truth(rig: SimRig, predicate: Callable[[dict], bool], timeout_s: float, what: str,
               tmp: Path | None = None) -> dict:
    """Poll the vehicle's ground truth until ``predicate`` holds (generous deadline, not a timing claim)."""
    deadline = time.monotonic() + timeout_s
    truth: dict = {}
    while time.monotonic() < deadline:
        truth = rig.vehicle.truth()
        if predicate(truth):
            return truth
        time.sleep(0.05)
    log = (tmp / "fly.log").read_text(errors="replace")[-4000:] if tmp is not None and (tmp / "fly.log").exists() else ""
    raise AssertionError(f"{what}: not within {timeout_s:.0f} s; last truth {truth}\n{log}")


def horizontal_speed(truth: dict) -> float:
    return math.hypot(truth["vel_ned"][0], truth["vel_ned"][1])


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)

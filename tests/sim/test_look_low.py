"""The benchmark's look-low: offered only where names come from the camera, its metres in the path."""

from __future__ import annotations

import pytest

from sim.benchmark.agent_api import Action
from sim.benchmark.episode import LOOK_LOW_FLOOR_M, run_episode
from sim.benchmark.kinematic import LOOK_UP_TURN_S, LOOK_UP_VERTICAL_SPEED_M_S
from tests.sim._world_fixture import helsinki
from tests.sim.test_look_up import _Script


def test_oracle_episodes_offer_no_look_low_and_refuse_one(public_task):
    w = helsinki()
    agent = _Script([Action.look_low(12.0)])
    rec = run_episode(w, public_task, agent, "perfect")
    assert agent.seen[0].look_low_floor_m is None
    assert rec["steps"] == 1 and rec["refused_look_ups"] == 1 and rec["look_lows"] == 0
    assert rec["low_m"] == 0 and rec["path_m"] == 0 and rec["flight_s"] == 0
    assert agent.seen[1].altitude_m == w.cruise_alt and agent.seen[1].pois == agent.seen[0].pois


def test_camera_episode_looks_low_reads_down_there_and_pays_for_it(public_task):
    from onboard.config import load_config
    from sim.benchmark.camera_perception import CameraBench
    from tests.perception.conftest import _reader

    w = helsinki()
    cfg = load_config(None).supervisor
    bench = CameraBench(w, _reader(), _views(cfg, 2))
    agent = _Script([Action.look_low(12.0), Action.look_low(LOOK_LOW_FLOOR_M - 1), Action.look_low(w.cruise_alt)])
    rec = run_episode(w, public_task, agent, "perfect", camera=bench.episode(public_task.task.description))
    assert agent.seen[0].look_low_floor_m == LOOK_LOW_FLOOR_M and agent.seen[0].altitude_m == w.cruise_alt
    assert agent.seen[1].altitude_m == 12.0  # the view after the look-low is from down there
    assert rec["look_lows"] == 1 and rec["refused_look_ups"] == 2  # below the floor, and not below cruise
    low = 2 * (w.cruise_alt - 12.0)
    assert rec["low_m"] == pytest.approx(low) and rec["path_m"] == pytest.approx(low)
    assert rec["look_low_at"] == [[0, public_task.start_node, 12.0]]
    assert rec["flight_s"] >= low / LOOK_UP_VERTICAL_SPEED_M_S + LOOK_UP_TURN_S
    assert {k[2] for k in bench.memo.reads} == {w.cruise_alt, 12.0}  # frames drawn from both heights


def _views(cfg, views):
    from dataclasses import replace

    return replace(cfg, camera_reading=replace(cfg.camera_reading, views=views))

"""Camera perception in flight: the look-around turns the simulated vehicle through its views via the bridge.

One short mission (one step) on the simulated PX4 with ``supervisor.perception:
camera``: at each waypoint the vehicle is turned to every view's heading (the
vehicle's own reported yaw is checked against it), a frame is asked for from
where it reports to be, read, kept, and the agent gets the fused reads and
nothing of the feed's sightings. The frame checks without flying are in
tests/sim/test_camera_frames.py; reading itself in tests/perception/.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from onboard.agent.agent import GraphAgent
from onboard.config import AerieConfig
from onboard.supervisor.look_around import frame_rgb, ordered_headings
from tests.supervisor.flightkit import journal_messages, world


class Recording(GraphAgent):
    """The agent as configured, keeping every observation it was given."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.observations: list = []

    def act(self, observation):
        self.observations.append(observation)
        return super().act(observation)


def _camera_rig(tmp_path, gimbal: bool = True, **camera_reading):
    """The simulated vehicle on public t019 and a config flying it with camera perception (the models needed);
    `gimbal`: the vehicle announces a camera gimbal, which the look-around then points."""
    from sim.flight_rig import start_rig
    from tests.perception.conftest import _prepared

    _prepared(AerieConfig().inference.text_det_model)
    _prepared("ppocrv5-rec")
    sup_cfg = AerieConfig().supervisor
    reading_cfg = replace(sup_cfg.camera_reading, **camera_reading)
    base = replace(AerieConfig(), supervisor=replace(sup_cfg, use_memory=False, status_socket=False,
                                                     perception="camera", camera_reading=reading_cfg))
    rig = start_rig("t019", world=world(), noise="perfect", gimbal=gimbal)
    return rig, rig.config(base, tmp_path / "vehicle")


def _angle(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def test_the_views_start_nearest_the_heading_and_go_round():
    assert ordered_headings(5, 80.0) == [72.0, 144.0, 216.0, 288.0, 0.0]
    assert ordered_headings(5, 350.0) == [0.0, 72.0, 144.0, 216.0, 288.0]
    assert ordered_headings(4, float("nan")) == [0.0, 90.0, 180.0, 270.0]


def test_a_bad_frame_is_named_not_read():
    import cv2
    import numpy as np

    assert frame_rgb(None, 960, 540) == (None, "no frame")
    assert frame_rgb(b"\x89PNG not really", 960, 540) == (None, "undecodable frame")
    ok, png = cv2.imencode(".png", np.zeros((100, 200, 3), np.uint8))
    img, why = frame_rgb(png.tobytes(), 960, 540)
    assert img is None and "200x100" in why
    ok, png = cv2.imencode(".png", np.full((540, 960, 3), (0, 0, 255), np.uint8))  # BGR red
    img, why = frame_rgb(png.tobytes(), 960, 540)
    assert why is None and img.shape == (540, 960, 3) and tuple(img[0, 0]) == (255, 0, 0)  # RGB red


@pytest.mark.slow
@pytest.mark.parametrize("gimbal", [True, False], ids=["gimbal", "no-gimbal"])
def test_a_camera_flight_points_through_the_views_reads_and_hands_the_agent_only_that(tmp_path, gimbal):
    """With a gimbal the camera is pointed and the vehicle holds its heading (the journal shows each gimbal
    command and attitude); without one the vehicle turns to each view as before."""
    from onboard.supervisor.supervisor import Supervisor

    # two gimbal pitches at every heading: the mounting one and one below it
    rig, cfg = _camera_rig(tmp_path, gimbal, pitches_deg=(-15.0, -45.0))
    try:
        views = cfg.supervisor.camera_reading.views
        tol = cfg.supervisor.camera_reading.turn_tolerance_deg
        sup = Supervisor(cfg, replace(rig.mission(), step_limit=1), agent_factory=Recording)
        outcome = asyncio.run(sup.run())
        assert outcome.landed == "landed" and outcome.perception == "camera", outcome
        folder = Path(outcome.results_dir)
        reading = json.loads((folder / "reading_timestep_0000.json").read_text())
        assert sorted(v["heading_deg"] for v in reading["views"]) == sorted(2 * [360.0 * k / views for k in range(views)])
        assert sorted((v["heading_deg"], v["pitch_deg"]) for v in reading["views"]) == sorted(
            (360.0 * k / views, p) for k in range(views) for p in (-15.0, -45.0))
        for v in reading["views"]:
            assert v["turned"], v
            assert _angle(v["reported_yaw_deg"], v["heading_deg"]) <= tol + 1.0, v
            assert (folder / "rgb_images" / f"rgb_timestep_0000_view{v['view']}.png").exists()
            assert v["bad_frame"] is None
        yaws = [v["vehicle_yaw_deg"] for v in reading["views"]]
        kinds = [m["payload"]["kind"] for m in journal_messages(cfg) if m["type"] == "event"]
        if gimbal:  # the camera was pointed, the vehicle held its heading
            assert {v["pointed_by"] for v in reading["views"]} == {"gimbal"}
            assert max(_angle(y, yaws[0]) for y in yaws) <= 2.0, yaws
            shots = 2 * views * len(outcome.look_around_s)  # every look-around of the flight
            assert kinds.count("gimbal_command") >= 1 + shots and kinds.count("gimbal_attitude") == shots
        else:  # the vehicle turned to each view
            assert {v["pointed_by"] for v in reading["views"]} == {"vehicle"}
            assert all(_angle(v["vehicle_yaw_deg"], v["heading_deg"]) <= tol + 1.0 for v in reading["views"])
            assert not [k for k in kinds if k.startswith("gimbal")]
        assert len(outcome.look_around_s) >= 1 and outcome.bad_frames == 0
        print(f"{'gimbal' if gimbal else 'no gimbal'}: look-arounds {[round(x, 1) for x in outcome.look_around_s]} s")
        assert len(outcome.read_ms) >= 2 * views
        first = sup.agent.observations[0]
        assert [[s.name, s.bearing, s.distance] for s in first.landmarks] == reading["landmarks"]
        assert [[p.name, p.bearing, p.distance] for p in first.pois] == reading["pois"]
    finally:
        rig.close()


class LooksLow(Recording):
    """The agent steps as configured (its state is the supervisor's to publish), but the vehicle is told to look
    low once where it offers that, then to end the mission."""

    def act(self, observation):
        from onboard.vocab.observation import AgentAction

        super().act(observation)
        if len(self.observations) == 1 and observation.look_low_floor_m is not None:
            return AgentAction.look_low(max(12.0, observation.look_low_floor_m), "test: read the shop fronts")
        return AgentAction.arrive("test: done")


@pytest.mark.slow
def test_a_camera_flight_looks_low_reads_down_there_and_comes_back_to_cruise(tmp_path):
    from onboard.supervisor.supervisor import Supervisor

    rig, cfg = _camera_rig(tmp_path)
    try:
        cruise, floor = cfg.supervisor.cruise_alt_m, cfg.supervisor.camera_reading.low_floor_m
        sup = Supervisor(cfg, replace(rig.mission(), step_limit=3), agent_factory=LooksLow)
        outcome = asyncio.run(sup.run())
        assert outcome.landed == "landed" and outcome.look_lows == 1 and outcome.refused_look_ups == 0, outcome
        first, second = sup.agent.observations[:2]
        assert first.look_low_floor_m == floor and second.altitude_m == 12.0
        assert outcome.flown_m >= 2 * (cruise - 12.0) - 2.0  # down and back up, as flown
        folder = Path(outcome.results_dir)
        low = json.loads((folder / "reading_timestep_0000_low.json").read_text())
        reading = cfg.supervisor.camera_reading
        pitches = reading.pitches_at(low=True)
        assert sorted((v["heading_deg"], v["pitch_deg"]) for v in low["views"]) == sorted(
            (360.0 * k / reading.views, p) for k in range(reading.views) for p in pitches)  # the look-low's gimbal
        assert [[p.name, p.bearing, p.distance] for p in second.pois] == low["pois"]  # the names read down there
    finally:
        rig.close()

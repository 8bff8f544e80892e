"""The look-around's detector hook: asked only when the goal is a kind and a detector is configured.

The detector is the supervisor's own kind of worker (`RestartingWorker` of a `PerceptionPipeline` on its
inference thread) over the oracle detector fed synthetic boxes, so the call path is the one a flight takes.
"""

from __future__ import annotations

import asyncio

import numpy as np

from onboard.agent.goal_description import parse_goal_description
from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.camera_sightings import CameraView
from onboard.perception.oracle_detector import OracleDetector
from onboard.perception.pipeline import PerceptionPipeline
from onboard.supervisor.kind_spotter import kind_spotter_for
from onboard.supervisor.restarting_worker import RestartingWorker

INTR = CameraIntrinsics.from_hfov(640, 480, 90.0)
GAZETTEER = ["Kiasma"]


class CountingTruth:
    """The frame's objects, and how many frames they were asked for (the detector's cost)."""

    def __init__(self, objects):
        self.objects, self.asked = objects, 0

    def visible_objects(self, image):
        self.asked += 1
        return self.objects


def _worker(truth):
    return RestartingWorker("detector", lambda: PerceptionPipeline(OracleDetector(truth, score=0.7), INTR),
                            close=lambda p: p.close())


def _spotter(instruction, detector):
    goal = parse_goal_description(instruction, GAZETTEER)
    return kind_spotter_for(instruction, goal.names_goal, detector, INTR)


def test_a_kind_and_a_detector_detect_on_each_frame_and_keep_the_kind_only():
    truth = CountingTruth([("person", (300.0, 200.0, 340.0, 300.0)), ("car", (100.0, 250.0, 200.0, 320.0))])
    worker = _worker(truth)
    try:
        spotter = _spotter("Find a person by the fountain near Kiasma.", worker)
        assert spotter is not None and spotter.kind.phrase == "person"
        view = CameraView(np.zeros((480, 640, 3), np.uint8), 90.0, 0.0, 0.0, 12.0, 0.0, 0)
        read = asyncio.run(spotter.spot(view))
        assert truth.asked == 1 and len(spotter.detect_ms) == 1
        assert [(s.name, round(s.bearing_deg)) for s in read.sightings] == [("person", 90)]
        assert abs(read.sightings[0].range_m - 12.0 * 320 / 60) < 1e-6 # the foot 60 px below the horizon, fy 320
        empty = asyncio.run(spotter.spot(CameraView(None, 0.0, 0.0, 0.0, 12.0, 0.0, 1)))
        assert not empty.ok and truth.asked == 1  # no frame: no detector call
    finally:
        worker.close()


def test_without_a_kind_or_a_detector_nothing_is_detected():
    truth = CountingTruth([("person", (300.0, 200.0, 340.0, 300.0))])
    worker = _worker(truth)
    try:
        assert _spotter("Find Alepa Kallio, 200 m north of Kiasma.", worker) is None
        assert _spotter("Fly to the Kiasma museum.", worker) is None
        assert _spotter("Find a person by the fountain near Kiasma.", None) is None
        assert truth.asked == 0 and worker.worker is None  # not even loaded
    finally:
        worker.close()

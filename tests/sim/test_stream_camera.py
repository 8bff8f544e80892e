"""The benchmark's camera views are frames of the simulator's video stream, placed from their pose at capture.

A real stream (MJPEG over HTTP on a local socket) read by the vehicle's frame source; a small
camera keeps rendering cheap on a busy machine. Nothing here waits on time: each view waits for
its frame, bounded by the camera's frame timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from onboard.config import load_config
from onboard.perception.pose_history import PoseSample
from onboard.supervisor.camera_frames import Shot
from sim.benchmark.camera_failures import failure_end, failure_ends
from sim.benchmark.stream_camera import SETTLE_S, StreamedCamera, _same_pose
from sim.camera_stream import SentFrame
from tests.sim._world_fixture import helsinki


def _small(sup):
    return replace(sup, camera_width=480, camera_height=270, camera_frame_timeout_s=60.0)


def test_views_are_stream_frames_from_the_pose_they_are_placed_from():
    from sim.world.render import Camera, ViewRenderer

    w = helsinki()
    sup = _small(load_config(None).supervisor)
    east, north = (float(v) for v in w.graph.xy[171])

    async def two_views(cam: StreamedCamera):
        a = await cam.view(east, north, 25.0, 90.0, -15.0)
        t = cam.frames.clock()
        b = await cam.view(east, north, 12.0, 270.0, -30.0)
        return a, t, b

    cam = StreamedCamera(w, sup)
    try:
        a, t_b, b = asyncio.run(two_views(cam))
    finally:
        cam.close()
    assert cam.taken == 2 and cam.mispaired == 0 and cam.no_frame == 0 and a.paired and b.paired
    assert b.shot.capture_t >= t_b + SETTLE_S  # taken once the camera settled, not the frame in flight
    p = b.shot.pose
    assert (p.east, p.north, p.up) == pytest.approx((east, north, 12.0))
    assert p.camera_heading_deg() == pytest.approx(270.0) and b.shot.pitch_deg == pytest.approx(-30.0)
    # the frame is the simulator's view from there (a JPEG round trip apart), with that view's signs
    img, truth = ViewRenderer(w, Camera.from_config(sup)).render_at(np.array([east, north, 12.0]), 270.0, -30.0)
    assert float(np.abs(b.shot.bgr.astype(int) - img.astype(int)).mean()) < 6.0
    assert [s[0] for s in b.signs] == [t.name for t in truth]


def _pose(t, east, heading=90.0):
    return PoseSample(t, 0.0, east, 25.0, heading, 0.0, 0.0, -15.0, heading)


def test_the_judge_finds_a_frame_that_showed_another_pose():
    """A frame is judged by the stream's record of what it sent just before the frame was received."""
    sent = [SentFrame(1, 0.0, 0.15, 5.0, 0.0, 25.0, 90.0, -15.0, (("Old", 1.0, 9.0),)),
            SentFrame(2, 0.2, 0.35, 0.0, 0.0, 25.0, 90.0, -15.0, (("New", 1.0, 12.0),))]
    rig = SimpleNamespace(stream=SimpleNamespace(sent=sent), sup=SimpleNamespace(camera_latency_s=0.15))
    first = Shot(None, None, _pose(0.01, 0.0), -15.0, capture_t=0.01)  # received at 0.16: the first frame sent
    second = Shot(None, None, _pose(0.21, 0.0), -15.0, capture_t=0.21)  # received at 0.36
    got = StreamedCamera._sent_for(rig, first)
    assert got.seq == 1 and not _same_pose(got, first.pose, first.pitch_deg)  # it showed 5 m east: mispaired
    got = StreamedCamera._sent_for(rig, second)
    assert got.seq == 2 and _same_pose(got, second.pose, second.pitch_deg)
    assert not _same_pose(got, _pose(0.21, 0.0, heading=91.0), -15.0)


def _rec(task, success, has_sign=True, in_frame=0, read=False, fused=False, end="step_limit"):
    return {"task": task, "success": success, "end": end,
            "goal_sign": {"goal": "G", "has_sign": has_sign, "in_frame_views": in_frame, "best_letter_px": 0.0,
                          "read": read, "fused": fused, "no_frame_views": 0}}


def test_each_failure_ends_where_the_goal_sign_stopped():
    recs = [_rec("a", True, in_frame=3, read=True, fused=True), _rec("b", False, has_sign=False),
            _rec("c", False), _rec("d", False, in_frame=2), _rec("e", False, in_frame=2, read=True),
            _rec("f", False, in_frame=2, read=True, fused=True, end="wrong_place")]
    assert [failure_end(r) for r in recs] == [None, "no_sign", "never_in_frame", "in_frame_not_read",
                                              "read_not_fused", "fused_not_reached"]
    tally = failure_ends(recs)
    assert tally["counts"] == {"no_sign": 1, "never_in_frame": 1, "in_frame_not_read": 1, "read_not_fused": 1,
                               "fused_not_reached": 1}
    assert tally["goal_has_sign"] == 5 and tally["sr_goal_has_sign"] == 0.2
    assert tally["goal_in_a_frame"] == 4 and tally["sr_goal_in_a_frame"] == 0.25
    assert tally["wrong_goal_locked"] == 1 and tally["tasks"]["no_sign"] == ["b"]


def test_the_bench_looks_for_what_the_vehicle_understood_never_the_tasks_answer():
    from onboard.agent.instruction_reader import read_instruction
    from sim.benchmark.camera_perception import CameraBench

    w = helsinki()
    bench = CameraBench(w, object(), load_config(None).supervisor)  # nothing is read here
    text = "find gaijin, a sushi place about 200 m north of Ateneum."
    ep = bench.episode(text, judge_goal="Gaijin")
    assert ep.goal_names == []  # the words alone give no name-like run
    ep.read_back(read_instruction(text, bench.gazetteer))
    assert ep.goal_names == ["gaijin"] and ep.reader.goal == ("gaijin",) and ep.fusion.goal == {"gaijin"}

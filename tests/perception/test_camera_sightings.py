"""Camera sightings on frames the world's renderer draws, read by PP-OCRv5 on the real model files.

The frame is chosen by a rule fixed in advance (the first shop sign of the city
not named like a landmark, in sign order, that the nearest waypoint 30-60 m in front of it sees 90 % unhidden with lettering
at least 20 px tall in the sensor's 1920x1080 frame (10 px at half resolution, the reading benchmark's resolvable size), and a
name long enough to bear a typo), never by whether it reads well. The renderer's truth gives where the sign is; the reader never sees it.
"""

from __future__ import annotations

import functools
import shutil

import cv2
import numpy as np
import pytest

from onboard.perception.camera_model import CameraIntrinsics
from onboard.perception.camera_sightings import (CameraReader, CameraView, FusionSettings, PerceptionUnavailable,
                                                 SightingFusion, open_reader)
from tests.perception._sign_views import facing_views

GAZETTEER_SAMPLE = 50


@functools.lru_cache(maxsize=1)
def _scene():
    from tests.sim._world_fixture import helsinki
    from sim.world.render import ViewRenderer

    world = helsinki()
    rnd = ViewRenderer(world)
    # the nearest waypoint 30-60 m in front of the facade: one frame per sign (nearer, a sign at street level
    # is below the frame of a camera 25 m up pitched 15 degrees down)
    for _sign, node, heading, img, t in facing_views(world, rnd, 30.0, 60.0, ascii_only=True):
        if t.visible_fraction >= 0.9 and t.letter_px >= 10.0 * rnd.cam.width / 960:
            return world, rnd, node, heading, img, t
    pytest.skip("no shop sign in this world fits the rule")


def _reader_for(text_reader, world, goal):
    gazetteer = [lm.name for lm in world.landmarks]
    cam = _scene()[1].cam
    intr = CameraIntrinsics.from_hfov(cam.width, cam.height, cam.fov_deg)
    return CameraReader(text_reader, intr, gazetteer, [goal]), SightingFusion(gazetteer, [goal], FusionSettings())


def _view(world, node, heading, img, index=0):
    xy = world.graph.xy[node]
    return CameraView(cv2.cvtColor(img, cv2.COLOR_BGR2RGB), heading, float(xy[0]), float(xy[1]), world.cruise_alt,
                      -15.0, index)


def _angle(a, b):
    return abs((a - b + 180.0) % 360.0 - 180.0)


def test_a_frame_with_the_goal_gives_a_goal_sighting_at_its_bearing(text_reader):
    world, _rnd, node, heading, img, truth = _scene()
    goal = truth.name
    reader, fusion = _reader_for(text_reader, world, goal)
    read = reader.read_view(_view(world, node, heading, img))
    fusion.add(0, _view(world, node, heading, img), read)
    xy = world.graph.xy[node]
    _, pois = fusion.sightings(0, float(xy[0]), float(xy[1]))
    goals = [p for p in pois if p.name == goal]
    assert goals, [(s.text, round(s.confidence, 2)) for s in read.sightings]
    assert _angle(goals[0].bearing, truth.bearing_deg) <= 2.0, (goals[0], truth.bearing_deg)
    assert abs(goals[0].distance - truth.distance_m) <= 0.35 * truth.distance_m, (goals[0], truth.distance_m)


def test_a_frame_without_it_gives_none(text_reader):
    world, rnd, node, heading, _img, truth = _scene()
    away = (heading + 180.0) % 360.0
    img, truths = rnd.render_view(node, away)
    assert truth.name not in {t.name for t in truths if t.visible_fraction > 0}
    reader, fusion = _reader_for(text_reader, world, truth.name)
    fusion.add(0, _view(world, node, away, img), reader.read_view(_view(world, node, away, img)))
    xy = world.graph.xy[node]
    assert [p for p in fusion.sightings(0, float(xy[0]), float(xy[1]))[1] if p.name == truth.name] == []


def test_another_branch_one_letter_off_does_not_lock_the_goal(text_reader):
    """The goal is a name one letter off the sign in view (another branch): read once, it is no goal."""
    world, _rnd, node, heading, img, truth = _scene()
    k = next(i for i in range(len(truth.name) - 1, 0, -1) if truth.name[i].isalpha())
    other = truth.name[:k] + ("x" if truth.name[k].lower() != "x" else "z") + truth.name[k + 1:]
    reader, fusion = _reader_for(text_reader, world, other)
    read = reader.read_view(_view(world, node, heading, img))
    assert any(s.close_to == other for s in read.sightings), [(s.text, s.close_to) for s in read.sightings]
    fusion.add(0, _view(world, node, heading, img), read)
    xy = world.graph.xy[node]
    assert [p for p in fusion.sightings(0, float(xy[0]), float(xy[1]))[1] if p.name == other] == []


def test_a_bad_frame_reads_as_an_empty_view(text_reader):
    world, _rnd, node, heading, _img, truth = _scene()
    reader, _ = _reader_for(text_reader, world, truth.name)
    for bad in (None, np.zeros((540, 960), np.uint8), np.zeros((540, 960, 3), np.float32)):
        v = CameraView(bad, heading, 0.0, 0.0, 30.0)
        read = reader.read_view(v)
        assert not read.ok and read.sightings == ()


def test_a_corrupted_reader_model_is_named(tmp_path):
    """Camera perception refuses to start on a damaged recogniser, naming the file (and not the sound one)."""
    import os
    from dataclasses import replace

    from onboard.inference.manifest import model_dir
    from onboard.inference.settings import InferenceConfig

    cfg = replace(InferenceConfig(), providers=("CPUExecutionProvider",), text_threads=1)
    src = model_dir(os.environ.get("AERIE_MODEL_DIR") or cfg.model_dir)
    for name in ("ppocrv5_det.int8.onnx", "ppocrv5_rec.onnx", "ppocrv5_dict.txt", "checksums.yaml"):
        if not (src / name).exists():
            pytest.skip(f"{src / name} is absent (run `make models`)")
        shutil.copyfile(src / name, tmp_path / name)
    rec = tmp_path / "ppocrv5_rec.onnx"
    data = bytearray(rec.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte flipped
    rec.write_bytes(bytes(data))
    with pytest.raises(PerceptionUnavailable, match=r"ppocrv5_rec\.onnx") as err:
        open_reader(cfg, tmp_path)
    assert "ppocrv5_det" not in str(err.value)

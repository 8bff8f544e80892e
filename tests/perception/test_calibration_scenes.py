"""The calibration frames of Grounding DINO and SAM, and the feeds made of them for each model."""

import numpy as np
import pytest
import yaml

from onboard.inference.manifest import load_manifest
from onboard.inference.quantize import QuantizeError
from onboard.perception.calibration import SCENES_DIR, load_scenes, scene_feeds_for


def test_the_committed_scenes_are_what_scenes_yaml_lists():
    listed = yaml.safe_load((SCENES_DIR / "scenes.yaml").read_text())["frames"]
    scenes = load_scenes()
    assert [s.file for s in scenes] == [r["file"] for r in listed] and len(scenes) >= 8
    assert {p.name for p in SCENES_DIR.glob("*.jpg")} == {s.file for s in scenes}
    for s in scenes:
        h, w = s.image.shape[:2]
        assert (w, h) == (1280, 720) and s.prompts and s.boxes
        assert all(0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h for x0, y0, x1, y1 in s.boxes)
    assert {r["pitch_deg"] for r in listed} == {-15.0, -35.0}  # the gimbal's pitch and looking further down


def test_scene_feeds_need_a_model_kind_and_its_files(tmp_path):
    feeds = scene_feeds_for(load_manifest(), tmp_path)
    with pytest.raises(QuantizeError, match="needs source.feeds"):
        feeds({"from": "grounding-dino-swint", "calibration": "scenes"})
    with pytest.raises(Exception, match=r"grounding_dino_swint\.onnx.*absent"):
        feeds({"from": "grounding-dino-swint", "calibration": "scenes", "feeds": "grounding-dino"})


def test_missing_scenes_are_named(tmp_path):
    with pytest.raises(QuantizeError, match="no calibration scenes in"):
        load_scenes(tmp_path)


def test_scene_feeds_are_the_segmenter_s_own_preprocessing(tmp_path):
    from onboard.inference.ort_session import OrtSession
    from onboard.perception.calibration import sam_decoder_feeds, sam_encoder_feeds
    from onboard.perception.sam_segmenter import encoder_input
    from sim.standin_networks import build_sam_decoder_network, build_sam_encoder_network

    enc = OrtSession(build_sam_encoder_network(tmp_path / "enc.onnx"), providers=["CPUExecutionProvider"])
    dec = OrtSession(build_sam_decoder_network(tmp_path / "dec.onnx"), providers=["CPUExecutionProvider"])
    scenes = load_scenes()[:2]
    enc_feeds = sam_encoder_feeds(enc, scenes)
    assert np.array_equal(enc_feeds[0]["image"], encoder_input(scenes[0].image, 1024)[0])
    dec_feeds = sam_decoder_feeds(enc, dec, scenes)
    assert len(dec_feeds) == sum(len(s.boxes) for s in scenes)
    assert dec_feeds[0]["point_labels"].tolist() == [[2.0, 3.0]] and dec_feeds[0]["orig_im_size"].tolist() == [720.0, 1280.0]

"""The SSDLite person detector on real weights and real photos (scikit-image, CC0/public domain)."""

import numpy as np
import pytest

from onboard.inference.ort_session import OrtSession
from onboard.perception.ssdlite_detector import SsdliteDetector
from onboard.perception.types import PerceptionError

# Hand-labelled extent of Eileen Collins in skimage's astronaut.png (512x512),
# normalised x0, y0, x1, y1: from the left edge to her right shoulder, from the
# top of her hair to the bottom of the frame.
ASTRONAUT_BOX = (0.0, 0.06, 0.72, 1.0)


@pytest.fixture
def detector(ssdlite_path):
    return SsdliteDetector(OrtSession(ssdlite_path, providers=["CPUExecutionProvider"]))


def test_finds_the_astronaut(detector, rgb):
    image = rgb("astronaut.png")
    found = detector.detect(image, ["person"])
    assert len(found) >= 1
    best = max(found, key=lambda d: d.score)
    assert best.label == "person" and best.score > 0.8
    h, w = image.shape[:2]
    norm = (best.box[0] / w, best.box[1] / h, best.box[2] / w, best.box[3] / h)
    assert np.allclose(norm, ASTRONAUT_BOX, atol=0.1), norm


def test_no_person_in_the_coffee_photo(detector, rgb):
    assert detector.detect(rgb("coffee.png"), ["person"]) == []


def test_prompts_it_cannot_see_give_nothing(detector, rgb):
    assert detector.detect(rgb("astronaut.png"), ["red car"]) == []
    assert detector.detect(rgb("astronaut.png"), ["a hiker"])  # synonym of person


def test_live_provider_is_reported(ssdlite_path):
    s = OrtSession(ssdlite_path)
    assert s.provider in s.requested_providers
    assert s.requested_providers[-1] == "CPUExecutionProvider"


def test_rejects_non_rgb_input(detector):
    with pytest.raises(PerceptionError, match="RGB uint8"):
        detector.detect(np.zeros((10, 10), np.float32), ["person"])


def test_int8_copy_agrees_with_fp32(ssdlite_path):
    """The prepared INT8 model (static QDQ, calibrated on other images) finds what FP32 finds."""
    from onboard.perception.int8_agreement import ssdlite_agreement

    int8 = ssdlite_path.with_name("ssdlite_person.int8.onnx")
    if not int8.exists():
        pytest.skip("ssdlite-person-int8 is not prepared (run `make models`)")
    ag = ssdlite_agreement(ssdlite_path, int8)
    assert ag.fp32_detections >= 3
    assert ag.recall >= 0.8 and ag.mean_iou > 0.8, ag


def test_perception_step_from_config_on_the_astronaut(ssdlite_path, rgb):
    """config -> build_pipeline -> detections with bearing and range, caption, geoinstruct."""
    import asyncio

    from onboard.inference.settings import InferenceConfig
    from onboard.perception.camera_model import CameraIntrinsics, CameraPose
    from onboard.perception.pipeline import build_pipeline

    cfg = InferenceConfig(model_dir=str(ssdlite_path.parent), detector="ssdlite", call_deadline_s=30.0)
    pipeline = build_pipeline(cfg, CameraIntrinsics.from_hfov(512, 512, 70.0))
    try:
        out = asyncio.run(pipeline.perceive_async(rgb("astronaut.png"), CameraPose(0, 0, -1.5, yaw_deg=180, pitch_deg=-10), ["person"]))
    finally:
        pipeline.close()
    assert [o.label for o in out.objects] == ["person"]
    person = out.objects[0]
    assert 150 < person.bearing_deg < 180  # the astronaut stands left of centre, camera facing south
    assert person.range_m is not None and 0 < person.range_m < 20
    assert "person" in out.caption and "Visible: person" in out.geoinstruct

"""The detector's camera geometry comes from config, and its defaults are the world's camera."""

from __future__ import annotations

import pytest

from onboard.config import load_config
from onboard.supervisor.settings import SupervisorConfig
from common.typed_config import ConfigError


def test_defaults_are_the_rendered_world_camera() -> None:
    # `supervisor.camera: world` feeds the renderer's views to the detector; detections are placed
    # on the ground with these numbers, so they must be the renderer's own.
    from sim.world.render import Camera

    sup, cam = SupervisorConfig(), Camera()
    assert (sup.camera_width, sup.camera_height) == (cam.width, cam.height)
    assert sup.camera_hfov_deg == cam.fov_deg
    assert sup.camera_pitch_deg == cam.pitch_deg
    assert Camera.from_config(sup) == cam  # the world camera's effects too (JPEG, noise, blur, no overlay)


@pytest.mark.parametrize("key,value", [("camera_width", 0), ("camera_hfov_deg", 180.0), ("camera_pitch_deg", -95.0)])
def test_impossible_camera_is_refused(tmp_path, key, value) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(f"supervisor:\n  {key}: {value}\n")
    with pytest.raises(ConfigError, match=key.split("_")[1]):
        load_config(f)


def test_text_is_found_on_a_scaled_copy_of_the_default_frame() -> None:
    # The defaults read small signs from the full frame: detection on a smaller copy, each line cut from
    # the frame itself (TextReader.read). A detector side at or above the frame's would pay for every pixel.
    from onboard.inference.settings import InferenceConfig
    from onboard.perception.text_detection import input_size

    sup, inf = SupervisorConfig(), InferenceConfig()
    w, h = input_size(sup.camera_width, sup.camera_height, inf.text_det_max_side)
    assert w < sup.camera_width and h < sup.camera_height
    assert (w, h) == (1152, 640)  # a 1920x1080 frame found at 1152: 6-px-at-half-resolution signs are found


@pytest.mark.parametrize("value", [32, 5000])
def test_an_impossible_detector_side_is_refused(tmp_path, value) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(f"inference:\n  text_det_max_side: {value}\n")
    with pytest.raises(ConfigError, match="text_det_max_side"):
        load_config(f)

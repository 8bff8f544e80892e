"""The detector's camera geometry comes from config, and its defaults are the world's camera."""

from __future__ import annotations

import pytest

from onboard.config import load_config
from onboard.supervisor.settings import SupervisorConfig
from contract.typed_config import ConfigError


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

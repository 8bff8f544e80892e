"""open_model: a manifest model through the configured provider chain, verified first."""

import pytest

from onboard.inference.manifest import load_manifest, model_dir
from onboard.inference.ort_session import open_model
from onboard.inference.settings import InferenceConfig


def test_open_model_from_config(ssdlite_path, tmp_path):
    cfg = InferenceConfig(model_dir=str(ssdlite_path.parent), trt_cache_dir=str(tmp_path / "trt"))
    s = open_model(load_manifest().get("ssdlite-person"), model_dir(cfg.model_dir), cfg)
    assert s.provider == "CPUExecutionProvider" and len(s.sha256) == 64
    assert s.input_names == ["image_tensor:0"]

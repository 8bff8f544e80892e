"""TensorRT optimisation profiles as `aerie models build-engine` reads them (no TensorRT needed)."""

import pytest

from onboard.inference.manifest import load_manifest
from onboard.inference.tensorrt_engine import EngineBuildError, parse_profile


def test_a_profile_reads_min_opt_max():
    p = parse_profile("img:1x3x480x640/1x3x750x1333/1x3x800x1333")
    assert (p.input_name, p.min_shape, p.opt_shape, p.max_shape) == ("img", (1, 3, 480, 640), (1, 3, 750, 1333), (1, 3, 800, 1333))


@pytest.mark.parametrize("bad", ["img", "img:1x3/1x3", "img:1x3x480/1x3x400/1x3x800", "img:1x3/1x3x4/1x3x4", "img:axb/1/1"])
def test_bad_profiles_are_refused(bad):
    with pytest.raises(EngineBuildError, match="bad profile"):
        parse_profile(bad)


def test_the_manifest_profiles_parse_and_cover_the_dynamic_inputs():
    m = load_manifest()
    gd = {parse_profile(p).input_name: parse_profile(p) for p in m.get("grounding-dino-swint-int8").input["trt_profile"]}
    assert {"img", "pixel_values", "input_ids", "attention_mask", "token_type_ids", "position_ids", "text_token_mask"} <= set(gd)
    assert gd["img"].opt_shape == (1, 3, 750, 1333)  # a 1920x1080 frame at Grounding DINO's resize
    assert gd["text_token_mask"].max_shape == (1, 256, 256) and gd["input_ids"].max_shape == (1, 256)
    sam = [parse_profile(p) for p in m.get("mobilesam-decoder-int8").input["trt_profile"]]
    assert {p.input_name for p in sam} == {"point_coords", "point_labels"}

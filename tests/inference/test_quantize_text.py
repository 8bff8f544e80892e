"""The text detector's INT8 copy: what it is calibrated on, and refusals of what it cannot be."""

import numpy as np
import pytest

from onboard.inference.quantize import QuantizeError, calibration_for, quantize_model
from onboard.perception.text_detection import calibration_feeds


def test_calibration_feeds_the_detector_as_the_reader_does():
    feeds = calibration_feeds(1152)
    assert len(feeds) >= 8
    for x in feeds:
        # a 1920x1080 city view scaled to the detector's side, BGR, ImageNet-normalised, NCHW
        assert x.shape == (1, 3, 640, 1152) and x.dtype == np.float32
        assert -2.2 < float(x.min()) and float(x.max()) < 2.7


def test_the_manifest_entry_asks_for_city_views_and_percentiles():
    from onboard.inference.manifest import load_manifest

    kw = calibration_for(load_manifest().get("ppocrv5-det-int8").source, calibration_feeds)
    assert kw["calibrate"] == "percentile" and kw["optimise"] is True and kw["op_types"] == ["Conv"]
    assert len(kw["feeds"]) >= 8


def test_unknown_calibrations_are_refused(tmp_path):
    with pytest.raises(QuantizeError, match="unknown calibration 'street'"):
        calibration_for({"calibration": "street"})
    with pytest.raises(QuantizeError, match="unknown calibration method 'entropy'"):
        quantize_model(tmp_path / "a.onnx", tmp_path / "b.onnx", calibrate="entropy")
    with pytest.raises(QuantizeError, match="no calibration views"):
        calibration_feeds(1152, tmp_path)
    with pytest.raises(QuantizeError, match="needs the text detector's feeds"):
        calibration_for({"calibration": "text"})

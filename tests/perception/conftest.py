"""Prepared model files (``make models``) and the scikit-image test photos."""

import os
from pathlib import Path

import pytest

from onboard.inference.manifest import ModelFileError, load_manifest, model_dir, require_verified
from onboard.inference.settings import InferenceConfig

FIXTURES = Path(__file__).parent / "fixtures"


def _prepared(name: str) -> Path:
    directory = model_dir(os.environ.get("AERIE_MODEL_DIR") or InferenceConfig().model_dir)
    try:
        return require_verified(load_manifest().get(name), directory)
    except ModelFileError as exc:
        pytest.skip(f"{exc} (run `make models`)")


@pytest.fixture
def ssdlite_path() -> Path:
    return _prepared("ssdlite-person")


@pytest.fixture
def rgb():
    import cv2

    def load(name: str):
        bgr = cv2.imread(str(FIXTURES / name), cv2.IMREAD_COLOR)
        assert bgr is not None, f"missing fixture {name}"
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)

    return load


def _reader(det_model: str | None = None):
    from dataclasses import replace

    from onboard.perception.text_reader import open_text_reader

    cfg = replace(InferenceConfig(), providers=("CPUExecutionProvider",), text_threads=1)
    if det_model:
        cfg = replace(cfg, text_det_model=det_model)
    _prepared(cfg.text_det_model)
    _prepared(cfg.text_rec_model)
    directory = model_dir(os.environ.get("AERIE_MODEL_DIR") or cfg.model_dir)
    return open_text_reader(cfg, directory)


@pytest.fixture(scope="module")
def text_reader():
    """The PP-OCRv5 reader as configured (its INT8 detector) on the prepared files, CPU, one thread (a busy CI box)."""
    return _reader()


@pytest.fixture(scope="module")
def text_reader_fp32():
    """The same reader with the fp32 detector the INT8 one is made from."""
    return _reader("ppocrv5-det")

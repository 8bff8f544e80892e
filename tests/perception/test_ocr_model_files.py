"""Broken OCR model files are refused by name, before a session is opened on them."""

import os
import shutil
from dataclasses import replace

import pytest

from onboard.inference.manifest import ModelFileError, load_manifest, model_dir, verify_model
from onboard.inference.ort_session import OrtSession
from onboard.inference.settings import InferenceConfig
from onboard.perception.text_reader import open_text_reader

CFG = replace(InferenceConfig(), providers=("CPUExecutionProvider",), text_threads=1)
FILES = ("ppocrv5_det.onnx", "ppocrv5_det.int8.onnx", "ppocrv5_rec.onnx", "ppocrv5_dict.txt")


@pytest.fixture
def copies(tmp_path):
    """The prepared files copied (not linked) into a model directory of the test's own."""
    src = model_dir(os.environ.get("AERIE_MODEL_DIR") or CFG.model_dir)
    for name in FILES:
        if not (src / name).exists():
            pytest.skip(f"{src / name} is absent (run `make models`)")
        shutil.copyfile(src / name, tmp_path / name)
    shutil.copyfile(src / "checksums.yaml", tmp_path / "checksums.yaml")  # the INT8 file's, recorded when it was made
    return tmp_path


def test_the_manifest_entries_verify(copies):
    m = load_manifest()
    for name in ("ppocrv5-det", "ppocrv5-det-int8", "ppocrv5-rec"):
        assert verify_model(m.get(name), copies).status == "ok"
    reader = open_text_reader(CFG, copies)
    assert len(reader.recognizer.charset) == 18385


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_file_is_named(copies, name, damage):
    path = copies / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3] if damage == "truncated" else os.urandom(len(data)))
    cfg = replace(CFG, text_det_model="ppocrv5-det") if name == "ppocrv5_det.onnx" else CFG
    with pytest.raises(ModelFileError, match=name.replace(".", r"\.") + ".*corrupted"):
        open_text_reader(cfg, copies)


def test_an_unloadable_onnx_file_is_named_by_onnx_runtime_too(tmp_path):
    """Without a pinned checksum (a user's own export) the load itself fails, still naming the file."""
    bad = tmp_path / "mine_det.onnx"
    bad.write_bytes(b"\x08\x07garbage, not a protobuf" * 100)
    with pytest.raises(ModelFileError, match="mine_det.onnx"):
        OrtSession(bad, providers=["CPUExecutionProvider"])

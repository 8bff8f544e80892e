"""TensorRT paths: need a Jetson (JetPack's tensorrt + onnxruntime-gpu) or a CUDA machine.

Deselected by default (markers ``jetson`` / ``gpu``); run on the vehicle with
``pytest -m jetson tests/inference`` after ``aerie models prepare``.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onboard.inference.ort_session import CUDA, TRT, OrtSession, TrtOptions


def _conv_model(path):
    w = np.random.default_rng(0).normal(size=(8, 3, 3, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(w, "w")),
         helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 64, 64])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    return path


@pytest.mark.jetson
def test_build_engine_with_the_tensorrt_api(tmp_path):
    pytest.importorskip("tensorrt")
    from onboard.inference.tensorrt_engine import build_engine, load_engine

    engine = build_engine(_conv_model(tmp_path / "conv.onnx"), tmp_path / "conv.engine", fp16=True)
    assert engine.stat().st_size > 0 and (tmp_path / "conv.timing").exists()
    assert load_engine(engine).num_io_tensors == 2


@pytest.mark.jetson
def test_trt_ep_is_live_and_caches_engines_by_sha256(tmp_path):
    s = OrtSession(_conv_model(tmp_path / "conv.onnx"), providers=[TRT, CUDA], trt=TrtOptions(cache_dir=str(tmp_path / "cache")))
    assert s.provider == TRT
    s.run({"x": np.zeros((1, 3, 64, 64), np.float32)})
    assert any((tmp_path / "cache" / s.sha256).iterdir())


@pytest.mark.gpu
def test_cuda_ep_runs_the_person_detector(ssdlite_path):
    s = OrtSession(ssdlite_path, providers=[CUDA])
    assert s.provider == CUDA


def _dino_and_ranges(tmp_path):
    """The stand-in Grounding DINO network, its tensor ranges on two frames' feeds, and the manifest's profiles."""
    from onboard.inference.manifest import load_manifest
    from onboard.inference.quantize import tensor_ranges
    from sim.standin_networks import build_grounding_dino_network

    path = build_grounding_dino_network(tmp_path / "gd.onnx", 30)
    rng = np.random.default_rng(0)
    feeds = [{"img": rng.normal(size=(1, 3, 750, 1333)).astype(np.float32), "input_ids": rng.integers(0, 30, (1, 8)),
              "attention_mask": np.ones((1, 8), bool), "position_ids": np.arange(8)[None],
              "token_type_ids": np.zeros((1, 8), np.int64), "text_token_mask": np.ones((1, 8, 8), bool)} for _ in range(2)]
    spec = load_manifest().get("grounding-dino-swint-int8")
    return path, tensor_ranges(path, feeds), spec.input["trt_profile"]


@pytest.mark.jetson
def test_int8_engine_from_the_fp32_graph_and_its_ranges(tmp_path):
    pytest.importorskip("tensorrt")
    from onboard.inference.tensorrt_engine import build_engine, load_engine, parse_profile

    path, ranges, profile = _dino_and_ranges(tmp_path)
    engine = build_engine(path, tmp_path / "gd.int8.engine", fp16=True, int8=True, dynamic_ranges=ranges,
                          profiles=[parse_profile(p) for p in profile])
    assert load_engine(engine).num_io_tensors == 8


@pytest.mark.jetson
def test_fp16_engine_of_the_fp16_copy(tmp_path):
    pytest.importorskip("tensorrt")
    from onboard.inference.quantize import float16_model
    from onboard.inference.tensorrt_engine import build_engine, load_engine, parse_profile

    path, _, profile = _dino_and_ranges(tmp_path)
    fp16 = tmp_path / "gd.fp16.onnx"
    float16_model(path, fp16)
    engine = build_engine(fp16, tmp_path / "gd.fp16.engine", fp16=True, profiles=[parse_profile(p) for p in profile])
    assert load_engine(engine).num_io_tensors == 8


@pytest.mark.jetson
def test_an_int8_copy_runs_as_tensorrt_int8_of_its_fp32_source(tmp_path):
    """Where TensorRT is live, `open_model` on an INT8 entry opens the fp32 file with the ranges' table."""
    from onboard.inference import models_cli
    from onboard.inference.manifest import load_manifest
    from onboard.inference.ort_session import open_model
    from onboard.inference.settings import InferenceConfig
    from sim.standin_networks import build_sam_encoder_network

    models = tmp_path / "models"
    assert models_cli.main(["--model-dir", str(models), "import", "mobilesam-encoder",
                            str(build_sam_encoder_network(tmp_path / "enc.onnx"))]) == 0
    assert models_cli.main(["--model-dir", str(models), "quantize", "mobilesam-encoder-int8"]) == 0
    s = open_model(load_manifest().get("mobilesam-encoder-int8"), models, InferenceConfig(model_dir=str(models)))
    assert s.provider == TRT and s.path.name == "mobilesam_encoder.onnx"
    assert s.run({"image": np.zeros((1, 3, 1024, 1024), np.float32)})[0].shape == (1, 256, 64, 64)

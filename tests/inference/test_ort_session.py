"""ONNX Runtime sessions: provider order, TensorRT cache keyed by sha256, corrupted files."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onboard.inference.manifest import ModelFileError
from onboard.inference.ort_session import CPU, CUDA, TRT, OrtSession, TrtOptions, provider_chain


def _tiny_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(path))


def test_chain_orders_trt_cuda_cpu_and_keys_the_engine_cache(tmp_path):
    chain = provider_chain([TRT, CUDA, CPU], [TRT, CUDA, CPU], model_sha256="abc123", trt=TrtOptions(cache_dir=str(tmp_path), int8=True))
    assert [c if isinstance(c, str) else c[0] for c in chain] == [TRT, CUDA, CPU]
    opts = chain[0][1]
    assert opts["trt_engine_cache_enable"] is True and opts["trt_engine_cache_path"].endswith("/abc123")
    assert opts["trt_fp16_enable"] is True and opts["trt_int8_enable"] is True
    assert chain[1][1] == {"cudnn_conv_algo_search": "HEURISTIC", "use_tf32": 0}  # text lines come in many widths


def test_chain_skips_missing_providers_and_always_ends_on_cpu():
    assert provider_chain([TRT, CUDA], [CPU], model_sha256="x") == [CPU]


def test_session_runs_and_reports_the_live_provider(tmp_path):
    _tiny_model(tmp_path / "m.onnx")
    s = OrtSession(tmp_path / "m.onnx")
    assert s.provider == CPU
    out = s.run({"x": np.array([[-1, 2, -3, 4]], np.float32)})
    assert out[0].tolist() == [[0, 2, 0, 4]]


def test_corrupted_model_file_is_a_clear_error_naming_it(tmp_path):
    path = tmp_path / "detector.onnx"
    _tiny_model(path)
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[: len(data) // 2]) + b"\xff" * 16)
    with pytest.raises(ModelFileError, match="detector.onnx"):
        OrtSession(path)


def test_trt_int8_of_an_fp32_graph_names_its_calibration_table(tmp_path):
    from onboard.inference.ort_session import CPU, TRT, TrtOptions, provider_chain

    trt = TrtOptions(int8=True, int8_calibration_table="calibration.flatbuffers", cache_dir=str(tmp_path))
    (name, opts), cpu = provider_chain([TRT, CPU], [TRT, CPU], model_sha256="ab" * 32, trt=trt)
    assert name == TRT and cpu == CPU
    assert opts["trt_int8_enable"] is True and opts["trt_int8_calibration_table_name"] == "calibration.flatbuffers"
    assert opts["trt_engine_cache_path"] == str(tmp_path / ("ab" * 32))  # where ONNX Runtime looks for the table
    (_, fp16_opts), _ = provider_chain([TRT, CPU], [TRT, CPU], model_sha256="ab" * 32, trt=TrtOptions(cache_dir=str(tmp_path)))
    assert "trt_int8_calibration_table_name" not in fp16_opts

"""Build a TensorRT engine from an ONNX model with the TensorRT Python API (Jetson).

Used by ``aerie models build-engine`` on the vehicle: JetPack ships the
``tensorrt`` module, no registry does for this machine, so everything here
imports it lazily and the tests are marked ``jetson``. Engines are not
portable between TensorRT versions or GPUs: build them on the vehicle.
Written for TensorRT 8.6 and 10.x (``build_serialized_network``, memory pool
limits, name-based profiles).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


class EngineBuildError(RuntimeError):
    """TensorRT is missing, or could not parse or build the model; names the file."""


@dataclass(frozen=True)
class EngineProfile:
    input_name: str
    min_shape: tuple[int, ...]
    opt_shape: tuple[int, ...]
    max_shape: tuple[int, ...]


def build_engine(
    onnx_path: Path,
    engine_path: Path,
    *,
    fp16: bool = True,
    int8: bool = False,
    workspace_bytes: int = 1 << 30,
    profiles: Sequence[EngineProfile] = (),
    timing_cache: Path | None = None,
) -> Path:
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise EngineBuildError(f"cannot build an engine for {onnx_path}: the tensorrt module is not installed (JetPack provides it)") from exc

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    flags = 0
    if hasattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH") and int(trt.__version__.split(".")[0]) < 10:
        flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(Path(onnx_path).read_bytes()):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise EngineBuildError(f"TensorRT could not parse {onnx_path}: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_bytes)
    if fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    if int8:
        # Expects a Q/DQ model (``aerie models quantize``); implicit calibration is deprecated in TRT 10.
        config.set_flag(trt.BuilderFlag.INT8)
    if profiles:
        profile = builder.create_optimization_profile()
        for p in profiles:
            profile.set_shape(p.input_name, p.min_shape, p.opt_shape, p.max_shape)
        config.add_optimization_profile(profile)
    cache_path = timing_cache or engine_path.with_suffix(".timing")
    cache = config.create_timing_cache(cache_path.read_bytes() if cache_path.exists() else b"")
    config.set_timing_cache(cache, ignore_mismatch=False)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise EngineBuildError(f"TensorRT failed to build an engine from {onnx_path} (see the log above)")
    engine_path.parent.mkdir(parents=True, exist_ok=True)
    engine_path.write_bytes(bytes(serialized))
    cache_path.write_bytes(bytes(config.get_timing_cache().serialize()))
    return engine_path


def load_engine(engine_path: Path):
    """Deserialize an engine (a smoke check that it belongs to this TensorRT and GPU)."""
    import tensorrt as trt

    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    engine = runtime.deserialize_cuda_engine(Path(engine_path).read_bytes())
    if engine is None:
        raise EngineBuildError(f"{engine_path} does not deserialize with TensorRT {trt.__version__} on this GPU")
    return engine

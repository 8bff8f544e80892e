"""Build a TensorRT engine from an ONNX model with the TensorRT Python API (Jetson).

Used by ``aerie models build-engine`` on the vehicle: JetPack ships the
``tensorrt`` module, no registry does for this machine, so everything here
imports it lazily and the tests are marked ``jetson``. Engines are not
portable between TensorRT versions or GPUs: build them on the vehicle.
Written for TensorRT 8.6 and 10.x (``build_serialized_network``, memory pool
limits, name-based profiles).

INT8 comes two ways. A Q/DQ model carries its own scales (TensorRT 10's preferred path; it
needs symmetric activations). Otherwise the fp32 graph is built with each tensor's dynamic
range from the ranges `aerie models quantize` measured on the simulator's frames
(`derived.write_ranges`): the calibration cache of this path, made once on any machine and
shipped with the release, so the vehicle never runs a calibration. Tensors without a range
stay in FP16. ``ITensor.dynamic_range`` is deprecated in TensorRT 10 but present in the 10.3
JetPack 6 ships.
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


def parse_profile(text: str) -> EngineProfile:
    """``name:min/opt/max`` with shapes as ``1x3x480x640`` -> :class:`EngineProfile`."""
    try:
        name, dims = text.rsplit(":", 1)
        lo, mid, hi = (tuple(int(x) for x in d.split("x")) for d in dims.split("/"))
    except ValueError:
        raise EngineBuildError(f"bad profile {text!r}: expected name:min/opt/max, e.g. img:1x3x480x640/1x3x800x1200/1x3x800x1333") from None
    if not (len(lo) == len(mid) == len(hi)) or any(a > b for a, b in zip(lo, mid)) or any(a > b for a, b in zip(mid, hi)):
        raise EngineBuildError(f"bad profile {text!r}: min <= opt <= max, of one rank")
    return EngineProfile(name, lo, mid, hi)


def build_engine(
    onnx_path: Path,
    engine_path: Path,
    *,
    fp16: bool = True,
    int8: bool = False,
    workspace_bytes: int = 1 << 30,
    profiles: Sequence[EngineProfile] = (),
    timing_cache: Path | None = None,
    dynamic_ranges: dict[str, float] | None = None,
) -> Path:
    """Build and write an engine. `profiles` for inputs the network lacks or has fixed are skipped (one
    profile list serves each export signature); `dynamic_ranges`: tensor name -> max |value| for INT8."""
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
        config.set_flag(trt.BuilderFlag.INT8)
        if dynamic_ranges:
            _set_dynamic_ranges(network, dynamic_ranges)
    dynamic = [network.get_input(i) for i in range(network.num_inputs)]
    inputs = {t.name for t in dynamic if any(d < 0 for d in t.shape)}
    wanted = [p for p in profiles if p.input_name in inputs]
    missing = inputs - {p.input_name for p in wanted}
    if missing:
        raise EngineBuildError(f"{onnx_path}: dynamic inputs {sorted(missing)} have no optimisation profile: give "
                               "--shapes name:min/opt/max for each (or the manifest entry's input.trt_profile)")
    if wanted:
        profile = builder.create_optimization_profile()
        for p in wanted:
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


def _set_dynamic_ranges(network, ranges: dict[str, float]) -> int:
    """Give every network tensor with a measured range its symmetric INT8 range; returns how many."""
    import tensorrt as trt

    floats = (trt.float32, trt.float16)
    tensors = [network.get_input(i) for i in range(network.num_inputs)]
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        tensors += [layer.get_output(j) for j in range(layer.num_outputs)]
    done = 0
    for t in tensors:
        amax = ranges.get(t.name)
        if amax is None or t.dtype not in floats:
            continue
        if hasattr(t, "set_dynamic_range"):
            t.set_dynamic_range(-amax, amax)
        else:
            t.dynamic_range = (-amax, amax)
        done += 1
    if done == 0:
        raise EngineBuildError("none of the network's tensors has a measured range: the ranges are of another graph")
    return done


def load_engine(engine_path: Path):
    """Deserialize an engine (a smoke check that it belongs to this TensorRT and GPU)."""
    import tensorrt as trt

    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    engine = runtime.deserialize_cuda_engine(Path(engine_path).read_bytes())
    if engine is None:
        raise EngineBuildError(f"{engine_path} does not deserialize with TensorRT {trt.__version__} on this GPU")
    return engine

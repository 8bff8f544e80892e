"""ONNX Runtime sessions with the TensorRT EP -> CUDA EP -> CPU EP fallback chain.

The same ONNX file runs on a Jetson (TensorRT, FP16/INT8 engines cached on
disk), a desktop GPU (CUDA) and a CI machine (CPU). Which provider actually
took the graph is reported by :attr:`OrtSession.provider`, because a silent
fall back to CPU on the vehicle turns a 20 ms detector into a 400 ms one.

The TensorRT engine cache is keyed by the model file's sha256, so a replaced
model can never be served by a stale engine built from the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from onboard.inference.manifest import ModelFileError, sha256_file

TRT = "TensorrtExecutionProvider"
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


@dataclass(frozen=True)
class TrtOptions:
    fp16: bool = True
    int8: bool = False
    cache_dir: str = ""
    workspace_bytes: int = 1 << 30
    # "name:1x3x544x960,ids:1x256" style profile strings, for dynamic inputs.
    profile_min: str = ""
    profile_opt: str = ""
    profile_max: str = ""
    # INT8 of an fp32 graph: the calibration table's file name in the engine cache directory.
    int8_calibration_table: str = ""


def provider_chain(
    preferred: Sequence[str],
    available: Sequence[str],
    *,
    model_sha256: str,
    trt: TrtOptions | None = None,
) -> list[Any]:
    """The providers argument for ``InferenceSession``: preferred ∩ available, in order, CPU last.

    TensorRT gets its options: precision, and an engine cache directory whose
    last component is the model's sha256 (engines are not portable between
    models, TensorRT versions or GPUs, so the key must at least pin the model).
    """
    trt = trt or TrtOptions()
    chain: list[Any] = []
    for name in preferred:
        if name not in available or name in [c if isinstance(c, str) else c[0] for c in chain]:
            continue
        if name == TRT:
            opts: dict[str, Any] = {
                "trt_fp16_enable": trt.fp16,
                "trt_int8_enable": trt.int8,
                "trt_max_workspace_size": trt.workspace_bytes,
            }
            if trt.cache_dir:
                cache = Path(trt.cache_dir) / model_sha256
                cache.mkdir(parents=True, exist_ok=True)
                opts.update(
                    trt_engine_cache_enable=True,
                    trt_engine_cache_path=str(cache),
                    trt_timing_cache_enable=True,
                    trt_timing_cache_path=str(cache),
                )
            if trt.int8 and trt.int8_calibration_table:
                opts["trt_int8_calibration_table_name"] = trt.int8_calibration_table
            for key, value in (("min", trt.profile_min), ("opt", trt.profile_opt), ("max", trt.profile_max)):
                if value:
                    opts[f"trt_profile_{key}_shapes"] = value
            chain.append((name, opts))
        elif name == CUDA:
            # The default exhaustive search times every convolution algorithm for each new input shape, and text
            # lines come in many widths: on an H100 a new recogniser shape cost 775 ms that way, 67-75 ms with the
            # heuristic choice (steady state 4-5 ms either way). TF32 matmuls read one name fewer in 46 than the CPU
            # on the reading bench; full FP32 reads what the CPU reads (bench/results/2026-11-26/gpu/).
            chain.append((name, {"cudnn_conv_algo_search": "HEURISTIC", "use_tf32": 0}))
        else:
            chain.append(name)
    if CPU not in [c if isinstance(c, str) else c[0] for c in chain]:
        chain.append(CPU)
    return chain


class OrtSession:
    """One ONNX model loaded in ONNX Runtime.

    ``run`` is deliberately thin (a dict of inputs in, a list of arrays out, the
    output names resolved once) so that the wrapper costs well under 5 % of a
    raw ``InferenceSession.run``; ``aerie bench perception`` measures it.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        providers: Sequence[str] = (TRT, CUDA, CPU),
        trt: TrtOptions | None = None,
        intra_op_threads: int = 0,
        sha256: str | None = None,
    ) -> None:
        import onnxruntime as ort

        self.path = Path(path)
        if not self.path.exists():
            raise ModelFileError(f"model file {self.path} does not exist")
        self.sha256 = sha256 or sha256_file(self.path)
        opts = ort.SessionOptions()
        if intra_op_threads:
            opts.intra_op_num_threads = intra_op_threads
        opts.log_severity_level = 3
        chain = provider_chain(providers, ort.get_available_providers(), model_sha256=self.sha256, trt=trt)
        try:
            self.session = ort.InferenceSession(str(self.path), sess_options=opts, providers=chain)
        except Exception as exc:  # onnxruntime raises its own pybind exception types
            raise ModelFileError(f"model file {self.path} could not be loaded by ONNX Runtime: {exc}") from exc
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.requested_providers = [c if isinstance(c, str) else c[0] for c in chain]

    @property
    def provider(self) -> str:
        """The provider that is live: the first one ONNX Runtime kept for this session."""
        return self.session.get_providers()[0]

    def inputs(self) -> dict[str, tuple[str, list[Any]]]:
        """Input name -> (ONNX type string, shape with symbolic dims as str/None)."""
        return {i.name: (i.type, list(i.shape)) for i in self.session.get_inputs()}

    def outputs(self) -> dict[str, tuple[str, list[Any]]]:
        return {o.name: (o.type, list(o.shape)) for o in self.session.get_outputs()}

    def run(self, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return self.session.run(self.output_names, feeds)


def open_model(spec: Any, directory: Path, cfg: Any) -> OrtSession:
    """Open a manifest model (verified first) with the configured providers.

    ``spec`` is a :class:`~onboard.inference.manifest.ModelSpec`, ``cfg`` an
    :class:`~onboard.inference.settings.InferenceConfig`.
    """
    from onboard.inference.manifest import require_verified_digest

    cache = cfg.trt_cache_dir or str(directory / "trt-cache")
    if "trt_calibration" in spec.companions and TRT in cfg.providers and TRT in _available_providers():
        return _tensorrt_int8_of_source(spec, directory, cfg, cache)
    path, digest = require_verified_digest(spec, directory)
    trt = TrtOptions(fp16=cfg.trt_fp16, int8=cfg.trt_int8, cache_dir=cache, workspace_bytes=cfg.trt_workspace_bytes)
    return OrtSession(path, providers=cfg.providers, trt=trt, intra_op_threads=cfg.intra_op_threads, sha256=digest)


def _available_providers() -> list[str]:
    import onnxruntime as ort

    return ort.get_available_providers()


def _tensorrt_int8_of_source(spec: Any, directory: Path, cfg: Any, cache: str) -> OrtSession:
    """An INT8 copy with TensorRT ranges, where TensorRT is live: its fp32 source with the ranges as the
    calibration table, so TensorRT builds an INT8 engine of the graph it can read (the CPU copy's Q/DQ
    nodes have asymmetric activations, which it refuses). Engines are cached apart from the fp32 ones,
    under the ranges file's sha256."""
    from onboard.inference.derived import read_ranges
    from onboard.inference.manifest import load_manifest, require_verified_companion, require_verified_digest
    from onboard.inference.quantize import write_trt_calibration_table

    base = load_manifest(cfg.manifest or None).get(spec.source["from"])
    path, digest = require_verified_digest(base, directory)
    ranges_file = require_verified_companion(spec, "trt_calibration", directory)
    int8_cache = Path(cache) / f"int8-{sha256_file(ranges_file)[:16]}"
    table = write_trt_calibration_table(read_ranges(ranges_file, digest), int8_cache / digest)
    trt = TrtOptions(fp16=True, int8=True, cache_dir=str(int8_cache), workspace_bytes=cfg.trt_workspace_bytes,
                     int8_calibration_table=table.name)
    return OrtSession(path, providers=cfg.providers, trt=trt, intra_op_threads=cfg.intra_op_threads, sha256=digest)

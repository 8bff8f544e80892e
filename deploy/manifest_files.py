"""Which model files to ship: those of the manifest present locally, verified here.

Reads the manifest and the local ``checksums.yaml`` with plain YAML (the
deploy side need not import the runtime). A file whose sha256 differs from
the pinned or recorded one stops the flash before anything is copied.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from deploy.release import ReleaseError, sha256_file


def local_model_files(manifest_path: Path, model_dir: Path) -> tuple[dict[str, str], list[str], list[str]]:
    """``({file: sha256}, shipped names, absent names)`` for the local model dir."""
    manifest = yaml.safe_load(manifest_path.read_text(encoding="utf-8")) or {}
    recorded = {}
    if (model_dir / "checksums.yaml").exists():
        recorded = yaml.safe_load((model_dir / "checksums.yaml").read_text(encoding="utf-8")) or {}
    files: dict[str, str] = {}
    shipped, absent = [], []
    for name, entry in (manifest.get("models") or {}).items():
        path = model_dir / entry["file"]
        if not path.exists():
            absent.append(name)
            continue
        digest = sha256_file(path)
        expected = entry.get("sha256") or recorded.get(entry["file"])
        if expected and expected != digest:
            raise ReleaseError(f"model file {path} ({name}) sha256 {digest} != expected {expected}: "
                               "refusing to flash a corrupted model")
        files[entry["file"]] = digest
        for companion in (entry.get("companions") or {}).values():
            if (model_dir / companion).exists():
                files[companion] = sha256_file(model_dir / companion)
        shipped.append(name)
    return files, shipped, absent

"""Build the wheel and stage one release directory, named by its content.

A release is ``<version>-<hash>``: the hash covers the wheel, the source
config, the manifest, the model files' sha256, the map file's sha256 and the
systemd unit, so
flashing the same thing twice names the same release and the target can say
"unchanged" from a marker instead of re-copying and re-installing.

Stage layout (what lands in ``<prefix>/releases/<id>/``)::

    aerie-<version>-py3-none-any.whl
    config.yaml              deployed config (model_dir/manifest/data_dir/map.path set)
    config.source.yaml       the config as given, for reference
    models/manifest.yaml     models/<files present locally>  models/checksums.yaml
    map/<name>.aeriemap      the onboard map (deploy/release_map.py)
    systemd/aerie.service
    RELEASE.json             what went in, with sha256s
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


class ReleaseError(RuntimeError):
    """The release cannot be built locally (wheel build, a corrupted model file)."""


@dataclass(frozen=True)
class StagedRelease:
    release_id: str
    version: str
    stage_dir: Path
    wheel: Path
    models: tuple[str, ...]      # manifest names shipped
    models_absent: tuple[str, ...]  # manifest names with no local file
    map_file: str | None = None  # the map's file name under map/, if one is shipped


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def source_files(repo: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files: what a clean build would see."""
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-co", "--exclude-standard", "-z"],
                         check=True, capture_output=True).stdout.decode()
    return sorted(f for f in out.split("\0") if f and (repo / f).is_file())


def build_wheel(repo: Path, work_dir: Path, python: str = sys.executable) -> Path:
    """The project's wheel, built from a clean copy; cached by the sources' hash.

    Building in a copy keeps stale ``build/`` output of the checkout out of
    the wheel; the cache makes the second flash not rebuild (and yields the
    identical wheel bytes, hence the identical release id).
    """
    files = source_files(repo)
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode() + b"\0" + sha256_file(repo / f).encode() + b"\n")
    cache = work_dir / "wheels" / h.hexdigest()[:16]
    wheels = sorted(cache.glob("*.whl"))
    if wheels:
        return wheels[0]
    with tempfile.TemporaryDirectory(prefix="aerie-wheel-") as tmp:
        src = Path(tmp) / "src"
        for f in files:
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / f, src / f)
        proc = subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                               "-w", str(Path(tmp) / "dist"), str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ReleaseError(f"wheel build failed:\n{proc.stdout}{proc.stderr}")
        built = sorted((Path(tmp) / "dist").glob("aerie-*.whl"))
        if not built:
            raise ReleaseError("wheel build produced no aerie-*.whl")
        shutil.rmtree(work_dir / "wheels", ignore_errors=True)  # one cached build is enough
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], cache / built[0].name)
    return cache / built[0].name


def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def deployed_config(source: dict, *, release_dir: str, prefix: str, map_file: str | None = None) -> dict:
    """The source config with paths that make sense on the target.

    Models and the map live in the release (they are part of what was tested
    together); the memory file lives in ``<prefix>/data`` so it survives
    releases. A ``data_dir`` under ``~`` would be the service user's home, so
    it moves to ``<prefix>/data``; an absolute one is kept.
    """
    cfg = dict(source or {})
    data_dir = str(cfg.get("data_dir", "~/.local/share/aerie"))
    if data_dir.startswith("~") or not data_dir.startswith("/"):
        cfg["data_dir"] = f"{prefix.rstrip('/')}/data"
    inference = dict(cfg.get("inference") or {})
    inference["model_dir"] = f"{release_dir}/models"
    inference["manifest"] = f"{release_dir}/models/manifest.yaml"
    cfg["inference"] = inference
    if map_file:
        cfg["map"] = {**(cfg.get("map") or {}), "path": f"{release_dir}/map/{map_file}"}
    return cfg


def local_model_files(manifest_path: Path, model_dir: Path) -> tuple[dict[str, str], list[str], list[str]]:
    """``({file: sha256}, shipped names, absent names)`` for the local model dir: the files to ship.

    Reads the manifest and the local ``checksums.yaml`` with plain YAML (the deploy side need not
    import the runtime). A file whose sha256 differs from the pinned or recorded one stops the flash
    before anything is copied.
    """
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


def _link_or_copy(src: Path, dst: Path) -> None:
    src = src.resolve()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def stage_release(*, wheel: Path, config_path: Path, manifest_path: Path, local_model_dir: Path,
                  unit_text: str, prefix: str, work_dir: Path, map_path: Path | None = None) -> StagedRelease:
    """Assemble the release directory locally; refuse corrupted model files here.

    ``map_path`` is the map file to ship (already checked, `deploy.release_map`); None ships none.
    """
    config_bytes = config_path.read_bytes()
    manifest_bytes = manifest_path.read_bytes()
    files, shipped, absent = local_model_files(manifest_path, local_model_dir)
    version = wheel_version(wheel)
    map_entry = {map_path.name: sha256_file(map_path)} if map_path else {}
    h = hashlib.sha256()
    for part in (sha256_file(wheel), sha256_bytes(config_bytes), sha256_bytes(manifest_bytes),
                 json.dumps(sorted(files.items())), unit_text, prefix):
        h.update(part.encode() + b"\n")
    if map_entry:  # only then, so a release without a map keeps the id it always had
        h.update(json.dumps(map_entry).encode() + b"\n")
    release_id = f"{version}-{h.hexdigest()[:12]}"
    release_dir = f"{prefix.rstrip('/')}/releases/{release_id}"

    # Only the release being flashed is kept staged (the target holds the rest).
    shutil.rmtree(work_dir / "stage", ignore_errors=True)
    stage = work_dir / "stage" / release_id
    (stage / "models").mkdir(parents=True)
    (stage / "systemd").mkdir()
    shutil.copy2(wheel, stage / wheel.name)
    (stage / "config.source.yaml").write_bytes(config_bytes)
    cfg = deployed_config(yaml.safe_load(config_bytes) or {}, release_dir=release_dir, prefix=prefix,
                          map_file=map_path.name if map_path else None)
    (stage / "config.yaml").write_text(
        f"# Generated by `make flash` from config.source.yaml for release {release_id}:\n"
        "# inference.model_dir/manifest and map.path point into this release, data_dir at the persistent data dir.\n"
        + yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    (stage / "models" / "manifest.yaml").write_bytes(manifest_bytes)
    for name, digest in files.items():
        _link_or_copy(local_model_dir / name, stage / "models" / name)
    (stage / "models" / "checksums.yaml").write_text(yaml.safe_dump(dict(sorted(files.items()))), encoding="utf-8")
    (stage / "systemd" / "aerie.service").write_text(unit_text, encoding="utf-8")
    if map_path:
        (stage / "map").mkdir()
        _link_or_copy(map_path, stage / "map" / map_path.name)
    (stage / "RELEASE.json").write_text(json.dumps({
        "release": release_id, "version": version, "wheel": {wheel.name: sha256_file(wheel)},
        "config_sha256": sha256_bytes(config_bytes), "models": files, "map": map_entry,
    }, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return StagedRelease(release_id, version, stage, stage / wheel.name, tuple(shipped), tuple(absent),
                         map_path.name if map_path else None)

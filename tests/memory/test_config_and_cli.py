"""The memory config section and the `aerie memory` command."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from onboard.config import AerieConfig, load_config
from onboard.memory import cli
from onboard.memory.experience_store import ExperienceStore
from contract.records import NavigateExperience
from onboard.memory.settings import MemoryConfig
from common.typed_config import build

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config.yaml"


def test_shipped_memory_section_equals_the_defaults() -> None:
    data = yaml.safe_load(REPO_CONFIG.read_text())
    assert build(MemoryConfig, data["memory"]) == MemoryConfig()


def test_unknown_memory_key_is_an_error(tmp_path: Path) -> None:
    import pytest

    from common.typed_config import ConfigError

    cfg_file = tmp_path / "config.yaml"
    cfg_file.write_text("memory:\n  anchors:\n    stuck_windw: 3\n")
    with pytest.raises(ConfigError, match="memory.anchors.stuck_windw"):
        load_config(cfg_file)


def test_cli_stats_search_export_import(tmp_path: Path, embedder, cfg, capsys) -> None:
    db = tmp_path / "m.sqlite"
    with ExperienceStore.open(db, embedder, cfg) as s:
        s.add(NavigateExperience("reach the tower", "failure", "circle the tower clockwise", "{}",
                                 "a radio tower with red lights ahead"))
    assert cli.main(["--db", str(db), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["counts"]["navigate_experience_memory"] == {"success": 0, "failure": 1}
    assert cli.main(["--db", str(db), "search", "red lights on a radio mast", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["record"]["reflect_reason"] == "circle the tower clockwise"
    bundle = tmp_path / "b.msgpack"
    assert cli.main(["--db", str(db), "export", str(bundle)]) == 0
    other = tmp_path / "o.sqlite"
    assert cli.main(["--db", str(other), "import", str(bundle)]) == 0
    assert cli.main(["--db", str(other), "import", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert "1 added" in out and "0 added, 1 already present" in out


def test_cli_errors_name_the_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 10)
    assert cli.main(["--db", str(bad), "stats"]) == 1
    assert str(bad) in capsys.readouterr().err
    assert cli.main(["--db", str(tmp_path / "missing.sqlite"), "stats"]) == 1

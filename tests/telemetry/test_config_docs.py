"""The documented YAML (config.yaml's telemetry section, ground.example.yaml) equals the dataclass defaults."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from ground_station.settings import GroundConfig, load_ground_config
from onboard.telemetry.settings import TelemetryConfig
from common.typed_config import build

REPO = Path(__file__).resolve().parents[2]


def _commented_keys(text: str) -> set[str]:
    """Keys preceded by a comment line (or sharing one with the key just above, as pairs do)."""
    keys, prev_comment, prev_key = set(), False, False
    for line in text.splitlines():
        stripped = line.strip().lstrip("- ").strip()
        if stripped.startswith("#"):
            prev_comment, prev_key = True, False
        elif ":" in stripped:
            key = stripped.split(":", 1)[0]
            if prev_comment or prev_key:
                keys.add(key)
            prev_comment, prev_key = False, True
    return keys


def test_telemetry_section_is_the_defaults_and_documented() -> None:
    text = (REPO / "config.yaml").read_text()
    section = yaml.safe_load(text)["telemetry"]
    assert build(TelemetryConfig, section, where="telemetry") == TelemetryConfig()
    assert set(section) == {f.name for f in dataclasses.fields(TelemetryConfig)}
    assert {f.name for f in dataclasses.fields(TelemetryConfig)} <= _commented_keys(text)


def test_ground_example_is_the_defaults_and_documented() -> None:
    path = REPO / "ground_station" / "ground.example.yaml"
    cfg, _ = load_ground_config(path)
    assert cfg == GroundConfig()
    assert {f.name for f in dataclasses.fields(GroundConfig)} <= _commented_keys(path.read_text())

"""The `map:` config section: defaults as documented, unknown keys and bad values refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from common.typed_config import ConfigError
from onboard.config import AerieConfig, load_config
from onboard.map.build_params import BuildParams
from onboard.map.corridors import MIN_SPACING_M, SAMPLE_M
from onboard.map.settings import MapConfig, default_map_path, map_file_path

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, map_section: dict) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"map": map_section}))
    return path


def test_defaults_are_the_shipped_config_and_todays_constants():
    shipped = yaml.safe_load((REPO / "config.yaml").read_text())["map"]
    assert load_config(REPO / "config.yaml").map == MapConfig() == AerieConfig().map
    assert shipped["build"] == {"sample_m": SAMPLE_M, "min_spacing_m": MIN_SPACING_M, "network": "auto", "poi_radius_m": 50.0}
    assert MapConfig().path == "" and MapConfig().build == BuildParams()


@pytest.mark.parametrize("section, words", [
    ({"pth": "x.aeriemap"}, ["unknown key 'map.pth'"]),
    ({"build": {"min_spacing": 40}}, ["unknown key 'map.build.min_spacing'"]),
    ({"build": {"min_spacing_m": 0.1}}, ["'map.build.min_spacing_m' = 0.1 is outside its range"]),
    ({"build": {"sample_m": float("nan")}}, ["map.build.sample_m"]),
    ({"build": {"network": "flying"}}, ["network must be one of auto, driving, walking, cycling, all"]),
    ({"build": {"sample_m": 45.0, "min_spacing_m": 40.0}}, ["sample_m (45.0) must be below min_spacing_m"]),
    ({"extract_sha256": "abc"}, ["extract_sha256 must be 64 lower-case hex digits"]),
])
def test_bad_map_config_is_refused_naming_key_and_file(tmp_path, section, words):
    path = write(tmp_path, section)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    msg = str(exc.value)
    assert str(path) in msg
    for w in words:
        assert w in msg, msg


def test_paths_resolve_against_data_dir(tmp_path):
    assert map_file_path(tmp_path, MapConfig()) is None
    assert default_map_path(tmp_path, MapConfig()) == tmp_path / "map.aeriemap"
    assert map_file_path(tmp_path, MapConfig(path="maps/h.aeriemap")) == tmp_path / "maps" / "h.aeriemap"
    assert map_file_path(tmp_path, MapConfig(path="/srv/h.aeriemap")) == Path("/srv/h.aeriemap")
    assert default_map_path(tmp_path, MapConfig(path="h.aeriemap")) == tmp_path / "h.aeriemap"
    cfg = load_config(write(tmp_path, {"path": "h.aeriemap", "build": {"network": "walking"}}))
    assert cfg.map.path == "h.aeriemap" and cfg.map.build.network == "walking"

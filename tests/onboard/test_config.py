from pathlib import Path

import pytest

from onboard.config import AerieConfig, load_config
from common.typed_config import ConfigError

REPO = Path(__file__).resolve().parents[2]


def test_shipped_config_equals_documented_defaults():
    assert load_config(REPO / "config.yaml") == AerieConfig()


def test_unknown_key_is_named_with_file(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("safety:\n  altitude_cieling_m: 50\n")
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "safety.altitude_cieling_m" in str(err.value)
    assert str(f) in str(err.value)


def test_unknown_top_level_key(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("vehicle_idd: x\n")
    with pytest.raises(ConfigError, match="vehicle_idd"):
        load_config(f)


def test_wrong_type_is_rejected(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("streamer:\n  rate_hz: fast\n")
    with pytest.raises(ConfigError, match="streamer.rate_hz"):
        load_config(f)


def test_invalid_value_is_rejected(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("streamer:\n  rate_hz: 1.0\n")
    with pytest.raises(ConfigError, match="rate_hz"):
        load_config(f)


def test_partial_file_keeps_other_defaults(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("safety:\n  altitude_ceiling_m: 60\n  geofence:\n    polygon: [[47.0, 8.0], [47.1, 8.0], [47.1, 8.1]]\n")
    cfg = load_config(f)
    assert cfg.safety.altitude_ceiling_m == 60
    assert cfg.safety.geofence.polygon == [(47.0, 8.0), (47.1, 8.0), (47.1, 8.1)]
    assert cfg.streamer == AerieConfig().streamer


def test_malformed_yaml(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("link: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(f)


def test_gimbal_pitches_are_range_checked(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("supervisor:\n  camera_reading:\n    pitches_deg: [-15, -45]\n")
    assert load_config(f).supervisor.camera_reading.pitches_deg == (-15.0, -45.0)
    for key in ("pitches_deg", "low_pitches_deg"):
        for bad in ("[-15, .nan]", "[-95]", "[-10, -20, -30, -40, -50]"):
            f.write_text(f"supervisor:\n  camera_reading:\n    {key}: {bad}\n")
            with pytest.raises(ConfigError, match=key):
                load_config(f)
    f.write_text("supervisor:\n  camera_reading:\n    low_pitches_deg: [-30]\n")
    reading = load_config(f).supervisor.camera_reading
    assert reading.pitches_at(low=True) == (-30.0,) and reading.pitches_at(low=False) == ()
    assert load_config(None).supervisor.camera_reading.pitches_at(low=True) == (-15.0, -30.0)

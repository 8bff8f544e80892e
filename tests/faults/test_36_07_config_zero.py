"""Issue 36.7: config numbers whose zero (or negative) breaks the service were accepted.

`telemetry.queue_max_messages: 0` and friends passed `aerie config`; then
the standby service hung before READY ignoring SIGTERM, journaled nothing,
spun a core (`mission_poll_s: 0`) or died with an error naming no key. Every
number in the sections below now declares the range that makes sense for it
(`ranged()` in its dataclass, checked at load by common/typed_config.py:
NaN fails, and a zero where zero breaks the service is outside the range),
refused with the key's name, by the loader and by `aerie config` as a process.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from common.typed_config import RANGE, ConfigError
from onboard.config import AerieConfig, load_config

ROOT = Path(__file__).resolve().parents[2]

# The keys of the row, and others whose zero stalls or spins the service.
ZERO_BREAKS = [
    "telemetry.queue_max_messages", "telemetry.commit_batch_max", "telemetry.pub_max_inbound_bytes",
    "telemetry.send_hwm", "telemetry.replay_max_request_bytes", "telemetry.max_message_bytes",
    "telemetry.replay_batch_max", "telemetry.replay_batch_max_bytes", "telemetry.sync_max_bundle_bytes",
    "supervisor.mission_poll_s", "supervisor.world_timeout_s", "supervisor.move_timeout_s",
    "supervisor.takeoff_timeout_s", "supervisor.land_timeout_s", "supervisor.restart_backoff_s",
    "supervisor.step_limit", "supervisor.camera_width", "inference.call_deadline_s", "inference.max_tokens",
]
# Sections whose every number must declare its own range. The others (agent, memory, map, fleet_channel)
# belong to other work in progress and still take the default 0..inf.
RANGED_SECTIONS = ("link", "streamer", "safety", "fleet", "telemetry", "supervisor", "inference")


def _yaml_for(dotted: str, value: str) -> str:
    *sections, key = dotted.split(".")
    lines = [f"{'  ' * i}{s}:" for i, s in enumerate(sections)]
    return "\n".join(lines + [f"{'  ' * len(sections)}{key}: {value}"]) + "\n"


def _numbers(cls: type, prefix: str = "") -> list[tuple[str, dataclasses.Field]]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            out += _numbers(tp, f"{prefix}{f.name}.")
        elif tp in (int, float):
            out.append((prefix + f.name, f))
    return out


@pytest.mark.parametrize("key", ZERO_BREAKS)
@pytest.mark.parametrize("value", ["0", "-1"])
def test_zero_or_negative_is_refused_naming_the_key(tmp_path, key, value):
    f = tmp_path / "config.yaml"
    f.write_text(_yaml_for(key, value))
    with pytest.raises(ConfigError, match=rf"'{key.replace('.', '[.]')}' = {value}(\.0)? is outside its range"):
        load_config(f)


def test_every_number_of_the_ranged_sections_declares_its_range():
    unranged = [key for key, f in _numbers(AerieConfig)
                if key.split(".")[0] in RANGED_SECTIONS and RANGE not in f.metadata]
    assert unranged == []


def test_every_declared_range_holds_its_default_and_refuses_just_outside(tmp_path):
    for key, f in _numbers(AerieConfig):
        if RANGE not in f.metadata:
            continue
        lo, hi = f.metadata[RANGE]
        assert lo <= f.default <= hi, key
        below = lo - 1 if isinstance(f.default, int) and not isinstance(lo, float) else lo - abs(lo) * 0.5 - 0.01
        cfg = tmp_path / "config.yaml"
        cfg.write_text(_yaml_for(key, repr(below)))
        with pytest.raises(ConfigError, match=key.replace(".", "[.]")):
            load_config(cfg)


def test_aerie_config_process_refuses_a_zero_queue_naming_the_key(tmp_path):
    f = tmp_path / "config.yaml"
    f.write_text("telemetry:\n  queue_max_messages: 0\nsupervisor:\n  mission_poll_s: 0.5\n")
    proc = subprocess.run([sys.executable, "-m", "aerie", "config", "--config", str(f)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "telemetry.queue_max_messages" in proc.stderr and "outside its range" in proc.stderr


def test_the_shipped_config_and_sensible_values_still_load(tmp_path):
    assert load_config(ROOT / "config.yaml") == AerieConfig()
    f = tmp_path / "config.yaml"
    f.write_text("telemetry:\n  state_rate_hz: 0\n  close_ack_wait_s: 0\nsupervisor:\n  lessons_wait_s: 0\n"
                 "  detect_every_steps: 0\n  mission_poll_s: 0.2\n")
    cfg = load_config(f)
    assert cfg.telemetry.state_rate_hz == 0 and cfg.supervisor.mission_poll_s == 0.2

"""Issue 36.1: a mission file nested 5,000 deep, or mixing key types, crash-looped the standby service.

`MissionQueue.next()` caught only ConfigError/ValueError; a RecursionError
(5,000 nested lists or mappings) or a TypeError (``1: a`` beside ``typo: b``,
which sorting the unknown keys tripped on) reached `_standby`, the service
exited and, the file still queued, did so again on every restart, so the
valid mission behind it never flew. Now the one YAML parser refuses depth
and non-string keys as ConfigErrors, and the queue refuses any file whose
taking raises anything at all. The standby loop here is the real one over a
real queue folder; only the flight is faked (tests/faults/standbykit.py).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from contract.typed_config import ConfigError
from onboard.supervisor.mission import load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from tests.faults.standbykit import outcome, run_standby, standby_config

HOSTILE = {
    "1-deep-lists.yaml": "instruction: find it\ngeofence: " + "[" * 5000 + "]" * 5000 + "\n",
    "2-deep-maps.yaml": "instruction: find it\ngeofence: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    "3-mixed-keys.yaml": "1: a\ntypo: b\ninstruction: find it\n",
    "4-bool-key.yaml": "instruction: find it\nyes: 1\n",
    "5-not-utf8.yaml": b"instruction: \xff\xfe find it\n",
    "6-bad-date.yaml": "instruction: 2026-13-45\n",
}
REASONS = {"1-deep-lists.yaml": "nested deeper", "2-deep-maps.yaml": "nested deeper",
           "3-mixed-keys.yaml": "not a string", "4-bool-key.yaml": "not a string",
           "5-not-utf8.yaml": "not UTF-8", "6-bad-date.yaml": "not valid YAML"}


def _write(queue: MissionQueue) -> None:
    for name, text in HOSTILE.items():
        (queue.dir / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    (queue.dir / "9-good.yaml").write_text("instruction: find the cafe\nname: good\nstep_limit: 3\n")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_file_is_a_config_error(tmp_path, name):
    f = tmp_path / name
    text = HOSTILE[name]
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError, match=REASONS[name]) as err:
        load_mission(f)
    assert len(str(err.value)) < 1024


def test_standby_refuses_each_hostile_file_and_flies_the_valid_one_behind_them(tmp_path, monkeypatch):
    cfg = standby_config(tmp_path / "vehicle")
    queue = MissionQueue(tmp_path / "vehicle" / "missions")
    _write(queue)

    async def good(mission, stop: asyncio.Event):
        stop.set()
        return outcome(mission, "20261128T110000Z")

    rc, flown = run_standby(monkeypatch, cfg, [good])
    assert rc == 0 and flown == ["good"]  # the service went on to the valid mission and stopped only on stop
    assert queue.pending() == []
    for name, reason in REASONS.items():
        [kept] = queue.records(name, ok=False)
        text = outcome_path(kept).read_text()
        assert reason in json.loads(text)["error"], (name, text)
        assert len(text) < 1024 and kept.exists()
    [done] = queue.records("9-good.yaml", ok=True)
    assert json.loads(outcome_path(done).read_text())["reason"] == "arrived"


def test_any_exception_while_taking_a_file_refuses_that_file_only(tmp_path, monkeypatch):
    """Whatever the parser (or a later check) raises, not only the errors it is known to raise today."""
    cfg = standby_config(tmp_path / "vehicle")
    queue = MissionQueue(tmp_path / "vehicle" / "missions")
    (queue.dir / "1-odd.yaml").write_text("instruction: find it\nname: odd\n")
    (queue.dir / "2-good.yaml").write_text("instruction: find the cafe\nname: good\n")
    real = load_mission

    def load(path):
        if path.name == "1-odd.yaml":
            raise KeyError("an error of a kind nobody listed")
        return real(path)

    monkeypatch.setattr("onboard.supervisor.mission_queue.load_mission", load)

    async def good(mission, stop: asyncio.Event):
        stop.set()
        return outcome(mission, "20261128T110000Z")

    rc, flown = run_standby(monkeypatch, cfg, [good])
    assert rc == 0 and flown == ["good"]
    [kept] = queue.records("1-odd.yaml", ok=False)
    assert "KeyError" in json.loads(outcome_path(kept).read_text())["error"]

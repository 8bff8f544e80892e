"""Issue 36.2: a 358-byte "billion laughs" file or a 100 MB one blocked the service and filled the disk.

The ConfigError embedded ``repr`` of the alias-expanded tree (351 MB of text
in the outcome JSON and on `aerie config`'s stderr, the event loop blocked
11 s), and a 100 MB mission file was read and parsed whole. Now the one
parser (common/untrusted_yaml.py) refuses a file larger than its limit
before reading it, counts an alias as everything it stands for as each node
is composed (so the refusal comes after a bounded number of nodes, whatever
the nesting), and every error message is clipped. Bounds are measured here
as counts and bytes, not seconds: the nodes composed, the bytes allocated,
the length of what is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from common import untrusted_yaml
from common.typed_config import ConfigError
from onboard.config import load_config
from onboard.supervisor.mission import load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path

ROOT = Path(__file__).resolve().parents[2]


def laughs(levels: int = 9) -> str:
    """Aliases nested ``levels`` deep inside one typed key: 9**levels strings once expanded."""
    rows = ['&l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    rows += [f"&l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "[" + ", ".join(rows) + "]"


MISSION_BOMB = f"instruction: {laughs()}\n"
CONFIG_BOMB = f"supervisor:\n  detect_prompts: {laughs()}\n"


def _composed(monkeypatch) -> list[int]:
    """Counts the nodes the parser composes (aliases included)."""
    count = [0]
    real = untrusted_yaml._BoundedLoader.compose_node

    def counted(self, parent, index):
        count[0] += 1
        return real(self, parent, index)

    monkeypatch.setattr(untrusted_yaml._BoundedLoader, "compose_node", counted)
    return count


@pytest.mark.parametrize("text, load", [(MISSION_BOMB, load_mission), (CONFIG_BOMB, load_config)],
                         ids=["mission", "config"])
def test_laughs_are_refused_after_a_bounded_number_of_nodes_with_a_short_message(tmp_path, monkeypatch, text, load):
    assert len(text) < 512  # a few hundred bytes standing for 9**9 strings
    f = tmp_path / "bomb.yaml"
    f.write_text(text)
    composed = _composed(monkeypatch)
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="expands to more than") as err:
            load(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert composed[0] < 200  # the document's own nodes and aliases, never their expansion
    assert peak < 2 * 2**20
    assert len(str(err.value)) < 1024


def test_a_big_value_inside_a_valid_size_is_quoted_short(tmp_path):
    """No alias at all: a 60 KB list where a string belongs; the message quotes a few dozen characters of it."""
    f = tmp_path / "m.yaml"
    f.write_text("instruction: [" + ", ".join(["x" * 50] * 1100) + "]\n")
    assert 50_000 < f.stat().st_size < untrusted_yaml.MISSION_LIMITS.max_bytes
    with pytest.raises(ConfigError, match="must be a string") as err:
        load_mission(f)
    assert len(str(err.value)) < 1024


def test_a_100_mb_mission_file_is_refused_unread(tmp_path):
    queue = MissionQueue(tmp_path / "missions")
    big = queue.dir / "1-huge.yaml"
    with big.open("wb") as fh:  # sparse: 100 MB long, no disk used
        fh.truncate(100 * 2**20)
    (queue.dir / "2-good.yaml").write_text("instruction: find the cafe\nname: good\n")
    tracemalloc.start()
    try:
        path, mission = queue.next()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mission.name == "good"
    assert peak < 2**20  # not read: the refusal came from the file's size
    [kept] = queue.records("1-huge.yaml", ok=False)
    record = outcome_path(kept).read_text()
    assert "larger than" in json.loads(record)["error"] and len(record) < 1024


def test_queued_bomb_leaves_a_small_outcome(tmp_path):
    queue = MissionQueue(tmp_path / "missions")
    (queue.dir / "1-bomb.yaml").write_text(MISSION_BOMB)
    assert queue.next() is None
    [kept] = queue.records("1-bomb.yaml", ok=False)
    assert os.path.getsize(outcome_path(kept)) < 1024


@pytest.mark.parametrize("kind", ["laughs", "100 MB"])
def test_aerie_config_process_refuses_with_a_short_stderr(tmp_path, kind):
    f = tmp_path / "config.yaml"
    if kind == "laughs":
        f.write_text(CONFIG_BOMB)
    else:
        with f.open("wb") as fh:
            fh.truncate(100 * 2**20)
    proc = subprocess.run([sys.executable, "-m", "aerie", "config", "--config", str(f)], cwd=ROOT,
                          capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert len(proc.stderr) < 1024 and proc.stdout == b""
    assert (b"expands to more than" if kind == "laughs" else b"larger than") in proc.stderr, proc.stderr

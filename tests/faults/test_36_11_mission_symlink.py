"""Issue 36.11: a mission file that is a symbolic link was followed, and what it pointed to echoed.

A link in the queue to any file the service could read was opened through,
and its lines came back in a world-readable `failed/...outcome.json` as
"unknown keys". Mission files are now opened with O_NOFOLLOW
(common/untrusted_yaml.py `read_bytes`): a link is refused as a link,
whatever it points to, moved to failed/ as the link itself, and nothing of
its target is read. `aerie fly --mission` refuses one the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from common.typed_config import ConfigError
from onboard.supervisor.mission import load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path

ROOT = Path(__file__).resolve().parents[2]
SECRET = "api_token: hunter2-do-not-echo\nsecond_line: also-private\n"


def test_queued_links_are_refused_as_links_and_their_targets_never_read(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text(SECRET)
    valid = tmp_path / "valid.yaml"
    valid.write_text("instruction: find the cafe\nname: via-link\n")
    queue = MissionQueue(tmp_path / "missions")
    (queue.dir / "1-secret.yaml").symlink_to(secret)
    (queue.dir / "2-valid-target.yaml").symlink_to(valid)  # refused too: a link is never followed
    (queue.dir / "3-dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (queue.dir / "4-good.yaml").write_text("instruction: find the cafe\nname: good\n")
    path, mission = queue.next()
    assert mission.name == "good"
    for name in ("1-secret.yaml", "2-valid-target.yaml", "3-dangling.yaml"):
        [kept] = queue.records(name, ok=False)
        record = outcome_path(kept).read_text()
        assert "symbolic link" in json.loads(record)["error"], record
        assert "hunter2" not in record and "second_line" not in record
        assert kept.is_symlink()  # the link moved, not its target
    assert secret.read_text() == SECRET and valid.exists()


def test_load_mission_refuses_a_link(tmp_path):
    target = tmp_path / "valid.yaml"
    target.write_text("instruction: find the cafe\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        load_mission(link)
    assert load_mission(target).instruction == "find the cafe"


def test_aerie_fly_refuses_a_mission_link(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text(SECRET)
    link = tmp_path / "mission.yaml"
    link.symlink_to(secret)
    proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--mission", str(link),
                           "--data-dir", str(tmp_path / "vehicle"), "--vehicle-url", "udpin://127.0.0.1:9"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "symbolic link" in proc.stderr and "hunter2" not in proc.stderr + proc.stdout
    assert not (tmp_path / "vehicle").exists()

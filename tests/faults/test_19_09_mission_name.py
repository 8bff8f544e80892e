"""Issue 19.9: a mission name containing ``../`` must not write outside ``data_dir``.

A mission's name becomes part of its results folder and map file names. A
name that is not one plain file-name component is refused with a clear error,
on every way a mission arrives: a mission file, the standby queue, and
`aerie fly --name` as a real process; the results folder itself refuses to
resolve outside the results directory even if a bad name got that far.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from common.typed_config import ConfigError
from onboard.supervisor.mission import Mission, load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from onboard.supervisor.supervisor import results_folder

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ["../../escape", "../escape", "a/b", "..", ".hidden", "a\x00b", "x" * 81, "/etc/cron.d/x", "trail."]


def _everything_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused(name):
    with pytest.raises(ValueError, match="not a safe file name"):
        Mission(instruction="find the cafe", name=name)


def test_ordinary_names_still_work():
    for name in ("mission", "t019", "cafe run 2", "north-loop_v1.2"):
        assert Mission(instruction="find the cafe", name=name).name == name


def test_mission_file_with_dotdot_name_is_refused(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("instruction: find the cafe\nname: ../../escape\n")
    with pytest.raises(ConfigError, match="not a safe file name"):
        load_mission(f)


def test_queued_mission_with_dotdot_name_goes_to_failed_with_the_reason(tmp_path):
    data = tmp_path / "vehicle"
    q = MissionQueue(data / "missions")
    (q.dir / "1-evil.yaml").write_text("instruction: find the cafe\nname: ../../../../escape\n")
    (q.dir / "2-good.yaml").write_text("instruction: find the cafe\nname: good\n")
    path, mission = q.next()
    assert mission.name == "good"
    [kept] = q.records("1-evil.yaml", ok=False)
    reason = outcome_path(kept).read_text()
    assert "not a safe file name" in reason and kept.exists()
    assert not any("escape" in str(p) for p in tmp_path.rglob("*") if "missions" not in p.parts)


def test_aerie_fly_process_refuses_the_name_and_writes_nothing_outside(tmp_path):
    data = tmp_path / "a" / "b" / "vehicle"
    before = _everything_under(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--instruction", "find the cafe",
                           "--name", "../../../escape", "--data-dir", str(data), "--vehicle-url", "udpin://127.0.0.1:9"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "not a safe file name" in proc.stderr
    assert _everything_under(tmp_path) == before  # not even data_dir was created


def test_results_folder_never_resolves_outside(tmp_path):
    root = tmp_path / "results"
    assert results_folder(root, "20250101T000000Z_ok").parent == root.resolve()
    for name in ("20250101T000000Z_../../escape", "../escape", "a/b"):
        with pytest.raises(ValueError, match="outside"):
            results_folder(root, name)

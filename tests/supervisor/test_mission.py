"""Mission files and the standby queue: unknown keys rejected, half-written files never read, a record kept."""

import json

import pytest

from onboard.supervisor.mission import Mission, load_mission
from onboard.supervisor.mission_queue import MissionQueue, outcome_path
from common.typed_config import ConfigError


def test_mission_file_and_errors(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("instruction: Find the kiosk north of the theatre\nstep_limit: 12\n"
                 "geofence: {max_distance_from_home_m: 800, action: clamp}\n")
    m = load_mission(p)
    assert m.step_limit == 12 and m.geofence.max_distance_from_home_m == 800 and m.geofence.action == "clamp"
    p.write_text("instruction: x\naltitude: 300\n")
    with pytest.raises(ConfigError, match="altitude"):
        load_mission(p)
    with pytest.raises(ValueError):
        Mission(instruction="   ")


def test_queue_order_staging_and_records(tmp_path):
    q = MissionQueue(tmp_path / "missions")
    (q.dir / ".2-staging.yaml").write_text("instruction: not yet\n")
    (q.dir / "3-b.yaml").write_text("instruction: second\n")
    (q.dir / "1-bad.yaml").write_text("instruction: [not, a, string\n")
    (q.dir / "2-a.json").write_text(json.dumps({"instruction": "first", "name": "a"}))
    path, mission = q.next()
    assert path.name == "2-a.json" and mission.name == "a"
    [bad] = q.records("1-bad.yaml", ok=False)
    assert bad.exists() and outcome_path(bad).exists()
    kept = q.finish(path, {"reason": "arrived"}, ok=True, flight_id="20261128T110000Z")
    assert kept.name == "20261128T110000Z_2-a.json" and q.records("2-a.json", ok=True) == [kept]
    assert json.loads(outcome_path(kept).read_text()) == {"reason": "arrived"}
    path, mission = q.next()
    assert mission.instruction == "second"
    q.finish(path, {}, ok=True)
    assert q.next() is None  # the staged file is never read

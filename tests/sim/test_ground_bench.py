"""`aerie bench ground` on a small fleet: its verdict comes from the log (nothing lost, every flight closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim import ground_bench
from tests.ground_station.pgkit import start_cluster


def test_two_ingest_processes_one_killed_lose_nothing(tmp_path: Path) -> None:
    start_cluster().stop()   # skips, saying why, where no PostgreSQL server can start
    out = tmp_path / "ground.json"
    assert ground_bench.main(["--vehicles", "4", "--ingest", "2", "--backend", "postgresql", "--duration", "3",
                              "--lease-s", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert (result["lost"], result["flights"], result["flights_ended"]) == (0, 4, 4)
    assert result["stored"] == result["published"] and result["acknowledged_to_last"] == 4
    assert result["vehicles_per_process_before_kill"] == [2, 2] and result["killed_process_vehicles"] == 2
    assert result["takeover_s"] > 0


def test_several_ingest_processes_need_postgresql(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ground_bench.main(["--ingest", "2", "--backend", "sqlite"])
    assert "PostgreSQL" in capsys.readouterr().err

"""`aerie bench explore`: a tiny run completes, writes the report, and the sharing team behaves."""

from __future__ import annotations

import json

from sim import explore_bench
from sim.explore_episode import run_team, starts_from_seed
from tests.sim._world_fixture import helsinki


def test_cli_writes_the_report(tmp_path, capsys):
    helsinki()
    out = tmp_path / "explore.json"
    assert explore_bench.main(["--starts", "2", "--budget", "6", "--seed", "3", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    for key in ("one_agent_mean_pois", "two_independent_mean_pois", "two_sharing_mean_pois",
                "two_sharing_mean_overlap", "two_independent_mean_overlap", "records", "budget", "starts"):
        assert key in rep
    assert rep["starts"] == 2 and len(rep["records"]) == 2
    rec = rep["records"][0]
    assert len(rec["one_agent"]["trails"]) == 1 and len(rec["two_sharing"]["trails"]) == 2
    assert all(len(t) == 7 for t in rec["two_sharing"]["trails"])  # start + one waypoint per step
    assert rec["two_sharing"]["link"][0]["sent"] == 6
    assert "two_sharing" in capsys.readouterr().out


def test_sharing_vehicles_split_up_and_the_link_is_clean():
    world = helsinki()
    start = starts_from_seed(world, 1, 11)[0]
    r = run_team(world, start, 12, 2, True, seed=5)
    assert r.claim_clashes == 0 and r.refused_frames == 0 and r.late_frames == 0
    # after the shared launch waypoint they fly apart (a route back through the peer's ground may cross once)
    assert len(set(r.trails[0][1:]) & set(r.trails[1][1:])) <= 1
    assert r.team_pois == len(r.pois_by_vehicle[0] | r.pois_by_vehicle[1])

"""Exploration as vehicle processes: real ZeroMQ between real processes, and failures that end no run."""

from __future__ import annotations

import json

from sim import explore_bench
from sim.explore_episode import starts_from_seed
from sim.explore_episode import TeamResult
from sim.explore_fleet import FleetTeamResult, Pace, VehicleOutcome, run_fleet_team
from sim.explore_vehicle import Fault, StepTiming, VehicleReport
from tests.sim._world_fixture import helsinki

FAST = Pace(time_scale=100.0, stagger_s=0.1)  # legs of a few ms: the tests check behaviour, never timing


def legal_walk(world, trail: list[int]) -> bool:
    return all(b == a or b in world.graph.adj[a] for a, b in zip(trail, trail[1:]))


def test_two_sharing_processes_hear_each_other_and_fly_legal_walks():
    world = helsinki()
    start = starts_from_seed(world, 1, 11)[0]
    # legs of ~0.17 s: each vehicle's mission lasts far longer than the other's start-up, even on a busy machine
    r = run_fleet_team(start, 8, 2, True, seed=5, pace=Pace(time_scale=30.0, stagger_s=0.1))
    assert r.failed == []
    assert [o.exitcode for o in r.outcomes] == [0, 0]
    for rep in r.reports:
        assert rep.subscribed
        assert rep.counters["sent"] == 8 and rep.counters["merged"] > 0, rep.counters
        assert rep.trail[0] == start and len(rep.trail) == 9
        assert legal_walk(world, rep.trail), rep.trail
        assert len(rep.steps) == 9
    assert r.team.team_pois == len(r.team.pois_by_vehicle[0] | r.team.pois_by_vehicle[1]) > 0


def test_a_crashed_vehicle_is_reported_with_its_exit_code_and_the_others_finish():
    world = helsinki()
    start = starts_from_seed(world, 1, 11)[0]
    r = run_fleet_team(start, 6, 3, True, seed=2, pace=FAST, faults={1: Fault(2)})
    assert r.failed == [1]
    crashed = r.outcomes[1]
    assert crashed.exitcode == 1 and "InjectedFault" in crashed.error
    assert r.team.trails[1] == [] and r.team.pois_by_vehicle[1] == set()
    for i in (0, 2):
        rep = r.outcomes[i].report
        assert r.outcomes[i].exitcode == 0 and len(rep.trail) == 7 and legal_walk(world, rep.trail)


def test_a_wedged_vehicle_is_killed_at_the_deadline_and_the_others_stand():
    world = helsinki()
    start = starts_from_seed(world, 1, 11)[0]
    r = run_fleet_team(start, 6, 2, True, seed=2, pace=FAST, faults={0: Fault(3, "hang")}, mission_timeout_s=10.0)
    assert r.failed == [0]
    assert r.outcomes[0].timed_out and r.outcomes[0].exitcode < 0  # ended by a signal, not by itself
    assert r.outcomes[1].exitcode == 0 and len(r.outcomes[1].report.trail) == 7


def test_cli_processes_mode_writes_the_report_and_counts_a_drilled_failure(tmp_path, capsys):
    helsinki()
    out = tmp_path / "fleet.json"
    argv = ["--processes", "--vehicles", "2", "--starts", "1", "--budget", "4", "--time-scale", "100",
            "--stagger", "0.1", "--fault", "1:2", "--json", str(out)]
    assert explore_bench.main(argv) == 0
    rep = json.loads(out.read_text())
    assert rep["bench"] == "explore_fleet" and rep["sizes"] == [2]
    block = rep["by_size"]["2"]
    rec = block["records"][0]
    for mode in ("independent", "sharing"):
        assert rec[mode]["failed"] == [{"vehicle": 1, "exitcode": 1,
                                        "error": "sim.explore_vehicle.InjectedFault: fault drill: crash at step 2"}]
        assert len(rec[mode]["trails"][0]) == 5
    assert block["summary"]["sharing"]["failed_vehicles"] == 1
    assert rec["sharing"]["frames"]["sent"] >= 4  # the survivor kept publishing after its peer died
    assert "POIs shr" in capsys.readouterr().out


def test_news_lag_counts_unmerged_frames_and_ignores_a_landed_peer():
    # v0 publishes at t = 0, 1, 2; v1 decides at t = 1.5 having merged only v0's step 0, then at 2.5
    # (v0 has sent its last frame: it has landed, so its silence is not lateness)
    v0 = VehicleReport(0, "v0", [], [], 0, {}, [StepTiming(0.0, 0, 0, 0)], published_at=[0.0, 1.0, 2.0])
    v1 = VehicleReport(1, "v1", [], [], 0, {}, [StepTiming(1.5, 0, 0, 0, {"v0": 0}),
                                                 StepTiming(2.5, 0, 0, 0, {"v0": 2})], published_at=[1.6])
    r = FleetTeamResult(TeamResult(0, 2, True, [set(), set()], [[], []]),
                        [VehicleOutcome(0, 0, v0), VehicleOutcome(1, 0, v1)], 0.0, 0.0)
    ages, behind = r.news_lag()
    assert behind == [0, 1]  # v0 at 0: v1 had sent nothing yet; v1 at 1.5: v0's frame of t=1 not merged
    assert ages == [1.5]  # v1's news of v0 at 1.5 was from t=0; v0 never heard v1

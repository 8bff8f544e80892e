"""Two supervisors flying at once (`aerie fleet`'s rig): each hears the other over the fleet channel.

Real parts throughout: two simulated PX4 vehicles over MAVLink/UDP, two `aerie fly`
processes with CurveZMQ on telemetry and on the fleet channel, one `aerie ground`
process. The missions are cut to two steps each; what is judged is that each
supervisor's bridge was handed the other's reports (the channel's ``delivered``
counter counts the reports ``FlightBridge.update_traffic`` accepted) and its agent's side
the other's findings, that nothing was refused, that the ground station lost no telemetry,
that it wrote lesson bundles its courier settled or holds for every member, and that the
vehicles' TRUE positions never came within the separation limit in 3D, nor one within another's downwash.
"""

from __future__ import annotations

import pytest

from sim.fleet_bench import run_fleet


@pytest.mark.slow  # about a minute on 2 cores: two supervisors start (memory, embedder) and fly
def test_two_supervisors_hear_each_other_and_keep_apart(tmp_path):
    r = run_fleet(2, tmp_path / "fleet", step_limit=2, say=print, timeout_s=300.0, linger_s=2.0)
    for v in r["per_vehicle"]:
        other = str(3 - v["member_id"])
        assert v["exit_status"] in (0, 3) and v["landed"] == "landed", v
        assert v["reason"] in ("arrived", "step_limit"), v
        ch = v["fleet_channel"]
        assert ch["heard"].get(other, 0) > 0 and ch["delivered"] > 0, ch
        assert ch.get("refused_by_bridge", 0) == 0 and not any(k.startswith("rejected_") for k in ch), ch
        assert ch["sent"] > 0 and v["setpoint_period_ms"]["count"] > 0
        # and what it found went over too: the other's places looked from reached this agent's side
        assert ch.get("findings_sent", 0) > 0 and ch.get("findings_accepted", 0) > 0, ch
        assert ch["findings"]["members"] == 1 and ch["findings"]["looked_from"] > 0, ch
    assert r["records_sent"] > 0 and r["records_lost"] == 0, r
    # The ground wrote the flights' lessons and its courier settled or holds each for every member.
    seen = {v["lesson_delivery"]["delivered"] + v["lesson_delivery"]["pending"] for v in r["per_vehicle"]}
    assert len(seen) == 1 and seen.pop() >= 1, [v["lesson_delivery"] for v in r["per_vehicle"]]
    assert all(v["lesson_delivery"]["refused"] == 0 for v in r["per_vehicle"])
    assert r["lesson_bundles_delivered"] == sum(v["lesson_delivery"]["delivered"] for v in r["per_vehicle"])
    assert r["truth_samples"] > 0 and r["min_distance_3d_m"] is not None
    assert r["min_distance_3d_m"] >= r["separation_limit_m"], r["min_distance_3d_at"]
    assert r["stacked_events"] == 0, r["stacked"]

"""`make demo`'s mission as a test, with a step budget too small to succeed: the reflection loop end to end.

Flight 1 (`aerie fly`, its own process, CurveZMQ telemetry to the ground
station in this process) runs out of steps; the ground station's post-flight
analyser turns the flight into lessons; the bundle is delivered over the sync
socket while the vehicle waits after landing; a fresh vehicle flies the task
again and retrieves exactly that lesson (asserted on the record) and does at
least as well.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aerie.demo import run_demo
from ground_station.flight_log import FlightLog
from contract.bundle import read_bundle


def test_failing_flight_reflect_sync_and_fly_again(tmp_path, capsys):
    out = tmp_path / "demo"
    rc = run_demo("t019", out, step_limit=6)  # t019 needs 6 moves and the goal is read on the 7th step
    printed = capsys.readouterr().out
    assert rc == 0, printed
    data = json.loads((out / "demo.json").read_text())
    f1, f2 = data["flights"]
    assert not f1["judged"]["success"] and f1["reason"] == "step_limit"
    assert f1["lessons_imported"] == 1  # the vehicle waited after landing and got them

    bundle = read_bundle(data["lessons"][0]["bundle"])
    plans = [r for r in bundle["experiences"] if r["collection"] == "strategic_plan_memory"]
    assert len(plans) == 1 and data["lessons"][0]["added"] >= 1
    summary = json.loads((Path(f2["results_dir"]) / "episode_summary.json").read_text())
    retrieved = summary["retrieved_lessons"]
    assert retrieved and retrieved[0]["uid"] == plans[0]["uid"], (retrieved, plans[0]["uid"])
    assert retrieved[0]["status"] == "failure" and retrieved[0]["similarity"] > 0.99
    assert "did not reach the goal" in retrieved[0]["reflection_note"]
    assert f2["judged"]["spl"] >= f1["judged"]["spl"] and f2["judged"]["steps"] <= f1["judged"]["steps"]
    assert "| flight | success |" in printed and "dashboard: http://127.0.0.1:" in printed
    assert "step   0" in printed  # a progress line per step

    # Both flights reached the ground station complete and in order (CurveZMQ on, real sockets).
    with FlightLog.open(out / "ground" / "flight_log.sqlite") as fl:
        seqs = fl.seqs("aerie-1")
        assert seqs == list(range(seqs[0], seqs[-1] + 1)), "telemetry has gaps"
        flights = fl.flights("aerie-1")
        assert len(flights) == 2 and all(f.end_seq is not None for f in flights)
        for f, outcome in zip(flights, (f1, f2)):
            msgs = list(fl.flight_messages(f))
            steps = [m["payload"] for m in msgs if m["type"] == "agent_step"]
            assert len(steps) == outcome["steps"] + 1  # one decision per move, plus the last one
            assert steps[0]["anchor_graph"]["anchors"] and sum(m["type"] == "state" for m in msgs) > 20
            assert msgs[-1]["type"] == "flight_end" and msgs[-1]["payload"]["reason"] == outcome["reason"]
    for f in (f1, f2):  # the results layout of each flight
        folder = Path(f["results_dir"])
        assert (folder / "trajectory.json").exists() and (folder / "episode_summary.json").exists()


@pytest.mark.slow  # two camera flights of two steps each, every frame through the stream (minutes on 2 cores)
@pytest.mark.timeout(1800)
def test_the_demo_with_the_simulated_camera_stream_reads_it_on_both_flights(tmp_path, capsys):
    """`aerie demo --camera stream`: the same two flights, camera perception reading the simulated stream."""
    from onboard.config import AerieConfig
    from tests.perception.conftest import _prepared

    _prepared(AerieConfig().inference.text_det_model)
    _prepared("ppocrv5-rec")
    out = tmp_path / "demo"
    rc = run_demo("t019", out, step_limit=2, camera="stream")
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "simulated gimbal camera streaming on http://127.0.0.1:" in printed
    flights = json.loads((out / "demo.json").read_text())["flights"]
    for f in flights:
        assert f["perception"] == "camera" and f["camera_losses"] == 0 and f["bad_frames"] == 0, f
        views = json.loads((Path(f["results_dir"]) / "reading_timestep_0000.json").read_text())["views"]
        assert views and all(v["source"] == "camera" for v in views), views  # frames from the stream

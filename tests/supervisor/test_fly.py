"""`aerie fly --map` end to end: a real supervisor process flies a Helsinki task on the MAVLink sim vehicle.

Real MAVSDK over UDP loopback, the vehicle's own onboard map file (the moves
on offer come from it), the world observation server over ZeroMQ as a sensor
only (it offers no moves at all), a real ground station ingesting the
telemetry into its flight log, the status socket asked while flying, the
results folder checked afterwards. Flights on the world feed's moves (no map)
are flown by tests/e2e/test_demo.py and the fault tests.
"""

from __future__ import annotations

from contract.messages import Event

import json
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import yaml

from ground_station.dashboard.log_reader import map_png, open_reader
from ground_station.flight_log import FlightLog
from ground_station.rerun_export import export_flight
from contract.results import map_file_names
from onboard.agent.map_render import SIZE
from onboard.config import AerieConfig, load_config
from onboard.status import STATUS_SOCKET_NAME, read_supervisor
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import ground_for, world, write_config

ROOT = Path(__file__).resolve().parents[2]


def test_aerie_fly_with_its_own_map_completes_a_helsinki_task_with_telemetry(tmp_path):
    from onboard.map.map_file import save_map

    rig = start_rig("t019", world=world(), offer_moves=False)
    try:
        map_file = save_map(rig.world.map, tmp_path / "helsinki.aeriemap")
        cfg = rig.config(AerieConfig(), tmp_path / "vehicle")
        config_file = write_config(cfg, tmp_path / "config.yaml")
        assert load_config(config_file) == cfg  # what the process reads is what we built
        mission = tmp_path / "mission.yaml"
        mission.write_text(yaml.safe_dump({"instruction": rig.task.task.description, "name": "t019",
                                           "step_limit": rig.task.step_limit}))
        with ground_for(cfg, tmp_path) as ground:
            proc = subprocess.Popen([sys.executable, "-m", "aerie", "fly", "--config", str(config_file),
                                     "--mission", str(mission), "--json", str(tmp_path / "outcome.json"),
                                     "--map", str(map_file)],
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            sock = tmp_path / "vehicle" / STATUS_SOCKET_NAME
            live = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                if sock.exists():
                    checks = {c.name: c for c in read_supervisor(sock)}
                    if checks.get("bridge (live)") and checks["bridge (live)"].ok:
                        live = checks
                        break
                time.sleep(0.5)
            out, _ = proc.communicate(timeout=300)
            time.sleep(1.0)  # the last acks
        print(out)
        assert proc.returncode == 0, out
        assert live is not None, "the status socket never reported a connected bridge"
        assert live["models (live)"].ok and live["memory (live)"].ok, live
        assert not sock.exists()  # removed on exit

        outcome = json.loads((tmp_path / "outcome.json").read_text())
        assert outcome["reason"] == "arrived" and outcome["agent_success"] and outcome["landed"] == "landed"
        judged = rig.judge(type("O", (), outcome)())
        assert judged["success"], judged
        assert "step   0" in out and "flight " in out  # a progress line per step and the closing line
        assert f"onboard map {map_file}" in out and rig.server.counters.moves_offered == 0
        assert rig.server.counters.requests > outcome["steps"]  # the feed was asked, as a sensor
        truth = rig.vehicle.truth()
        assert not truth["armed"], truth

        with FlightLog.open(tmp_path / "flight_log.sqlite") as fl:
            seqs = fl.seqs(cfg.vehicle_id)
            assert seqs == list(range(seqs[0], seqs[-1] + 1)), "telemetry has gaps"
            msgs = list(fl.messages(cfg.vehicle_id))
            types = [m["type"] for m in msgs]
            assert types.count("flight_start") == 1 and types[-1] == "flight_end", types[-5:]
            # What the vehicle understood, said back before arming, travels in flight_start (issue 34).
            start = next(m["payload"] for m in msgs if m["type"] == "flight_start")
            assert start["understood"].startswith("understood: goal ") and " of " in start["understood"], start
            assert start["understood"] in out  # ... and on the operator's console
            steps = [m["payload"] for m in msgs if m["type"] == "agent_step"]
            assert len(steps) == outcome["steps"] + 1
            assert steps[-1]["decision"]["action"] == "arrive" and steps[0]["anchor_graph"]["anchors"]
            assert types.count("plan") >= 1 and types.count("state") > 20
            assert msgs[-1]["payload"]["success"] is True
            # The semantic map reaches the ground (throttled: one per telemetry.map_min_interval_s at most).
            maps = [m for m in msgs if m["type"] == "map"]
            assert maps and len(maps) <= len(steps) and all(m["payload"]["kind"] == "semantic" for m in maps)
            first_map = cv2.imdecode(np.frombuffer(maps[0]["payload"]["png"], np.uint8), cv2.IMREAD_COLOR)
            assert first_map.shape == (SIZE, SIZE, 3)
            start_seq = next(m["seq"] for m in msgs if m["type"] == "flight_start")
            # The flight's own story as events (issue 19, item 17): armed, took off, offboard for the
            # moves, landed, disarmed, in that order, from the bridge's state changes.
            events = [Event.decode(m["payload"]) for m in msgs if m["type"] == "event"]
            kinds = [e.kind for e in events]
            story = [kinds.index(k) if k in kinds else -1 for k in ("armed", "takeoff", "landed", "disarmed")]
            assert -1 not in story and story == sorted(story), kinds
            modes = [e.detail["to"] for e in events if e.kind == "mode_change" and e.source == "bridge" and e.detail]
            assert "OFFBOARD" in modes and "LAND" in modes, modes
            assert "failsafe" not in kinds and "intent_stale" not in kinds, kinds  # a normal flight
        # ... the dashboard serves it (what its map panel shows) ...
        reader = open_reader(tmp_path / "flight_log.sqlite")
        try:
            assert map_png(reader, cfg.vehicle_id, maps[-1]["seq"]) == maps[-1]["payload"]["png"]
        finally:
            reader.close()
        # ... and it goes into the flight's Rerun recording (`aerie ground export-rrd`).
        rrd = export_flight(tmp_path / "flight_log.sqlite", cfg.vehicle_id, start_seq, tmp_path / "flight.rrd")
        assert rrd.rows["map"] == len(maps) and "map" not in rrd.malformed, rrd

        folder = Path(outcome["results_dir"])
        traj = json.loads((folder / "trajectory.json").read_text())
        summary = json.loads((folder / "episode_summary.json").read_text())
        assert len(traj) == len(steps) and summary["flight"]["flight_id"] == outcome["flight_id"]
        used = summary["map"]  # the agent flew with the map: landmarks known at take-off, moves on its corridors
        assert used["landmarks_used"] >= 70 and used["corridor_waypoints"] == rig.world.graph.n_nodes, used
        assert used["moves_snapped"] > 0 and used["moves_unsnapped"] == 0, used
        # Both maps at every step, named as ARCHITECTURE.md's results layout says (<id> = the mission name).
        names = sorted(p.name for p in (folder / "semantic_images").iterdir())
        assert names == sorted(n for i in range(len(steps)) for n in map_file_names("t019", i)), names
        assert len(outcome["map_ms"]) == len(steps) and outcome["map_ms_p50"] > 0
        print(f"maps: p50 {outcome['map_ms_p50']} ms per step over {len(steps)} steps")
        last = cv2.imread(str(folder / "semantic_images" / map_file_names("t019", len(steps) - 1)[1]))
        assert last.shape == (SIZE, SIZE, 3)
        assert maps[-1]["payload"]["png"] == (folder / "semantic_images" / map_file_names(
            "t019", maps[-1]["payload"]["step"])[1]).read_bytes()  # what was published is what was kept
    finally:
        rig.close()

"""`make demo`: a whole simulated mission on the embedded defaults, flown twice, learning in between.

What runs, all on loopback:

* the PX4-like MAVLink vehicle (its own process) with home on the task's start waypoint, and
  the Helsinki world's observation feed (what the drone perceives where the autopilot says it is);
* the ground station in this process: ingest into its SQLite flight log, the live dashboard
  (URL printed), the post-flight analyser; CurveZMQ keys generated for the run;
* the supervisor, `aerie fly` as a child process with a config derived from the shipped
  defaults (only addresses, data directory and key files differ).

Flight 1 flies the task; the ground station derives its lessons and its lesson courier
delivers them to the vehicle's memory (the same REQ/REP sync as `aerie ground sync`); after a battery swap
(a fresh simulated vehicle at the same spot) flight 2 flies the task again with the lesson in
memory. A table compares the flights, scored against the world's ground truth, which the
vehicle never sees. Exit status 1 when any part failed (a process, the landing, the lesson
delivery, the lesson not retrieved on flight 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from contract.results import read_summary

DEFAULT_TASK = "t019"


def _say(line: str) -> None:
    print(line, flush=True)


class DemoFailed(RuntimeError):
    pass


def _vehicle_config(rig: Any, out: Path, keys: dict[str, Path], camera: str = "world") -> Any:
    from onboard.config import AerieConfig
    from sim.supervisor_rig import vehicle_config

    base = AerieConfig()
    if camera == "stream":  # camera perception, reading the simulated camera's stream as a gimbal camera's
        base = replace(base, supervisor=replace(base.supervisor, perception="camera"))
    cfg = vehicle_config(rig, out / "vehicle", secret_key=keys["vehicle_secret"], authorized_dir=keys["authorized_dir"],
                         log_file=out / "vehicle.log.jsonl", base=base)
    return replace(cfg, supervisor=replace(cfg.supervisor, lessons_wait_s=90.0))


def _ground_config(vcfg: Any, out: Path, keys: dict[str, Path]) -> Any:
    from sim.supervisor_rig import ground_config

    return ground_config([(vcfg, keys["vehicle_public"])], out / "ground", keys["ground_secret"])


def _deliver_lessons(courier: Any, watcher: Any, flight: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Wait for the post-flight bundle of the flight that just ended; the courier's passes deliver it."""
    from ground_station.lesson_courier import DELIVERED

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(watcher.written) < flight:
        time.sleep(0.2)
    if len(watcher.written) < flight:
        raise DemoFailed(f"no post-flight lessons for flight {flight} within {timeout_s:.0f} s")
    bundle = watcher.written[flight - 1]
    vehicle_id = courier.cfg.vehicles[0].vehicle_id
    while time.monotonic() < deadline:
        courier.run_pass()   # a vehicle that did not answer yet is tried again after its back-off
        row = next((d for d in courier.ledger().rows(vehicle_id) if d.bundle == bundle.name), None)
        if row is not None and row.outcome != DELIVERED:
            raise DemoFailed(f"the vehicle refused the lessons of flight {flight}: {row.reason}")
        if row is not None:
            return {"bundle": str(bundle), "sha256": row.sha256, "added": row.added,
                    "already_present": row.already_present}
        time.sleep(0.2)
    raise DemoFailed(f"the lessons of flight {flight} were not delivered within {timeout_s:.0f} s")


def _fly(n: int, config: Path, mission: Path, out: Path) -> dict[str, Any]:
    """`aerie fly` as a child process; its progress lines are echoed as they come."""
    from sim.supervisor_rig import FlyProcess

    rc, outcome = FlyProcess(config, mission, out / f"flight{n}.json", f"flight {n}", _say).start().wait()
    if rc not in (0, 3) or outcome is None:
        raise DemoFailed(f"aerie fly (flight {n}) exited {rc}; its log is {out / 'vehicle.log.jsonl'}")
    if outcome["landed"] not in ("landed", "on ground"):
        raise DemoFailed(f"flight {n}: vehicle {outcome['landed']}")
    return outcome


def _retrieved_lessons(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    summary = read_summary(outcome["results_dir"])
    return [x for x in summary.get("retrieved_lessons") or [] if isinstance(x, dict)]


def run_demo(task_id: str = DEFAULT_TASK, out: Path | None = None, step_limit: int = 0, camera: str = "world") -> int:
    """Returns the exit status; `out/demo.json` holds both flights' outcomes and scores.

    `step_limit` (0: the task's own budget) tightens the mission's step budget, e.g. so
    that a first flight fails and the lesson has something to fix. `camera`: "world" (the
    world feed's sightings, the default) or "stream": camera perception, the simulated vehicle's
    camera served as an MJPEG stream (`sim/camera_stream.py`) and read as a real one is, its
    gimbal pointed through MAVSDK.
    """
    if camera not in ("world", "stream"):
        raise ValueError(f"demo camera is 'world' or 'stream', not {camera!r}")
    from ground_station.dashboard.server import DashboardServer
    from ground_station.ingest import GroundStation
    from ground_station.lesson_courier import LessonCourier
    from ground_station.post_flight import PostFlightWatcher
    from onboard.supervisor.mission import Mission
    from contract.curve_keys import generate_link_keys
    from sim.flight_rig import start_rig
    from sim.supervisor_rig import write_yaml
    from sim.world.cache import load_world

    t_start = time.monotonic()
    out = (out or Path("results") / f"demo-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    _say(f"Aerie demo: results in {out}")
    world = load_world(None)
    rig = start_rig(task_id, world=world)
    station = dashboard = watcher = courier = None
    ground_thread = None
    try:
        _say(f"task {rig.task.id}: \"{rig.task.task.description}\"")
        _say(f"  world: {world.city.name}, {world.graph.n_nodes} waypoints; shortest route {rig.task.shortest_m:.0f} m "
             f"({rig.task.min_steps} moves), step budget {step_limit or rig.task.step_limit}")
        _say(f"simulated PX4 vehicle on {rig.vehicle.mavsdk_url}; world feed on {rig.server.endpoint}")
        if camera == "stream":
            stream = rig.stream_camera(out)
            _say(f"simulated gimbal camera streaming on {stream.url} (calibration {rig.camera_calibration}); "
                 f"camera perception reads it")
        keys = generate_link_keys(out / "keys")
        vcfg = _vehicle_config(rig, out, keys, camera)
        gcfg = _ground_config(vcfg, out, keys)
        write_yaml(gcfg, out / "ground.yaml")
        mission = rig.mission()
        if step_limit:
            mission = replace(mission, step_limit=step_limit)
        mission_file = write_yaml(Mission(mission.instruction, mission.name, mission.step_limit), out / "mission.yaml")

        (out / "ground").mkdir(exist_ok=True)
        station = GroundStation(gcfg, base_dir=out)
        ground_thread = threading.Thread(target=station.run, name="ground-station", daemon=True)
        ground_thread.start()
        if not station.started.wait(15):
            raise DemoFailed("ground station did not start")
        dashboard = DashboardServer.from_config(gcfg, out)
        url = dashboard.start()
        watcher = PostFlightWatcher(Path(gcfg.db_path), Path(gcfg.post_flight_dir), Path(gcfg.post_flight_memory),
                                    interval_s=0.5).start()
        courier = LessonCourier(gcfg, out)   # one pass at a time from the delivery thread below
        _say(f"ground station: flight log {gcfg.db_path}")
        _say(f"dashboard: {url}   <- open it in a browser to watch the flights live")

        flights: list[dict[str, Any]] = []
        deliveries: list[dict[str, Any]] = []
        for n in (1, 2):
            if n == 2:
                _say("battery swap: a fresh simulated vehicle at the same take-off spot")
                rig.restart_vehicle()
                vcfg = replace(vcfg, link=replace(vcfg.link, url=rig.vehicle.mavsdk_url))
            config = write_yaml(vcfg, out / f"vehicle{n}.yaml")
            _say(f"flight {n}: aerie fly --config {config.name} --mission {mission_file.name}   (dashboard: {url})")
            result: dict[str, Any] = {}
            errors: list[BaseException] = []

            def deliver(n: int = n) -> None:  # the ground station's side, while the vehicle waits after landing
                try:
                    result.update(_deliver_lessons(courier, watcher, n, timeout_s=240.0))
                except BaseException as exc:  # reported below
                    errors.append(exc)

            delivery = threading.Thread(target=deliver, daemon=True)
            delivery.start()
            outcome = _fly(n, config, mission_file, out)
            delivery.join(30.0)
            if errors:
                raise DemoFailed(f"lessons of flight {n}: {errors[0]}")
            outcome["judged"] = rig.judge(SimpleNamespace(**outcome))
            flights.append(outcome)
            deliveries.append(result)
            _say(f"post-flight reflection of flight {n}: bundle {Path(result.get('bundle', '?')).name} delivered to the "
                 f"vehicle: {json.dumps({k: v for k, v in result.items() if k != 'bundle'})}")

        retrieved = _retrieved_lessons(flights[1])
        _say("")
        _say("| flight | success | steps (min) | SPL | path m (shortest) | time s | lessons retrieved |")
        _say("|---|---|---|---|---|---|---|")
        for n, f in enumerate(flights, 1):
            j = f["judged"]
            _say(f"| {n} | {'yes' if j['success'] else 'no'} | {j['steps']} ({j['min_steps']}) | {j['spl']:.2f} | "
                 f"{j['path_m']:.0f} ({j['shortest_m']:.0f}) | {f['seconds']:.0f} | {len(_retrieved_lessons(f))} |")
        _say("")
        if retrieved:
            r = retrieved[0]
            _say(f"flight 2 retrieved lesson {r.get('uid', '')[:8]} (similarity {r.get('similarity', 0):.2f}, "
                 f"{r.get('status', '')}): {str(r.get('reflection_note', ''))[:150]}")
        _say(f"results: {out}  (per flight: vehicle/results/<flight>/trajectory.json, episode_summary.json, "
             f"rgb_images/, semantic_images/; ground/flight_log.sqlite; ground/post_flight/*.bundle)")
        _say(f"demo took {time.monotonic() - t_start:.0f} s")
        (out / "demo.json").write_text(json.dumps({"flights": flights, "lessons": deliveries}, indent=1) + "\n")
        if not retrieved:
            raise DemoFailed("flight 2 did not retrieve the lesson of flight 1")
        return 0
    except DemoFailed as exc:
        print(f"demo FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if watcher is not None:
            watcher.stop()
        if courier is not None:
            courier.stop()
        if dashboard is not None:
            dashboard.stop()
        if station is not None:
            station.stop()
            ground_thread.join(10)
        rig.close()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie demo", description=__doc__.splitlines()[0])
    p.add_argument("--task", default=DEFAULT_TASK, help="public Helsinki task id (default %(default)s)")
    p.add_argument("--out", type=Path, default=None, help="results folder (default results/demo-<utc>)")
    p.add_argument("--step-limit", type=int, default=0, help="mission step budget (default: the task's)")
    p.add_argument("--camera", choices=["world", "stream"], default="world",
                   help="world (default): the world feed's sightings; stream: camera perception reading the "
                        "simulated gimbal camera's video stream, as a real camera is read (slower: minutes a flight)")
    args = p.parse_args(argv)
    return run_demo(args.task, args.out, args.step_limit, args.camera)

"""`aerie fly`: run the supervisor for one mission.

    aerie fly --config config.yaml --instruction "Find the cafe 300 m east of the cathedral"
    aerie fly --config config.yaml --mission mission.yaml [--json outcome.json]
    aerie fly --instruction "..." --perception camera   # sightings from the camera's frames only
    aerie fly ... --perception camera --camera rtsp://192.168.144.25:8554/main.264   # frames from that camera

`--vehicle-url`, `--world` and `--data-dir` override the config's
link.url, supervisor.world_endpoint and data_dir for one run (the demo and the
tests use them; a vehicle's service uses the config alone). SIGTERM and
Ctrl-C end the mission at once: the vehicle is commanded to land (or return,
`supervisor.on_terminate`) and the process exits once it is down or after
`supervisor.terminate_timeout_s`, PX4 finishing on its own. A vehicle found
armed and in the air at start is sent home or landed first (`supervisor.on_start_airborne`).

    aerie fly --config config.yaml --standby   # the service (systemd): fly mission files as they arrive

`--standby` starts everything, tells systemd READY=1, feeds its watchdog and
flies each mission file dropped into `supervisor.missions_dir` (see
`onboard/supervisor/mission_queue.py`) until SIGTERM.

Before arming, the vehicle says in one line what it understood of the instruction
(the goal's name, each relation as "450 m N (000°) of X", what it could not
place) and refuses a mission whose goal name or every relation could not be read
(a mission file's `search_only: true` flies a search without relations on purpose).

Exit status: 0 the agent declared arrival and the vehicle is down; 3 the mission
ended without arrival (step budget, aborted) but the vehicle is down; 1 an error
(config, link, a vehicle that could not land); 2 bad arguments, or an instruction
refused before arming (nothing flown).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import replace
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie fly", description="Fly one mission with the agent in the loop")
    p.add_argument("--config", default=None, help="config file (default: built-in defaults = config.yaml)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--mission", help="mission file (YAML/JSON: instruction, name, step_limit, geofence)")
    g.add_argument("--instruction", help="the mission's instruction, in words")
    g.add_argument("--standby", action="store_true",
                   help="run as a service: connect, report healthy, fly mission files from supervisor.missions_dir")
    p.add_argument("--name", default="mission", help="mission name with --instruction (results folder)")
    p.add_argument("--step-limit", type=int, default=0, help="agent steps allowed (default: supervisor.step_limit)")
    p.add_argument("--vehicle-url", default=None, help="override link.url")
    p.add_argument("--world", default=None, help="override supervisor.world_endpoint")
    p.add_argument("--map", default=None, metavar="FILE",
                   help="override map.path: fly with this onboard map (the moves on offer come from it, the world "
                        "feed is only a sensor)")
    p.add_argument("--perception", choices=["oracle", "camera"], default=None,
                   help="override supervisor.perception: camera = look around at each waypoint, read the frames, "
                        "decide from what was read only")
    p.add_argument("--camera", default=None, metavar="SOURCE",
                   help="override supervisor.camera: the video source camera perception reads (a device index, "
                        "an rtsp:// or http:// stream, a file, a GStreamer pipeline)")
    p.add_argument("--camera-calibration", default=None, metavar="FILE",
                   help="override supervisor.camera_calibration (an OpenCV calibration file)")
    p.add_argument("--data-dir", default=None, help="override data_dir")
    p.add_argument("--json", default=None, help="write the flight outcome here")
    p.add_argument("--quiet", action="store_true", help="no progress line per step")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from onboard.config import load_config
    from common.log_setup import configure_logging
    from onboard.supervisor.mission import Mission, load_mission
    from common.typed_config import ConfigError

    try:
        cfg = load_config(args.config)
        mission = None if args.standby else load_mission(args.mission) if args.mission else Mission(
            instruction=args.instruction, name=args.name, step_limit=args.step_limit)
    except (ConfigError, ValueError) as exc:
        print(f"aerie fly: {exc}", file=sys.stderr)
        return 1
    if args.step_limit and args.mission:
        mission = replace(mission, step_limit=args.step_limit)
    if args.vehicle_url:
        cfg = replace(cfg, link=replace(cfg.link, url=args.vehicle_url))
    if args.world:
        cfg = replace(cfg, supervisor=replace(cfg.supervisor, world_endpoint=args.world))
    if args.data_dir:
        cfg = replace(cfg, data_dir=args.data_dir)
    if args.perception:
        cfg = replace(cfg, supervisor=replace(cfg.supervisor, perception=args.perception))
    if args.camera is not None or args.camera_calibration is not None:
        sup = cfg.supervisor
        cfg = replace(cfg, supervisor=replace(sup, camera=sup.camera if args.camera is None else args.camera,
                                              camera_calibration=sup.camera_calibration if args.camera_calibration
                                              is None else args.camera_calibration))
    if args.map:
        cfg = replace(cfg, map=replace(cfg.map, path=str(Path(args.map).expanduser().resolve())))
    configure_logging(cfg.logging)
    if args.standby:
        return asyncio.run(_standby(cfg, args))
    return asyncio.run(_fly(cfg, mission, args))


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _watchdog(period_s: float) -> None:
    from onboard.supervisor.sd_notify import notify

    while True:
        notify("WATCHDOG=1")
        await asyncio.sleep(period_s)


async def _standby(cfg, args) -> int:
    """The service: start once, then fly queued missions until SIGTERM."""
    from onboard.supervisor.mission_queue import MissionQueue
    from onboard.supervisor.sd_notify import notify, watchdog_period_s
    from onboard.supervisor.supervisor import Supervisor
    from onboard.telemetry.settings import resolve_path

    stop = _stop_on_signals()
    progress = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    queue = MissionQueue(resolve_path(cfg.data_dir, cfg.supervisor.missions_dir))
    sup = Supervisor(cfg, on_progress=progress)
    period = watchdog_period_s()
    dog = asyncio.create_task(_watchdog(period)) if period else None
    try:
        await sup.start()
        notify("READY=1")
        print(f"aerie fly: standing by; mission files go into {queue.dir}", flush=True)
        while not stop.is_set():
            item = queue.next()
            if item is None:
                try:
                    await asyncio.wait_for(stop.wait(), cfg.supervisor.mission_poll_s)
                except asyncio.TimeoutError:
                    pass
                continue
            path, mission = item
            notify(f"STATUS=flying {mission.name}")
            try:
                outcome = await sup.fly(mission, stop)
            except Exception as exc:  # one bad mission (no world feed, a refused fence) is not the service's end
                queue.finish(path, _failed_outcome(sup, mission, exc), ok=False,
                             flight_id=sup.outcome.flight_id if sup.outcome else None)
                progress(f"mission {mission.name} failed: {type(exc).__name__}: {exc}")
                continue
            queue.finish(path, outcome.to_json(),
                         ok=not outcome.refused_before_arming and not outcome.landing_failed,
                         flight_id=outcome.flight_id)
            progress(f"mission {mission.name}: {outcome.reason}; vehicle {outcome.landed}")
            notify("STATUS=standing by")
    except Exception as exc:
        print(f"aerie fly: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        notify("STOPPING=1")
        if dog is not None:
            dog.cancel()
        try:  # SIGTERM with the vehicle in the air and no mission flying: land or return first
            landed = await sup.stop_airborne()
            if landed != "on ground":
                progress(f"on stop: vehicle {landed}")
        except Exception as exc:
            print(f"aerie fly: on stop: {type(exc).__name__}: {exc}", file=sys.stderr)
        await sup.close()
    return 0


def _failed_outcome(sup, mission, exc: BaseException) -> dict:
    """The outcome of a mission that ended in an exception: the flight's as far as it got, and the error.

    A supervisor that failed before the flight began (no vehicle, no models) has no flight outcome; the
    record then says only what was asked and why it ended.
    """
    from contract.quoting import clip

    error = clip(f"{type(exc).__name__}: {exc}")
    record = sup.outcome.to_json() if sup.outcome is not None else {
        "flight_id": sup.flight_id, "mission": mission.name, "agent_success": False,
        "reason": f"error: {error}", "landed": "not flown"}
    record["error"] = error
    return record


async def _fly(cfg, mission, args) -> int:
    from contract.results import write_json
    from onboard.mission.record import MissionEnd
    from onboard.supervisor.supervisor import Supervisor

    stop = _stop_on_signals()
    progress = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    sup = Supervisor(cfg, mission, on_progress=progress)
    try:
        outcome = await sup.run(stop)
    except Exception as exc:  # already logged with its traceback by the supervisor
        print(f"aerie fly: mission failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        if args.json:  # whatever ended the mission, the caller gets its outcome file
            write_json(args.json, _failed_outcome(sup, mission, exc))
        return 1
    if args.json:
        write_json(args.json, outcome.to_json())
    looked = (f" (look-ups among them: {outcome.look_ups} flown, {outcome.refused_look_ups} refused)"
              if outcome.look_ups or outcome.refused_look_ups else "")
    print(f"flight {outcome.flight_id}: {outcome.reason}, agent success {outcome.agent_success}, "
          f"{outcome.steps} moves{looked}, {outcome.flown_m:.0f} m flown, {outcome.seconds:.0f} s, "
          f"vehicle {outcome.landed}; "
          f"step p50 {outcome.step_ms_p50:.1f} ms; peak RSS {outcome.peak_rss_mb:.0f} MB; results {outcome.results_dir}",
          flush=True)
    if outcome.refused_before_arming:
        print(f"aerie fly: {outcome.reason}", file=sys.stderr)
        return 2
    if outcome.landing_failed:
        return 1
    return 0 if outcome.end is MissionEnd.ARRIVED else 3

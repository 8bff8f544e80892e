"""`aerie fleet configs --members N --out DIR`: the files for a fleet of N vehicles on N PX4 SITL instances.

A fleet set up by hand failed in every way one can miss a line (issue 36.16): two
members on one telemetry port ("Address already in use"), one `data_dir` for two,
no CurveZMQ keys for the fleet channel, a world feed on another port than the
configs asked. So the files are generated, by the same functions that set up the
simulated fleet the tests fly (onboard/fleet/members.py), and each is read back
with the typed loader before the command reports success.

Member m (1..N) is PX4 instance m-1 (`px4 -i m-1`, or `aerie sim vehicle -i m-1`):
PX4 gives instance i the system id i+1 and sends its offboard link to UDP 14540+i,
so member m listens there (`udpin://127.0.0.1:<14540+m-1>`) with `fleet.member_id`
m. Written into DIR (absolute paths inside, so the files work from any directory):

* ``vehicle<m>.yaml``: vehicle id ``aerie-<m>``, ``data_dir`` ``DIR/vehicle<m>``,
  telemetry on ports ``base+10m .. base+10m+2``, the fleet channel on ``base+10m+3``
  with every other member as a peer (N > 1; one vehicle flies with fleet separation off), CurveZMQ on both, the world feed's endpoint,
  the 2.5 km geofence Helsinki tasks need; everything on loopback;
* ``ground.yaml``: one ground station subscribed to every member, its dashboard on
  ``127.0.0.1:--dashboard-port``, its files under ``DIR/ground``;
* ``keys/``: a key pair per member and for the ground, and who admits whom;
* with ``--tasks``: ``mission<m>.yaml`` (the task's instruction) and the take-off
  point of each instance, kept 25 m from the others' as the simulated fleet's are:
  ``px4_instance<i>.env`` (``PX4_HOME_LAT=.. PX4_HOME_LON=.. PX4_HOME_ALT=..``) and
  ``home<m>.txt`` (``LAT,LON,ALT`` for ``aerie sim vehicle --home``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

PX4_OFFBOARD_PORT = 14540   # PX4 SITL instance i sends its offboard/API MAVLink link to 14540 + i
PORT_BASE = 17700           # member m: telemetry base+10m .. +2, fleet channel base+10m+3
DASHBOARD_PORT = 8765
HOME_ALT_AMSL_M = 10.0      # Helsinki's centre; SIH would otherwise keep its Zurich ground height


def member_ports(port_base: int, m: int) -> tuple[int, int, int, int]:
    """Member m's (telemetry pub, replay, sync, fleet channel) ports."""
    first = port_base + 10 * m
    return first, first + 1, first + 2, first + 3


def vehicle_configs(n: int, out: Path, keys: Any, *, px4_port: int = PX4_OFFBOARD_PORT, port_base: int = PORT_BASE,
                    world_endpoint: str | None = None) -> list[Any]:
    """The N members' configs (member m = PX4 instance m-1), built on the shipped defaults."""
    from onboard.config import AerieConfig
    from onboard.fleet.members import member_config, telemetry_keys

    base = AerieConfig()
    fleet_endpoints = [f"tcp://127.0.0.1:{member_ports(port_base, m)[3]}" for m in range(1, n + 1)]
    configs = []
    for i in range(n):
        pub, replay, sync, _ = member_ports(port_base, i + 1)
        tel = replace(base.telemetry, pub_endpoint=f"tcp://127.0.0.1:{pub}",
                      replay_endpoint=f"tcp://127.0.0.1:{replay}", sync_endpoint=f"tcp://127.0.0.1:{sync}")
        geofence = replace(base.safety.geofence, max_distance_from_home_m=2500.0)
        cfg = replace(base, vehicle_id=f"aerie-{i + 1}", data_dir=str(out / f"vehicle{i + 1}"),
                      link=replace(base.link, url=f"udpin://127.0.0.1:{px4_port + i}"), telemetry=tel,
                      safety=replace(base.safety, geofence=geofence),
                      supervisor=replace(base.supervisor,
                                         world_endpoint=world_endpoint or base.supervisor.world_endpoint))
        cfg = telemetry_keys(member_config(cfg, i, fleet_endpoints, keys), i, keys)
        # One vehicle is no fleet: with separation on and nobody to hear, it would fly its own layer throughout.
        configs.append(cfg if n > 1 else replace(cfg, fleet=replace(cfg.fleet, enabled=False)))
    return configs


def task_plan(n: int, tasks: list[str]) -> list[tuple[Any, tuple[float, float, float]]]:
    """(task, home) per member: at its task's start, kept 25 m from the others' as the simulated fleet's."""
    from common.geodesy import GeoPoint
    from sim.fleet_rig import fleet_homes
    from sim.flight_rig import load_task
    from sim.world.cache import load_world

    world = load_world(None)
    resolved = [load_task(tasks[i % len(tasks)], world) for i in range(n)]
    starts = [tuple(float(v) for v in world.graph.latlon[t.start_node]) for t in resolved]
    homes = fleet_homes(starts, GeoPoint(*starts[0], HOME_ALT_AMSL_M), alt_amsl_m=HOME_ALT_AMSL_M)
    return list(zip(resolved, homes))


def task_files(out: Path, plan: list[tuple[Any, tuple[float, float, float]]], step_limit: int) -> list[str]:
    """mission<m>.yaml, px4_instance<i>.env and home<m>.txt per member; the lines to say."""
    from onboard.supervisor.mission import Mission
    from sim.supervisor_rig import write_yaml

    lines = []
    for i, (task, (lat, lon, alt)) in enumerate(plan):
        m = i + 1
        write_yaml(Mission(task.task.description, f"{task.id}-v{m}", step_limit or task.step_limit),
                   out / f"mission{m}.yaml")
        (out / f"px4_instance{i}.env").write_text(f"PX4_HOME_LAT={lat:.7f} PX4_HOME_LON={lon:.7f} "
                                                  f"PX4_HOME_ALT={alt:.1f}\n")
        (out / f"home{m}.txt").write_text(f"{lat:.7f},{lon:.7f},{alt:.1f}\n")
        lines.append(f"member {m}: task {task.id}, take off at {lat:.7f}, {lon:.7f}")
    return lines


def generate(n: int, out: Path, *, tasks: list[str] | None = None, step_limit: int = 0,
             px4_port: int = PX4_OFFBOARD_PORT, port_base: int = PORT_BASE, world_endpoint: str | None = None,
             dashboard_port: int = DASHBOARD_PORT) -> list[str]:
    """Write every file (see the module's doc), read each config back; the lines to say."""
    from ground_station.settings import load_ground_config
    from onboard.config import load_config
    from onboard.fleet.members import fleet_keys
    from sim.supervisor_rig import ground_config, write_yaml

    if not 1 <= n <= 10:
        raise ValueError(f"--members must be 1..10 (PX4 SITL gives instances 0..9 the offboard ports "
                         f"14540..14549), not {n}")
    if not (1024 <= px4_port and px4_port + n - 1 <= 65535
            and 1024 <= member_ports(port_base, 1)[0] and member_ports(port_base, n)[3] <= 65535):
        raise ValueError("ports out of range: --px4-port and --port-base must leave every port in 1024..65535")
    plan = task_plan(n, tasks) if tasks else []   # an unknown task is said before anything is written
    out = out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    keys = fleet_keys(out / "keys", n)
    configs = vehicle_configs(n, out, keys, px4_port=px4_port, port_base=port_base, world_endpoint=world_endpoint)
    files = [write_yaml(cfg, out / f"vehicle{i + 1}.yaml") for i, cfg in enumerate(configs)]
    for cfg in configs:
        Path(cfg.data_dir).mkdir(parents=True, exist_ok=True)
    ground = ground_config([(cfg, keys.vehicles[i][0]) for i, cfg in enumerate(configs)], out / "ground",
                           keys.ground_secret, dashboard_enabled=True, dashboard_host="127.0.0.1",
                           dashboard_port=dashboard_port)
    ground_file = write_yaml(ground, out / "ground.yaml")
    (out / "ground").mkdir(exist_ok=True)
    for f in files:                 # what the supervisors will read, read as they will read it
        load_config(f)
    load_ground_config(ground_file)
    lines = [f"member {i + 1}: {f} (PX4 instance {i}: {cfg.link.url}, member_id {cfg.fleet.member_id}; telemetry "
             f"{cfg.telemetry.pub_endpoint.rsplit(':', 1)[1]}-{cfg.telemetry.sync_endpoint.rsplit(':', 1)[1]}, fleet "
             f"{cfg.fleet_channel.pub_endpoint.rsplit(':', 1)[1]}; data {cfg.data_dir})"
             for i, (f, cfg) in enumerate(zip(files, configs))]
    lines.append(f"ground: {ground_file} (dashboard http://127.0.0.1:{dashboard_port}/)")
    lines.append(f"world feed: {configs[0].supervisor.world_endpoint} "
                 f"(aerie world serve --config {files[0]})")
    if plan:
        lines += task_files(out, plan, step_limit)
    return lines


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie fleet configs", description=__doc__.splitlines()[0])
    p.add_argument("--members", type=int, required=True, help="fleet size N, 1..10 (PX4 instances 0..N-1)")
    p.add_argument("--out", type=Path, required=True, help="folder for the configs, keys and data folders")
    p.add_argument("--tasks", default="", help="public task ids, one per member in order (the list flown again when "
                                               "shorter): also write mission<m>.yaml and each instance's home")
    p.add_argument("--step-limit", type=int, default=0, help="each mission's step budget (default: its task's)")
    p.add_argument("--px4-port", type=int, default=PX4_OFFBOARD_PORT,
                   help="offboard UDP port of PX4 instance 0; instance i uses this + i (default %(default)s)")
    p.add_argument("--port-base", type=int, default=PORT_BASE,
                   help="member m's telemetry on base+10m..+2 and fleet channel on base+10m+3 (default %(default)s)")
    p.add_argument("--world", default=None, help="the world feed's endpoint (default: supervisor.world_endpoint's)")
    p.add_argument("--dashboard-port", type=int, default=DASHBOARD_PORT, help="the ground's dashboard port")
    args = p.parse_args(argv)
    from common.typed_config import ConfigError

    tasks = [t for t in args.tasks.split(",") if t]
    try:
        lines = generate(args.members, args.out, tasks=tasks, step_limit=args.step_limit, px4_port=args.px4_port,
                         port_base=args.port_base, world_endpoint=args.world, dashboard_port=args.dashboard_port)
    except (ValueError, ConfigError, KeyError, OSError) as exc:
        print(f"aerie fleet configs: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0

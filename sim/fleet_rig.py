"""A fleet on loopback: N simulated vehicles, N `aerie fly` supervisors, one ground station, one world feed.

What runs, each a real part:

* N PX4-like MAVLink vehicles (``SimFleet``: system ids 1..N, own UDP ports picked free
  rather than PX4's fixed instance offsets, so a rig never collides with another one on
  the same machine), each at the start of its own Helsinki task;
* the world observation feed, one for all (a REQ/REP server: what each drone perceives);
* N supervisors, `aerie fly` child processes, each with its own config, data folder,
  telemetry journal and experience memory, ``fleet.enabled`` with member id i+1, and the
  fleet channel to the other N-1 (CurveZMQ, a key pair per vehicle);
* one ground station, `aerie ground` as its own process (so its CPU is its own),
  ingesting every vehicle's telemetry into one flight log, writing each ended flight's
  lessons and delivering them to every member (its lesson courier).

Each vehicle flies its own task (``FLEET_TASKS``: the public tasks that start nearest the
demo's, each to a different goal; ``--tasks t019`` sends all to one). After landing each
supervisor stays on the fleet channel for ``linger_s``, so a landed member is still heard by
one that ends its mission nearby and lands beside it. While they fly, the rig samples every simulator's TRUE position
(``truth()``, which no supervisor sees) and judges separation in 3D from it
(``sim/fleet_truth.py``: the least 3D distance, encounters within the downwash). Afterwards it counts telemetry records lost at
the ground (journaled by the vehicle vs stored in the flight log) and collects each
supervisor's setpoint timing and fleet-channel counters from its outcome.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from onboard.fleet.members import fleet_keys, member_config
from sim.fleet_truth import SeparationWatch
from sim.supervisor_rig import REPO_ROOT, FlyProcess, ground_config, vehicle_config, write_yaml

# Public Helsinki tasks starting within about 200 m of t019's start, each with its own goal node.
FLEET_TASKS = ("t019", "t004", "t064", "t065", "t047", "t091", "t072", "t032")
# Vehicles on the ground stand at least this far apart (metres): more than fleet.min_separation_m.
HOME_SPACING_M = 25.0
# Seconds a supervisor stays on the fleet channel after landing (FleetRig.linger_s).
LINGER_S = 45.0


@dataclass
class Member:
    """One vehicle of the fleet and everything that is its own."""

    index: int
    rig: Any                     # a SimRig: this vehicle, the shared world feed, its task
    cfg: Any                     # its AerieConfig
    config_file: Path
    mission_file: Path
    outcome_file: Path
    public_key: Path
    fly: FlyProcess | None = None

    @property
    def member_id(self) -> int:
        return self.index + 1


def fleet_homes(starts: list[tuple[float, float]], origin: GeoPoint, spacing_m: float = HOME_SPACING_M,
                alt_amsl_m: float = 10.0) -> list[tuple[float, float, float]]:
    """Each vehicle at its task's start, moved east in ``spacing_m`` steps until no other stands nearer."""
    placed: list[tuple[float, float]] = []
    homes = []
    for lat, lon in starts:
        n, e = ned_from_geo(origin, lat, lon)
        while any(math.hypot(n - pn, e - pe) < spacing_m for pn, pe in placed):
            e += spacing_m
        placed.append((n, e))
        homes.append((*geo_from_ned(origin, n, e), alt_amsl_m))
    return homes


@dataclass
class FleetRig:
    """`start()` builds and starts everything but the supervisors; `fly()` runs them; `close()` ends all."""

    n: int
    out: Path
    tasks: tuple[str, ...] = FLEET_TASKS
    step_limit: int = 0          # 0: each task's own step budget
    # After landing each supervisor stays up this long, its fleet channel reporting the landed vehicle
    # (as a standby service would), so a member ending its mission nearby lands clear of it, and
    # takes the lessons of the flights that end meanwhile (supervisor.lessons_wait_s: a fleet
    # member waits all of it).
    linger_s: float = LINGER_S
    say: Callable[[str], None] = print
    # Serve the ground station's dashboard (on loopback, a free port; its URL is said at start). Off
    # for the bench, whose ground CPU share is measured without a browser's load.
    dashboard: bool = False
    dashboard_url: str = ""
    members: list[Member] = field(default_factory=list)
    world: Any = None
    server: Any = None
    fleet: Any = None
    ground: subprocess.Popen | None = None
    ground_config: Any = None
    ground_started_t: float = 0.0
    watch: SeparationWatch | None = None

    def start(self) -> "FleetRig":
        from onboard.config import AerieConfig
        from onboard.supervisor.mission import Mission
        from sim.flight_rig import SIM_PARAMS, SimRig, load_task
        from sim.vehicle import SimFleet
        from sim.vehicle.process import free_ports
        from sim.world.cache import load_world
        from sim.world.observation_server import WorldObservationServer

        if not 1 <= self.n <= 32 or not self.tasks:
            raise ValueError(f"a fleet of 1..32 vehicles and at least one task, not {self.n} and {self.tasks}")
        self.out.mkdir(parents=True, exist_ok=True)
        self.world = load_world(None)
        # Fewer tasks than vehicles: the list is flown again (one task for all sends every vehicle to one goal).
        tasks = [load_task(self.tasks[i % len(self.tasks)], self.world) for i in range(self.n)]
        g = self.world.graph
        starts = [tuple(float(v) for v in g.latlon[t.start_node]) for t in tasks]
        origin = GeoPoint(*starts[0], 10.0)
        homes = fleet_homes(starts, origin)
        self.fleet = SimFleet(homes, params=dict(SIM_PARAMS), prearm_delay_s=0.5).start()
        self.server = WorldObservationServer(self.world, noise="prep", seed=0).start()
        keys = fleet_keys(self.out / "keys", self.n)
        ports = free_ports(4 * self.n)  # every member's fleet and telemetry ports, distinct
        fleet_endpoints = [f"tcp://127.0.0.1:{p}" for p in ports[: self.n]]
        base = AerieConfig()
        for i, (task, vehicle) in enumerate(zip(tasks, self.fleet.vehicles)):
            rig = SimRig(self.world, task, vehicle, self.server)
            folder = self.out / f"vehicle{i + 1}"
            cfg = vehicle_config(rig, folder, secret_key=keys.vehicles[i][1],
                                 authorized_dir=keys.telemetry_authorized, log_file=folder / "log.jsonl",
                                 vehicle_id=f"aerie-{i + 1}", base=member_config(base, i, fleet_endpoints, keys),
                                 ports=ports[self.n + 3 * i: self.n + 3 * i + 3])
            cfg = replace(cfg, supervisor=replace(cfg.supervisor, lessons_wait_s=self.linger_s))
            m = rig.mission(name=f"{task.id}-v{i + 1}")
            mission = Mission(m.instruction, m.name, self.step_limit or m.step_limit)
            self.members.append(Member(i, rig, cfg, write_yaml(cfg, self.out / f"vehicle{i + 1}.yaml"),
                                       write_yaml(mission, self.out / f"mission{i + 1}.yaml"),
                                       folder / "outcome.json", keys.vehicles[i][0]))
        # Post-flight lessons on, and the courier delivering each flight's to every member still up
        # (a member that has ended keeps its bundles pending in the ground's ledger).
        self.ground_config = ground_config([(m.cfg, m.public_key) for m in self.members], self.out / "ground",
                                           keys.ground_secret, dashboard_enabled=self.dashboard,
                                           status_interval_s=0.5, ack_interval_s=0.25,
                                           lesson_delivery_interval_s=1.0, lesson_delivery_timeout_s=10.0,
                                           lesson_delivery_max_backoff_s=10.0)
        ground_file = write_yaml(self.ground_config, self.out / "ground.yaml")
        (self.out / "ground").mkdir(exist_ok=True)
        with open(self.out / "ground.log", "w") as log_file:  # the child keeps its own copy of the descriptor
            self.ground = subprocess.Popen([sys.executable, "-m", "aerie", "ground", "--config", str(ground_file)],
                                           cwd=str(REPO_ROOT), stdout=log_file, stderr=subprocess.STDOUT)
        self.ground_started_t = time.monotonic()
        if self.dashboard:
            self.dashboard_url = self._wait_dashboard_url()
            self.say(f"dashboard: {self.dashboard_url or 'did not start (see ' + str(self.out / 'ground.log') + ')'}")
        self.watch = SeparationWatch(self.fleet.vehicles, origin, self.members[0].cfg.fleet).start()
        for m in self.members:
            self.say(f"vehicle {m.member_id}: task {m.rig.task.id} ({m.rig.task.shortest_m:.0f} m, "
                     f"{m.rig.task.min_steps} moves), MAVLink {m.rig.vehicle.mavsdk_url}, "
                     f"fleet channel {m.cfg.fleet_channel.pub_endpoint}, layer {m.cfg.fleet.layer_alt_m:.0f} m")
        return self

    def fly(self, timeout_s: float = 900.0) -> list[tuple[int, dict[str, Any] | None]]:
        """All supervisors at once; (exit status, outcome) per member, in member order."""
        for m in self.members:
            m.fly = FlyProcess(m.config_file, m.mission_file, m.outcome_file, f"v{m.member_id}", self.say).start()
        deadline = time.monotonic() + timeout_s
        results = []
        for m in self.members:
            try:
                results.append(m.fly.wait(max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                m.fly.stop()
                results.append(m.fly.wait(30.0))
        return results

    def _wait_dashboard_url(self, timeout_s: float = 60.0) -> str:
        """The URL the ground printed ("dashboard at URL"); "" when it ended or never said one (a guard, not a claim)."""
        assert self.ground is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in (self.out / "ground.log").read_text(encoding="utf-8", errors="replace").splitlines():
                if "dashboard at " in line:
                    return line.split("dashboard at ", 1)[1].split()[0]
            if self.ground.poll() is not None:
                return ""
            time.sleep(0.1)
        return ""

    def ground_cpu_s(self) -> float:
        """CPU seconds the ground-station process has used so far (user + system, all threads)."""
        assert self.ground is not None
        with open(f"/proc/{self.ground.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop_ground(self) -> None:
        if self.ground is not None and self.ground.poll() is None:
            self.ground.terminate()
            try:
                self.ground.wait(30.0)
            except subprocess.TimeoutExpired:
                self.ground.kill()
                self.ground.wait(5.0)

    def lesson_delivery(self) -> dict[str, Any]:
        """The ground's lesson courier counters per vehicle, from its exit line (after stop_ground); {} if none."""
        import json

        try:
            lines = (self.out / "ground.log").read_text(encoding="utf-8").splitlines()
        except OSError:
            return {}
        for line in reversed(lines):
            if line.startswith("{") and '"lesson_delivery"' in line:
                try:
                    return dict(json.loads(line).get("lesson_delivery") or {})
                except ValueError:
                    return {}
        return {}

    def records(self) -> dict[str, dict[str, int]]:
        """Per vehicle: telemetry records journaled (sent) and stored at the ground (ingested)."""
        from ground_station.flight_log import FlightLog
        from onboard.telemetry.journal import Journal
        from onboard.telemetry.settings import resolve_path

        out = {}
        with FlightLog.open(self.ground_config.db_path) as log:
            for m in self.members:
                vid = m.cfg.vehicle_id
                journal = Journal.open(resolve_path(m.cfg.data_dir, m.cfg.telemetry.journal_path))
                try:
                    sent, stream = journal.last_seq(), journal.stream_id()
                finally:
                    journal.close()
                stored = len(log.seqs(vid, stream))
                kinds = Counter(kind for _, kind, _ in log.events(vid, stream))
                fleet_kinds = ("separation_", "fleet_channel_", "traffic_", "landing_")
                out[vid] = {"sent": sent, "ingested": stored, "lost": sent - stored,
                            "separation_events": {k: v for k, v in sorted(kinds.items()) if k.startswith(fleet_kinds)}}
        return out

    def close(self) -> None:
        for m in self.members:
            if m.fly is not None:
                m.fly.stop()
        if self.watch is not None:
            self.watch.stop()
        self.stop_ground()
        if self.server is not None:
            self.server.close()
        if self.fleet is not None:
            self.fleet.stop()

"""A whole simulated flight set up for the supervisor: vehicle, world feed and config, on loopback.

`start_rig(task_id)` starts the PX4-like MAVLink vehicle with its home on the
task's start waypoint and the world observation server, and `rig.config(...)`
points an `AerieConfig` at them (link URL, world endpoint, data dir, free
telemetry ports). `rig.judge(outcome)` scores the flight against the world's
ground truth exactly as the navigation benchmark does (success within one
waypoint or 50 m of the goal, SPL on the flown waypoint path), which the
supervisor itself can never know. The demo, the end-to-end tests and
`aerie bench nav --fly`-style checks share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from onboard.config import AerieConfig
from onboard.supervisor.mission import Mission
from sim.benchmark import metrics
from sim.benchmark.episode import is_success
from sim.benchmark.tasks import ResolvedTask, load_tasks, resolve_all
from sim.vehicle.process import free_ports
from sim.world.observation_server import WorldObservationServer
from sim.world.world import World

DEFAULT_TASKS = "bench/tasks/helsinki_public_100.json"
# Faster climbs and descents than PX4's defaults keep simulated missions short; the flight
# logic is the same (MPC_Z_VEL_MAX_DN: a look-up's descent, flown in offboard).
SIM_PARAMS = {"MPC_TKO_SPEED": 5.0, "MPC_LAND_SPEED": 3.0, "MPC_Z_V_AUTO_DN": 3.0, "MPC_Z_VEL_MAX_DN": 3.0}


def free_tcp_port() -> int:
    return free_ports(1)[0]


def load_task(task_id: str, world: World, tasks_path: str | Path = DEFAULT_TASKS) -> ResolvedTask:
    city, tasks = load_tasks(tasks_path)
    for rt in resolve_all(city, tasks, world):
        if rt.id == task_id:
            return rt
    raise KeyError(f"no task {task_id!r} in {tasks_path}")


@dataclass
class SimRig:
    world: World
    task: ResolvedTask
    vehicle: Any
    server: WorldObservationServer
    gimbal: bool = True  # the simulated vehicle announces a camera gimbal (sim/vehicle/gimbal_manager.py)
    camera: Any = None  # the vehicle's camera as a video stream (sim/camera_stream.py), once `stream_camera` ran
    camera_calibration: str = ""

    def stream_camera(self, folder: str | Path, *, fps: float = 4.0, latency_s: float = 0.3, sup: Any = None) -> Any:
        """Serve the vehicle's camera as an MJPEG stream and write its calibration file under `folder`;
        `config()` then points ``supervisor.camera`` at the stream. `sup`: whose camera (default the shipped one)."""
        from sim.camera_stream import CameraStream, truth_over_udp, write_calibration
        from sim.world.render import Camera

        sup = sup or AerieConfig().supervisor
        self.camera_calibration = str(write_calibration(Path(folder) / "sim_camera.yaml", sup.camera_width,
                                                        sup.camera_height, sup.camera_hfov_deg))
        self.camera = CameraStream(self.world, truth_over_udp(self.vehicle.control_port), camera=Camera.from_config(sup),
                                   fps=fps, latency_s=latency_s).start()
        return self.camera

    def mission(self, name: str | None = None) -> Mission:
        return Mission(instruction=self.task.task.description, name=name or self.task.id,
                       step_limit=self.task.step_limit)

    def config(self, base: AerieConfig, data_dir: str | Path, *, curve: bool = False,
               ports: Sequence[int] | None = None) -> AerieConfig:
        """`base` pointed at this rig; telemetry on free loopback ports (CurveZMQ off unless asked). `ports`:
        the three telemetry ports, when the caller picks every port of several rigs at once (distinct)."""
        pub, replay, sync = ports if ports is not None else free_ports(3)
        tel = replace(base.telemetry, pub_endpoint=f"tcp://127.0.0.1:{pub}", replay_endpoint=f"tcp://127.0.0.1:{replay}",
                      sync_endpoint=f"tcp://127.0.0.1:{sync}", curve=curve)
        geofence = replace(base.safety.geofence, max_distance_from_home_m=2500.0)
        sup = replace(base.supervisor, world_endpoint=self.server.endpoint)
        if self.camera is not None:  # camera perception (and the detector, as configured) reads the stream
            sup = replace(sup, camera=self.camera.url, camera_latency_s=self.camera.latency_s,
                          camera_calibration=self.camera_calibration)
        return replace(base, data_dir=str(data_dir), link=replace(base.link, url=self.vehicle.mavsdk_url),
                       safety=replace(base.safety, geofence=geofence), telemetry=tel, supervisor=sup)

    def judge(self, outcome: Any) -> dict[str, Any]:
        """Ground-truth score of a `FlightOutcome` (success, SPL, steps) on this rig's task."""
        g = self.world.graph
        nodes = [n for n in outcome.trajectory if n is not None]
        path_m = sum(g.edge_length(a, b) for a, b in zip(nodes, nodes[1:]) if a != b and b in g.adj[a])
        final = outcome.final_node if outcome.final_node is not None else (nodes[-1] if nodes else self.task.start_node)
        success = bool(outcome.reason == "arrived" and is_success(self.world, self.task, final))
        return {"task": self.task.id, "success": success, "steps": outcome.steps, "min_steps": self.task.min_steps,
                "path_m": round(path_m, 1), "shortest_m": round(self.task.shortest_m, 1),
                "spl": round(metrics.spl(success, self.task.shortest_m, path_m), 3), "seconds": outcome.seconds}

    def restart_vehicle(self) -> None:
        """A battery swap: the vehicle process is replaced by a fresh one at the task's start (new ports).

        The world feed's perception noise starts over from its seed too, so a second flight
        differs from the first only by what the vehicle remembers.
        """
        from sim.vehicle import SimVehicleProcess

        self.server.reset_perception()
        self.vehicle.stop()
        lat, lon = (float(v) for v in self.world.graph.latlon[self.task.start_node])
        self.vehicle = SimVehicleProcess(home=(lat, lon, 10.0), seed=self.task.start_node, params=dict(SIM_PARAMS),
                                         prearm_delay_s=0.5, gimbal=self.gimbal).start()
        if self.camera is not None:  # the same camera on the new vehicle
            from sim.camera_stream import truth_over_udp

            self.camera.truth = truth_over_udp(self.vehicle.control_port)

    def close(self) -> None:
        if self.camera is not None:
            self.camera.close()
        self.server.close()
        self.vehicle.stop()

    def __enter__(self) -> "SimRig":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_rig(task_id: str = "t019", *, world: World | None = None, noise: str = "prep", seed: int = 0,
              tasks_path: str | Path = DEFAULT_TASKS, offer_moves: bool = True, gimbal: bool = True) -> SimRig:
    """The sim vehicle at the task's start and the world feed; `offer_moves=False`: the feed is a sensor only;
    `gimbal=False`: a vehicle without a camera gimbal (the look-around turns the vehicle)."""
    from sim.vehicle import SimVehicleProcess
    from sim.world.cache import load_world

    world = world or load_world(None)
    rt = load_task(task_id, world, tasks_path)
    lat, lon = (float(v) for v in world.graph.latlon[rt.start_node])
    vehicle = SimVehicleProcess(home=(lat, lon, 10.0), seed=seed, params=dict(SIM_PARAMS), prearm_delay_s=0.5,
                                gimbal=gimbal).start()
    try:
        server = WorldObservationServer(world, noise=noise, seed=seed, offer_moves=offer_moves).start()
    except BaseException:
        vehicle.stop()
        raise
    return SimRig(world, rt, vehicle, server, gimbal)

"""The onboard supervisor: one process that flies one mission with the agent in the loop.

`Supervisor.run` starts, in this order, the telemetry publisher (journal first,
so nothing after it is lost), the experience memory and the lesson-sync
socket, the planner model and the detector (when configured), the flight
bridge, the fleet channel (with ``fleet.enabled``: the other members' reports
into the bridge's separation rule, ``onboard/fleet/``), the state publisher,
the status socket and the observation link; then
takes off and repeats *observe -> agent step -> publish -> fly the move* until
the agent declares arrival, the step budget is spent, a stop is requested
(SIGTERM: land or RTL by config) or the vehicle cannot go on (bridge failsafe,
link gone for good). It always tries to bring the vehicle down and to publish
``flight_end``, and writes the flight's results folder.

The agent's step runs in a worker thread (`asyncio.to_thread`), so a slow
planner model never stalls the event loop that carries telemetry, the status
socket and the bridge; the setpoint stream has its own thread anyway. Nor does
the step wait for the planner model: the plan is asked on its own thread and
adopted at the first step after it arrives (`agent.llm_plan_wait`); each change
of plan or of its source is published as a ``plan`` message.

A look-up over the roofs (`AgentAction.look_up`) is offered to the agent up
to the safety envelope's altitude ceiling less `look_offers.LOOK_UP_CEILING_MARGIN_M`
(`agent.use_look_up`). One asked for outside (cruise, that ceiling] is
refused here, not flown (``command_refused``, `FlightOutcome.refused_look_ups`);
the envelope, which only clamps altitudes, stays the last line. Otherwise the
vehicle climbs straight up at its waypoint, turns a full circle, is given the
world feed's sightings from that altitude, and flies its moves on up there
(each observation from that altitude, no names) until the agent's come-down
(`AgentAction.come_down`) brings it back to cruise where it is, or on the way
to the next waypoint (one sloped leg, `FlightExecutor.come_down_to`): one step
each, their vertical metres counted in `flown_m`, as the benchmark counts them.
A look-low (`AgentAction.look_low`) is a round trip below cruise, offered only with
camera perception (`look_low_floor`): the vehicle descends to read the shop
fronts, and the look-around down there gives the agent the names it read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import resource
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from contract.messages import Detection, Detections, Event, FlightEnd, FlightStart, MapImage, State
from contract.results import rgb_image_path, write_episode
from onboard.config import AerieConfig
from onboard.map.city import landmark_aliases
from onboard.perception.camera_sightings import PerceptionUnavailable as _PerceptionUnavailable
from onboard.supervisor.flight_executor import FlightExecutor, MissionAborted
from onboard.supervisor.look_around import Where
from onboard.supervisor.look_offers import (come_down_refusal, further_climb_refusal, look_low_floor, look_low_refusal,
                                            look_up_ceiling, look_up_refusal)
from onboard.agent.understood import understand
from onboard.supervisor.mission import Mission, MissionRefused, check_name
from onboard.supervisor.restarting_worker import RestartingWorker
from onboard.supervisor.world_link import MoveOption, WorldLink, WorldObservation

log = logging.getLogger("aerie.supervisor")

@dataclass
class FlightOutcome:
    """What one flight came to; `episode_summary.json` holds the same plus the agent's summary."""

    flight_id: str
    mission: str
    agent_success: bool
    reason: str                  # arrived | step_limit | terminated | refused: ... | aborted: ...
    steps: int
    flown_m: float
    seconds: float
    landed: str
    results_dir: str
    final_node: int | None
    nodes: list[int] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    map_ms: list[float] = field(default_factory=list)  # drawing, encoding and writing the agent's maps, per step
    paused_s: float = 0.0
    peak_rss_mb: float = 0.0
    telemetry_last_seq: int = -1
    lessons_imported: int = 0    # bundles imported while waiting after landing (supervisor.lessons_wait_s)
    look_ups: int = 0            # look-ups flown (a climb in legs counts once; its climb and descent are in flown_m)
    climb_m: float = 0.0         # vertical metres of the look-ups, as measured
    # [step, waypoint, altitude_m, from_m] per climb (leg) flown, as the benchmark records it
    look_up_at: list[list] = field(default_factory=list)
    refused_look_ups: int = 0    # look-ups and look-lows refused (outside the offered altitudes, or by the envelope)
    refused_look_up_at: list[list] = field(default_factory=list)  # [step, waypoint, altitude_m, reason]
    look_lows: int = 0           # look-lows flown (each one step; its descent and climb back are in flown_m)
    look_low_at: list[list] = field(default_factory=list)  # [step, waypoint, altitude_m] per look-low flown
    perception: str = "oracle"   # where the agent's sightings came from (supervisor.perception)
    look_around_s: list[float] = field(default_factory=list)  # camera perception: seconds per look-around
    read_ms: list[float] = field(default_factory=list)  # camera perception: reader time per view read
    bad_frames: int = 0          # camera frames that did not decode or had the wrong size
    setpoint_period_ms: dict = field(default_factory=dict)  # the streamer's tick periods this flight: p50/p99/max
    fleet: dict = field(default_factory=dict)  # fleet channel counters at the end of the flight (fleet.enabled)
    understood: str = ""         # the instruction as the vehicle understood it, said back before arming
    refused_before_arming: bool = False  # the instruction was not understood: nothing was flown

    @property
    def step_ms_p50(self) -> float:
        return statistics.median(self.step_ms) if self.step_ms else float("nan")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["step_ms_p50"] = round(self.step_ms_p50, 2) if self.step_ms else None
        d["map_ms_p50"] = round(statistics.median(self.map_ms), 2) if self.map_ms else None
        d["look_around_s_p50"] = round(statistics.median(self.look_around_s), 2) if self.look_around_s else None
        d["read_ms_per_view_p50"] = round(statistics.median(self.read_ms), 1) if self.read_ms else None
        return d


def peak_rss_mb() -> float:
    """Peak resident set of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def results_folder(results_dir: Path, name: str) -> Path:
    """``results_dir / name``, refusing a name that is not one path component directly under ``results_dir``."""
    root = results_dir.resolve()
    folder = (root / name).resolve()
    if "/" in name or "\\" in name or name in (".", "..") or folder.parent != root:
        raise ValueError(f"results folder {name!r} would lie outside {root}")
    return folder


def _without(obs: WorldObservation, refused: set[int]) -> WorldObservation:
    """The observation with the refused waypoints taken out of the moves on offer."""
    return replace(obs, moves=tuple(m for m in obs.moves if m.node not in refused)) if refused else obs


def _flight_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


# The configuration asks for perception, and its models cannot load: the supervisor refuses to start.
PerceptionUnavailable = _PerceptionUnavailable


def perception_note(sup: Any) -> str:
    """What the vehicle will perceive with, in words (start-up line, `aerie status`, telemetry)."""
    if not sup.camera or sup.detect_every_steps <= 0:
        return ("perception off: no detector runs (supervisor.camera is empty)" if not sup.camera
                else "perception off: supervisor.detect_every_steps is 0")
    return f"perception on: camera {sup.camera!r}, detector every {sup.detect_every_steps} step(s)"


async def unless_stopped(coro: Any, stop: asyncio.Event) -> tuple[bool, Any]:
    """Run `coro` unless `stop` is set first (SIGTERM): then it is cancelled, and (False, None) returned."""
    task = asyncio.ensure_future(coro)
    halt = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, halt}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        halt.cancel()
        raise
    if not task.done():
        task.cancel()
        return False, None
    halt.cancel()
    return True, task.result()


class Supervisor:
    """`start`, then `fly` one mission after another (`aerie fly --standby`), then `close`; or `run` for one.

    `plan_model` and `world` may be given by a caller (tests inject a faulty model); otherwise from config.
    `agent_factory` builds each mission's agent from `GraphAgent`'s arguments (default `GraphAgent`; a
    test may wrap it to script an action the agent would not choose).
    """

    def __init__(self, cfg: AerieConfig, mission: Mission | None = None, *, plan_model: Any = None, world: WorldLink | None = None,
                 on_progress: Callable[[str], None] | None = None, flight_id: str | None = None,
                 agent_factory: Callable[..., Any] | None = None) -> None:
        self.cfg = cfg
        self.mission = mission
        self.sup = cfg.supervisor
        self.data_dir = Path(cfg.data_dir).expanduser()
        self.flight_id = flight_id or _flight_id()
        self.on_progress = on_progress or (lambda line: None)
        self._plan_model = plan_model
        self._owns_plan_model = plan_model is None
        self._world = world
        self._agent_factory = agent_factory
        self.publisher: Any = None
        self.store: Any = None
        self.embedder: Any = None
        self.sync_server: Any = None
        self.detector: RestartingWorker | None = None
        self.camera: RestartingWorker | None = None
        self.bridge: Any = None
        self.fleet_channel: Any = None  # the fleet channel (onboard.fleet.channel) when fleet.enabled
        self.fleet_findings: Any = None  # what the fleet found (onboard.fleet.findings), with the channel
        self.status: Any = None
        self.agent: Any = None
        # The current (or last) flight's outcome, kept also when the flight ends in an exception, so that
        # whoever catches it can still write the outcome file.
        self.outcome: FlightOutcome | None = None
        self._state_task: asyncio.Task | None = None
        self._gazetteer: list[str] = []
        self._aliases: dict[str, str] = {}  # other names of the gazetteer's landmarks (alias -> name)
        self.map: Any = None  # the onboard map (onboard.map.OnboardMap) when map.path is set
        self.text_reader: Any = None  # supervisor.perception camera: the text reader, loaded at start
        self._look: Any = None  # this mission's LookAround (camera perception)
        self._up_m: float | None = None  # flying over the roofs at this altitude since a look-up (None: at cruise)
        self._map_source = ""

    # -- telemetry helpers -----------------------------------------------------------------
    def publish(self, msg_type: str, payload: Any) -> None:
        if isinstance(payload, Event):
            log.info("event %s %s", payload.kind, payload.detail if payload.detail is not None else "")
        if self.publisher is not None:
            self.publisher.publish(msg_type, payload)

    def event(self, kind: str, detail: Any = None) -> None:
        log.info("event %s %s", kind, detail if detail is not None else "")
        if self.publisher is not None:
            self.publisher.event(kind, detail)

    # -- start-up ----------------------------------------------------------------------------
    def _start_telemetry(self) -> None:
        if not self.cfg.telemetry.enabled:
            return
        from onboard.telemetry.publisher import TelemetryPublisher

        self.publisher = TelemetryPublisher(self.cfg.telemetry, self.cfg.vehicle_id, data_dir=self.data_dir).start()

    def _open_memory(self) -> None:
        if not self.sup.use_memory:
            return
        from onboard.memory.embedder import MiniLMEmbedder
        from onboard.memory.experience_store import ExperienceStore
        from onboard.telemetry.settings import resolve_path

        self.embedder = MiniLMEmbedder.load()
        path = resolve_path(self.data_dir, self.cfg.memory.path)
        self.store = ExperienceStore.open(path, self.embedder, self.cfg.memory)
        self.store.warm()  # vectors in memory and prefilters trained now, not on the first in-flight retrieval
        if self.sup.accept_lessons and self.publisher is not None:
            from onboard.telemetry.memory_sync import MemorySyncServer

            self.sync_server = MemorySyncServer(self.cfg.telemetry, data_dir=self.data_dir,
                                                import_fn=self._import_lessons,
                                                on_result=self.event).start()

    def _import_lessons(self, bundle: Path) -> Any:
        """Runs on the sync thread: its own connection to the memory file (WAL, one writer at a time)."""
        from onboard.memory.bundle import import_bundle
        from onboard.memory.experience_store import ExperienceStore
        from onboard.telemetry.settings import resolve_path

        from onboard.agent.mission_lessons import retire_merged

        with ExperienceStore.open(resolve_path(self.data_dir, self.cfg.memory.path), self.embedder,
                                  self.cfg.memory) as store:
            # The source stays the bundle's ("bundle:<vehicle_id>"): in a fleet the ground delivers every
            # vehicle's lessons to every vehicle, and whose flight a lesson came from is worth keeping.
            report = import_bundle(store, bundle)
            retire_merged(store)  # a flight's lesson that holds this vehicle's own analysis replaces it
            return report

    def _reader_generate(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        """The instruction reader's model call: the plan model, loaded on the first description that needs it."""
        if self._plan_model is None:
            from onboard.inference.planner_model import PlannerModel

            self._plan_model = PlannerModel.from_config(self.cfg.inference)
        return self._plan_model.generate_json(messages, schema)

    def _load_models(self) -> None:
        if self.sup.perception == "camera" and self.text_reader is None:
            from onboard.perception.camera_sightings import open_reader

            self.text_reader = open_reader(self.cfg.inference)  # PerceptionUnavailable naming the file
        if self.cfg.agent.planner == "llm" and self._plan_model is None:
            from onboard.inference.planner_model import PlannerModel

            inference = self.cfg.inference
            if not self.cfg.agent.llm_plan_wait:  # no step waits for the plan: a slow CPU gets longer
                inference = replace(inference, call_deadline_s=max(inference.call_deadline_s,
                                                                   self.cfg.agent.llm_plan_deadline_s))
            self._plan_model = PlannerModel.from_config(inference)
        if self.sup.camera and self.sup.detect_every_steps > 0:
            from onboard.perception.camera_model import CameraIntrinsics
            from onboard.perception.pipeline import build_pipeline

            def make_pipeline() -> Any:
                # The intrinsics are fixed per pipeline; frames of another size are resized by the caller.
                return build_pipeline(self.cfg.inference, CameraIntrinsics.from_hfov(
                    self.sup.camera_width, self.sup.camera_height, self.sup.camera_hfov_deg))

            self.detector = RestartingWorker("detector", make_pipeline, backoff_s=self.sup.restart_backoff_s,
                                             backoff_max_s=self.sup.restart_backoff_max_s,
                                             max_restarts=self.sup.max_restarts, on_event=self.event,
                                             close=lambda p: p.close())
            self.detector._ensure()  # load now: `aerie status` should report loaded models before take-off
            loaded, detail = self.detector.healthy()
            if not loaded:  # asked for and unloadable: refuse to fly blind rather than say nothing
                raise PerceptionUnavailable(
                    f"the configuration asks for perception (supervisor.camera={self.sup.camera!r}, "
                    f"detect_every_steps={self.sup.detect_every_steps}) but it cannot load: {detail} "
                    f"(inference.manifest={self.cfg.inference.manifest or 'models/manifest.yaml'!r}, "
                    f"inference.model_dir={self.cfg.inference.model_dir!r})")
            if self.sup.camera != "world":
                from onboard.supervisor.camera_source import OpenCVCamera

                self.camera = RestartingWorker("camera", lambda: OpenCVCamera(self.sup.camera),
                                               backoff_s=self.sup.restart_backoff_s,
                                               backoff_max_s=self.sup.restart_backoff_max_s,
                                               max_restarts=self.sup.max_restarts, on_event=self.event,
                                               close=lambda c: c.close())

    def _load_map(self) -> None:
        """The configured onboard map, checked before anything flies; a bad file stops the start, naming it."""
        from onboard.map.map_file import load_map
        from onboard.map.settings import map_file_path

        path = map_file_path(self.cfg.data_dir, self.cfg.map)
        if path is None:
            return
        t0 = time.perf_counter()
        self.map = load_map(path, self.cfg.map.extract_sha256 or None, max_inflated_bytes=self.cfg.map.max_inflated_bytes)
        load_ms = (time.perf_counter() - t0) * 1000.0
        self._map_source = f"map {path.name}"
        g = self.map.graph
        note = (f"onboard map {path}: {g.n_nodes} corridor waypoints, {len(self.map.landmarks)} landmarks, "
                f"loaded in {load_ms:.0f} ms; the world feed is a sensor only")
        log.info("%s", note)
        self.on_progress(note)
        self.event("map", {"path": str(path), "waypoints": g.n_nodes, "landmarks": len(self.map.landmarks),
                           "extract_sha256": self.map.header.extract_sha256, "load_ms": round(load_ms, 1)})

    async def _connect_bridge(self) -> None:
        from firmware_bridge.bridge import FlightBridge
        from contract.messages import bridge_event_listener

        self.bridge = await FlightBridge.connect(self.cfg.bridge)
        self.bridge.events.add_listener(bridge_event_listener(self.publish))

    def _start_fleet_channel(self) -> None:
        """With fleet.enabled, tell the other members where this vehicle is and hand theirs to the bridge."""
        if not self.cfg.fleet.enabled:
            return
        from onboard.fleet.channel import FleetChannel, position_from_state
        from onboard.fleet.findings import FleetFindings

        bridge = self.bridge
        self.fleet_findings = FleetFindings(self.cfg.fleet.member_id,
                                            radio_range_m=self.cfg.fleet_channel.findings_max_range_m,
                                            max_age_s=self.cfg.fleet_channel.findings_max_age_s)
        self.fleet_channel = FleetChannel(self.cfg.fleet_channel, self.cfg.fleet.member_id,
                                          lambda: position_from_state(bridge.state, self.cfg.fleet.member_id),
                                          bridge.update_traffic, data_dir=self.data_dir,
                                          own_findings=self.fleet_findings.outgoing,
                                          take_findings=self.fleet_findings.take).start()
        self.event("fleet_channel", {"member_id": self.cfg.fleet.member_id, "endpoint": self.fleet_channel.endpoint,
                                     "peers": [p.endpoint for p in self.cfg.fleet_channel.peers],
                                     "curve": self.cfg.fleet_channel.curve})

    async def _adopt_airborne(self) -> None:
        """A vehicle already in the air at start (a restarted supervisor) goes home or lands first."""
        from firmware_bridge.maneuvers import ManeuverTimeout, wait_until
        from onboard.supervisor.airborne import adopt_airborne

        try:  # armed / in-air arrive with the first telemetry; health may come before them
            await wait_until(self.bridge, lambda s: s.landed_state != "UNKNOWN", 5.0, "landed state")
        except ManeuverTimeout:
            log.warning("no landed state from the autopilot yet: cannot tell whether it is airborne")
        if await adopt_airborne(self.bridge, self.sup.on_start_airborne, self.event):
            self.on_progress(f"vehicle was airborne at start: {self.sup.on_start_airborne}")

    async def stop_airborne(self) -> str:
        """SIGTERM with no mission flying (standby): an airborne vehicle is taken down, bounded in time."""
        from onboard.supervisor.airborne import bring_down_on_stop

        if self.bridge is None:
            return "not connected"
        return await bring_down_on_stop(self.bridge, self.sup.on_terminate, self.sup.terminate_timeout_s, self.event)

    async def _state_loop(self) -> None:
        period = 1.0 / self.cfg.telemetry.state_rate_hz if self.cfg.telemetry.state_rate_hz > 0 else 0.1
        while True:
            if self.bridge is not None:
                self.publish("state", State.from_state(self.bridge.state))
            await asyncio.sleep(period)

    def _checks(self) -> dict[str, Callable[[], tuple[bool, str]]]:
        def bridge() -> tuple[bool, str]:
            if self.bridge is None:
                return False, "not connected yet"
            s = self.bridge.state
            ok = self.bridge.monitor.link_ok.is_set()
            return ok, (f"{self.bridge.link.url}: heartbeat {s.heartbeat_age_s():.1f} s ago, mode {s.flight_mode}"
                        if ok else f"{self.bridge.link.url}: link lost")

        def models() -> tuple[bool, str]:
            parts, ok = [], True
            if self.cfg.agent.planner == "llm":
                ok &= self._plan_model is not None
                parts.append(f"planner {self.cfg.inference.llm_model} {'loaded' if self._plan_model else 'missing'}")
            else:
                parts.append("geometric planner (no model)")
            if self.detector is not None:
                d_ok, detail = self.detector.healthy()
                ok &= d_ok
                parts.append(detail)
            else:
                parts.append(perception_note(self.sup))
            if self.embedder is not None:
                parts.append("embedder loaded")
            return ok, "; ".join(parts)

        def memory() -> tuple[bool, str]:
            if not self.sup.use_memory:
                return True, "memory disabled by config"
            if self.store is None:
                return False, "memory not open"
            return True, f"{self.store.path}: {self.store.count()} experiences"

        def vehicle() -> tuple[bool, str]:  # information, not health: `make flash` reads the first word
            if self.bridge is None:
                return True, "unknown: not connected yet"
            s = self.bridge.state
            where = f"in air at {s.rel_alt_m:.1f} m" if s.in_air else "on ground"
            return True, f"{'armed' if s.armed else 'disarmed'}, {where}, mode {s.flight_mode}"

        return {"bridge": bridge, "models": models, "memory": memory, "vehicle": vehicle}

    # -- the step ------------------------------------------------------------------------------
    async def _observe(self, node: int | None, heading: float, altitude_m: float | None = None) -> WorldObservation:
        """What is perceived where the autopilot says the vehicle is; from `altitude_m` during a look-up."""
        s = self.bridge.state
        want_image = self.sup.camera == "world" and self.sup.detect_every_steps > 0
        if self.map is None:
            return await asyncio.to_thread(self._world.observe, s.lat, s.lon, heading, node=node, image=want_image,
                                           altitude_m=altitude_m)
        # With a map the world feed is a sensor (what the camera would see here); where the vehicle may fly
        # next comes from the map at the position the autopilot reports. Moves the feed may offer are ignored.
        from onboard.supervisor.map_waypoints import OffTheMap, position_on

        seen = await asyncio.to_thread(self._world.observe, s.lat, s.lon, heading, node=None, image=want_image,
                                       altitude_m=altitude_m)
        try:
            here = position_on(self.map, s.lat, s.lon, self.cfg.map.max_snap_m, self._map_source)
        except OffTheMap as exc:
            raise MissionAborted(str(exc)) from None
        return replace(seen, node=here.node, lat=here.lat, lon=here.lon, snap_m=here.snap_m, moves=here.moves)

    def _look_around(self, executor: FlightExecutor, gazetteer: list[str], folder: Path) -> Any:
        """This mission's camera perception: names from its instruction, ranges from the map's footprints if any."""
        from onboard.agent.goal_description import parse_goal_description
        from onboard.perception.camera_model import CameraIntrinsics
        from onboard.perception.camera_sightings import CameraReader, SightingFusion, goal_names
        from onboard.perception.text_range import FootprintRanger
        from onboard.supervisor.look_around import LookAround

        goal = parse_goal_description(self.mission.instruction, gazetteer, self._aliases)
        names = ([self.mission.goal_name] if self.mission.goal_name.strip()
                 else goal_names(self.mission.instruction, gazetteer, goal.names_goal))
        settings = self.sup.camera_reading.fusion()
        intr = CameraIntrinsics.from_hfov(self.sup.camera_width, self.sup.camera_height, self.sup.camera_hfov_deg)
        ranger = None
        if self.map is not None and self.map.buildings:
            ranger = FootprintRanger(self._map_footprints(), [b.height for b in self.map.buildings])
        reader = CameraReader(self.text_reader, intr, gazetteer, names, ranger, settings)
        self.event("camera_perception", {"goal_names": names, "views": self.sup.camera_reading.views,
                                         "map_ranges": ranger is not None})
        return LookAround(executor, self.bridge, self._world, reader,
                          SightingFusion(gazetteer, names, settings, goal.names_goal), self.sup, folder, self.event)

    def _map_footprints(self) -> list:
        """The map's building footprints in metres (east, north) of home, the frame of the reported position."""
        import numpy as np

        s = self.bridge.state
        home = np.asarray(self.map.to_local(s.home_lat, s.home_lon), dtype=float)
        return [np.asarray(b.footprint, dtype=float) - home for b in self.map.buildings]

    async def _camera_view(self, step: int, obs: WorldObservation, outcome: FlightOutcome,
                           where: Where = "cruise") -> WorldObservation:
        """The look-around here: `obs` with the camera's fused sightings in place of anything the feed said."""
        lms, pois = await self._look.run(step, where)
        outcome.look_around_s = [round(x, 2) for x in self._look.seconds]
        outcome.read_ms = [round(x, 1) for x in self._look.read_ms]
        outcome.bad_frames = self._look.bad_frames
        self.on_progress(f"looked around: {len(lms)} landmark(s), {len(pois)} name(s) read "
                         f"({self._look.seconds[-1]:.1f} s)")
        return replace(obs, landmarks=lms, pois=pois)

    async def _detect(self, step: int, obs: WorldObservation, heading: float, folder: Path) -> None:
        if self.detector is None or step % self.sup.detect_every_steps:
            return
        import cv2

        from firmware_bridge.maneuvers import position_from_home
        from onboard.perception.camera_model import CameraPose
        from onboard.supervisor.camera_source import decode_png

        if self.camera is not None:
            frame = await self.camera.call(lambda cam: asyncio.to_thread(cam.read))
        else:
            frame = decode_png(obs.image_png) if obs.image_png else None
        if frame is None:
            return
        if self.sup.save_images:
            cv2.imwrite(str(rgb_image_path(folder, step)), frame)
        if frame.shape[:2] != (self.sup.camera_height, self.sup.camera_width):
            frame = cv2.resize(frame, (self.sup.camera_width, self.sup.camera_height))
        here = position_from_home(self.bridge)
        pose = CameraPose(here.north_m, here.east_m, here.down_m, yaw_deg=heading, pitch_deg=self.sup.camera_pitch_deg)
        out = await self.detector.call(lambda p: p.perceive_async(frame, pose, list(self.sup.detect_prompts)))
        if out is None:
            return
        dets = []
        for o in out.objects:
            rng = o.range_m
            north = east = None
            if rng is not None and math.isfinite(rng):
                north = here.north_m + rng * math.cos(math.radians(o.bearing_deg))
                east = here.east_m + rng * math.sin(math.radians(o.bearing_deg))
            dets.append(Detection(str(o.label), round(min(1.0, max(0.0, float(o.score))), 3),
                                  round(float(o.bearing_deg), 1),
                                  None if rng is None or not math.isfinite(rng) else round(float(rng), 1), north, east))
        timings = {str(k): float(v) for k, v in dict(out.timings_ms).items()
                   if isinstance(v, (int, float)) and math.isfinite(v)}
        self.publish("detections", Detections(tuple(dets), step=step, timings_ms=timings))

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Everything a flight needs, in an order where nothing published is ever lost."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._start_telemetry()
        self._open_memory()
        note = perception_note(self.sup)
        self.on_progress(note)
        self.event("perception", {"enabled": note.startswith("perception on"), "note": note})
        self._load_models()
        self._load_map()
        if self._world is None:
            self._world = WorldLink(self.sup.world_endpoint, self.sup.world_timeout_s)
        await self._connect_bridge()
        self._start_fleet_channel()
        self._state_task = asyncio.create_task(self._state_loop())
        await self._adopt_airborne()
        if self.sup.status_socket:
            from onboard.supervisor.status_server import StatusServer

            self.status = await StatusServer(self.data_dir, self._checks()).start()

    async def run(self, stop: asyncio.Event | None = None) -> FlightOutcome:
        """Start, fly this supervisor's mission, close: `aerie fly --mission`."""
        if self.mission is None:
            raise ValueError("Supervisor.run needs the mission given at construction")
        try:
            await self.start()
            return await self.fly(self.mission, stop, flight_id=self.flight_id)
        finally:
            await self.close()

    async def fly(self, mission: Mission, stop: asyncio.Event | None = None, *,
                  flight_id: str | None = None) -> FlightOutcome:
        """One mission from take-off to landing; the vehicle is brought down whatever happens."""
        stop = stop or asyncio.Event()
        self.mission = mission
        self.outcome = None
        self.flight_id = flight_id or _flight_id()
        if mission.geofence is not None:
            self.bridge.set_geofence(mission.geofence)
        elif self.bridge.cfg.safety.geofence != self.cfg.safety.geofence:
            self.bridge.set_geofence(self.cfg.safety.geofence)  # a previous mission's fence ends with it
        folder = results_folder(self.data_dir / self.sup.results_dir, f"{self.flight_id}_{check_name(mission.name)}")
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        outcome = FlightOutcome(self.flight_id, mission.name, False, "not started", 0, 0.0, 0.0, "on ground",
                                str(folder), None)
        self.outcome = outcome
        executor = FlightExecutor(self.bridge, self.sup, self.event)
        periods_from = len(self.bridge.streamer.periods_s)
        self.agent = None
        try:
            if self.map is not None:  # the names the vehicle knows are its map's
                self._gazetteer = [lm.name for lm in self.map.landmarks]
                self._aliases = landmark_aliases(self.map.landmarks, self.map.pois)
            elif not self._gazetteer:  # asked per mission: a standby service comes up without the feed
                self._gazetteer, self._aliases = await asyncio.to_thread(self._world.gazetteer)
            from onboard.supervisor.airborne import airborne, wait_down

            if airborne(self.bridge):  # adopted at start: it is on its way down, not ours to fly yet
                self.on_progress("waiting for the adopted vehicle to be down before the mission")
                if not await wait_down(self.bridge, self.sup.land_timeout_s):
                    raise MissionAborted("the vehicle found airborne at start is not down yet")
            flying = asyncio.ensure_future(self._fly(executor, self._gazetteer, folder, outcome, stop))
            halt = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({flying, halt}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                halt.cancel()
                if not flying.done():  # SIGTERM: abandon the step (a slow model must not delay the landing)
                    flying.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await flying
                    outcome.reason = "terminated"
            if not flying.cancelled():
                flying.result()  # the mission's own end, or its exception
        except MissionRefused as exc:
            outcome.reason = f"refused: {exc}"
            outcome.refused_before_arming = True
        except MissionAborted as exc:
            outcome.reason = f"aborted: {exc}"
            self.event("mission_aborted", {"reason": str(exc)})
        except Exception as exc:
            outcome.reason = f"error: {type(exc).__name__}: {exc}"
            log.exception("mission failed")
            self.event("mission_error", {"error": outcome.reason})
            raise
        finally:
            terminated = outcome.reason == "terminated"
            how = self.sup.on_terminate if terminated else "land"
            try:
                outcome.landed = await executor.finish(how, wait_s=self.sup.terminate_timeout_s if terminated else None)
            except Exception as exc:  # the autopilot's own failsafes still hold; say so
                outcome.landed = f"could not land: {type(exc).__name__}: {exc}"
                log.error("%s", outcome.landed)
            await self._finish_analysis()
            outcome.seconds = round(time.monotonic() - t0, 1)
            outcome.paused_s = round(executor.paused_total_s, 1)
            outcome.peak_rss_mb = round(peak_rss_mb(), 1)
            outcome.setpoint_period_ms = self.bridge.streamer.period_summary(periods_from)
            if self.fleet_channel is not None:
                outcome.fleet = {**self.fleet_channel.counters(), "findings": self.fleet_findings.counts()}
            self._write_results(folder, outcome)
            if self.publisher is not None:
                self.publisher.flight_end(FlightEnd(self.flight_id, outcome.agent_success, outcome.reason,
                                                    outcome.steps, str(outcome.landed), outcome.flown_m))
                outcome.telemetry_last_seq = self.publisher.last_seq
                self.publisher.flush(5.0)
                outcome.lessons_imported = await self._wait_for_lessons()
        return outcome

    async def _fly(self, executor: FlightExecutor, gazetteer: list[str], folder: Path, outcome: FlightOutcome,
                   stop: asyncio.Event) -> None:
        from firmware_bridge.maneuvers import position_from_home
        from onboard.agent.agent import GraphAgent
        from onboard.agent.step_report import plan_payload, step_payload

        step_limit = self.mission.step_limit or self.sup.step_limit
        still = self.bridge.failsafe_recovered()  # a previous flight's failsafe ends only on evidence
        if still is not None:
            raise MissionAborted(f"bridge failsafe {still}")
        heading, node = 0.0, None
        obs = await self._observe(node, heading)
        if not obs.moves:
            raise MissionAborted("no moves on offer at the take-off position: the world feed offers none (a sensor "
                                 "only?) and no onboard map is configured (map.path, aerie fly --map)"
                                 if self.map is None else "the onboard map offers no moves at the take-off position")
        spacing = statistics.median([m.length for m in obs.moves])
        self.agent = (self._agent_factory or GraphAgent)(
            self.cfg.agent, gazetteer, name=self.cfg.agent.planner, memory=self.cfg.memory,
            experience_store=self.store, plan_model=self._plan_model, step_spacing_m=spacing,
            reader_generate=self._reader_generate, flight_id=self.flight_id, aliases=self._aliases)
        # Off the loop: where the parser cannot settle the words, the model reads them (about a second).
        known = None
        if self.map is not None:
            from onboard.supervisor.map_waypoints import OffTheMap, knowledge_for

            s = self.bridge.state
            try:
                known = knowledge_for(self.map, s.home_lat, s.home_lon, self.cfg.map.position_uncertainty_m)
            except OffTheMap as exc:
                raise MissionAborted(str(exc)) from None
        await asyncio.to_thread(self.agent.reset, self.mission.instruction, 0, known)
        self._look = self._look_around(executor, gazetteer, folder) if self.sup.perception == "camera" else None
        outcome.perception = self.sup.perception
        if self.agent.reading is not None and self.agent.reading.unsettled:
            r = self.agent.reading
            log.info("instruction: parser unsettled (%s); read by the %s%s", r.unsettled, r.reader,
                     f" (model refused: {'; '.join(r.model_errors)})" if r.model_errors else "")
        # Said back before arming, as a pilot reads back a clearance; refused when nothing placeable was read.
        understood = understand(self.agent.reading, search_only=self.mission.search_only)
        outcome.understood = understood.line()
        self.on_progress(outcome.understood)
        log.info("%s", outcome.understood)  # in the journal too, whether or not progress lines are shown
        self.event("instruction_understood", {"line": outcome.understood, "goal": understood.goal_name,
                                              "relations": list(understood.relations),
                                              "missing": list(understood.missing)})
        if understood.missing:
            self.event("mission_refused", {"reason": understood.refusal()})
            raise MissionRefused(understood.refusal())
        s = self.bridge.state
        if self.publisher is not None:
            home = (s.home_lat, s.home_lon) if math.isfinite(s.home_lat) and math.isfinite(s.home_lon) else None
            self.publisher.flight_start(FlightStart(self.flight_id, self.mission.name, self.mission.instruction,
                                                    self.cfg.agent.planner, home, step_limit,
                                                    understood=outcome.understood))
        self.on_progress(f"taking off to {self.sup.cruise_alt_m:.0f} m")
        await executor.take_off()
        obs = await self._observe(obs.node, heading)
        outcome.nodes.append(obs.node)
        published_plan = None
        last_pos = position_from_home(self.bridge)
        refused: set[int] = set()  # waypoints the safety envelope refused: never offered to the agent again
        ceiling, floor = look_up_ceiling(self.cfg), look_low_floor(self.cfg)
        self._up_m = None
        for step in range(step_limit + 1):
            if stop.is_set():
                outcome.reason = "terminated"
                return
            await executor.wait_for_link()
            if self._look is not None and obs.altitude_m is None:  # the step's sightings: the camera's only
                obs = await self._camera_view(step, obs, outcome)
            await self._detect(step, obs, heading, folder)
            t_step = time.perf_counter()
            action = await asyncio.to_thread(self.agent.act, obs.for_agent(
                step, step_limit - step, cruise_alt_m=self.sup.cruise_alt_m, look_up_ceiling_m=ceiling,
                look_low_floor_m=None if self._up_m is not None else floor, shared=self._fleet_findings_in()))
            outcome.step_ms.append((time.perf_counter() - t_step) * 1000.0)
            self._fleet_findings_out()
            st = self.agent.state
            # A new plan, or the same one with news: the model's plan failed late (source llm-fallback).
            if st.dynamic.plan is not None and (st.dynamic.plan, st.dynamic.plan_source) != published_plan:
                published_plan = (st.dynamic.plan, st.dynamic.plan_source)
                self.publish("plan", plan_payload(st))
            frame = st.dynamic.trajectory_history[-1]
            self.publish("agent_step", step_payload(st, frame))
            t_map = time.perf_counter()
            if await asyncio.to_thread(self._maps, step, folder):
                outcome.map_ms.append((time.perf_counter() - t_map) * 1000.0)
            dist = frame.distance_to_target
            what = {"arrive": "arrive", "look_up": f"look up {action.altitude_m} m",
                    "come_down": "come down" + ("" if action.node is None else f" -> {action.node}"),
                    "look_low": f"look low {action.altitude_m} m"}.get(
                action.kind, f"-> waypoint {action.node}")
            self.on_progress(f"step {step:>3}  {frame.strategy:<8} {what:<18} "
                             f"target est. {'?' if dist is None else f'{dist:.0f} m':>7}  {action.reason[:70]}")
            if action.kind == "arrive":
                outcome.agent_success = bool(st.final.mission_success)
                outcome.reason = "arrived"
                outcome.final_node = obs.node
                return
            if step >= step_limit:
                break
            outcome.steps = step + 1
            # one step at this waypoint (the same moves after it); a come-down on the way is flown as a move
            descending = action.kind == "come_down" and action.node is not None and come_down_refusal(
                action.altitude_m, self.sup.cruise_alt_m, self._up_m, True) is None
            if action.kind in ("look_up", "come_down", "look_low") and not descending:
                if action.kind == "look_up":
                    to = None if action.node is None else obs.move(action.node)  # climbing on the way there
                    look = self._look_up(executor, obs, heading, action.altitude_m, ceiling, step, outcome, to)
                elif action.kind == "come_down":
                    look = self._come_down(executor, obs, heading, step, outcome, action)
                else:
                    look = self._look_low(executor, obs, heading, action.altitude_m, floor, step, outcome)
                done, seen = await unless_stopped(look, stop)
                if not done:
                    outcome.reason = "terminated"
                    return
                if seen.node != obs.node:  # flown on the way to a waypoint: there now
                    heading = obs.move(seen.node).bearing
                    last_pos = position_from_home(self.bridge)
                    outcome.nodes.append(seen.node)
                    outcome.final_node = seen.node
                obs = _without(seen, refused)
                continue
            move = obs.move(action.node)
            top = self.bridge.state.rel_alt_m
            flight = executor.come_down_to(move.lat, move.lon, action.altitude_m) if descending else \
                executor.fly_to(move.lat, move.lon)
            done, result = await unless_stopped(flight, stop)
            if not done:
                outcome.reason = "terminated"
                return
            if result.refused is not None:
                # Nothing was flown: the agent plans again from here without that waypoint, or the mission
                # ends cleanly when the fence leaves it nowhere to go.
                refused.add(move.node)
                self.on_progress(f"waypoint {move.node} refused: {result.refused}")
                obs = _without(obs, refused)
                if not obs.moves:
                    outcome.reason = "refused: every waypoint on offer lies outside the safety envelope"
                    return
                continue
            if not result.arrived:
                self.event("move_timeout", {"waypoint": move.node, "error_m": round(result.error_m, 1)})
            here = position_from_home(self.bridge)
            across = math.hypot(here.north_m - last_pos.north_m, here.east_m - last_pos.east_m)
            if descending:  # the sloped leg's own length; its vertical part counts in climb_m as a come-down's
                down = abs(top - self.bridge.state.rel_alt_m)
                if math.isfinite(down):
                    outcome.climb_m = round(outcome.climb_m + down, 1)
                    across = math.hypot(across, down)
                self._up_m = action.altitude_m  # None: at cruise; else part of the way down, still up there
                self.on_progress(f"came down to {'cruise' if self._up_m is None else f'{self._up_m:.0f} m'} on the "
                                 f"way to waypoint {move.node}")
            outcome.flown_m = round(outcome.flown_m + across, 1)
            last_pos = here
            heading = move.bearing
            seen = await self._observe(move.node, heading, self._up_m)
            if self._up_m is not None and self._look is not None:  # the camera's look-around up there: landmarks only
                seen = replace(await self._camera_view(step, seen, outcome, "up"), pois=())
            obs = _without(seen, refused)
            outcome.nodes.append(obs.node)
            outcome.final_node = obs.node
        outcome.reason = "step_limit"

    def _fleet_findings_in(self) -> Any:
        """What the other members found, in this flight's frame (None: flying alone or nothing yet)."""
        envelope = self.bridge.envelope() if self.fleet_findings is not None else None
        return None if envelope is None else self.fleet_findings.for_agent(
            envelope.home, fence_m=envelope.cfg.geofence.max_distance_from_home_m)

    def _fleet_findings_out(self) -> None:
        """What this vehicle found, for the others: set between steps, while the agent is idle."""
        from contract.fleet_discovery import MAX_ITEMS

        envelope = self.bridge.envelope() if self.fleet_findings is not None else None
        if envelope is not None:
            self.fleet_findings.publish(self.agent.findings(MAX_ITEMS), envelope.home, self.flight_id)

    async def _look_up(self, executor: FlightExecutor, obs: WorldObservation, heading: float, altitude_m: float | None,
                       ceiling_m: float | None, step: int, outcome: FlightOutcome,
                       to: MoveOption | None = None) -> WorldObservation:
        """Climb at this waypoint (or on the way to the waypoint `to`, one sloped leg), turn, observe from up
        there, and stay up: the moves after it are flown up there until a come-down (`_come_down`); the
        observation to act on.

        A refused look-up (outside what was offered, by the envelope, or while up there other than a further
        climb, the next leg of a climb flown in legs) flies nothing and
        gives `obs` back: the sightings from where it is, which tell the agent (their altitude is not the one
        asked for) that it was refused. A climb that does not arrive in time comes back to cruise.
        """
        reason = look_up_refusal(altitude_m, self.sup.cruise_alt_m, ceiling_m) or \
            further_climb_refusal(altitude_m, self._up_m)
        if reason is not None:
            return await self._refused_look_up(obs, heading, step, altitude_m, reason, outcome, "look_up")
        from firmware_bridge.maneuvers import position_from_home

        assert altitude_m is not None
        further = self._up_m is not None  # the next leg of a climb flown in legs: the same look-up
        start_m = self.sup.cruise_alt_m if self._up_m is None else self._up_m
        before = self.bridge.state.rel_alt_m
        start = position_from_home(self.bridge)
        climb = await (executor.climb_to(altitude_m) if to is None else executor.climb_on_to(to.lat, to.lon, altitude_m))
        if climb.refused is not None:  # the envelope would have changed it: nothing flown (event sent)
            return await self._refused_look_up(obs, heading, step, altitude_m, f"safety envelope: {climb.refused}",
                                               outcome)
        at, across = obs.node, 0.0
        if to is not None:  # there now (or on the way, if the leg timed out): the view is from there
            at, heading = to.node, to.bearing
            here = position_from_home(self.bridge)
            across = math.hypot(here.north_m - start.north_m, here.east_m - start.east_m)
        top = self.bridge.state.rel_alt_m
        seen = None
        if climb.arrived and self._look is not None:  # the camera's look-around from up there: landmarks only
            top = max(top, self.bridge.state.rel_alt_m)
            seen = await self._observe(at, heading, altitude_m)
            seen = replace(await self._camera_view(step, seen, outcome, "up"), pois=())
        elif climb.arrived:
            if not await executor.turn_around():
                log.info("look-up at waypoint %s: no full turn (no heading reported, or a turn timed out)", at)
            top = max(top, self.bridge.state.rel_alt_m)  # settled up there by now (the climb ends within 1 m)
            seen = await self._observe(at, heading, altitude_m)
        else:  # not up there in time: what it sees is not the view from altitude_m
            self.event("move_timeout", {"command": "climb", "altitude_m": altitude_m, "error_m": round(climb.error_m, 1)})
        if seen is not None:
            climbed = abs(top - before)
            self._up_m = altitude_m
        else:
            climbed = await self._back_to_cruise(executor, before, top, "descend")
            self._up_m = None
        if math.isfinite(climbed):
            outcome.climb_m = round(outcome.climb_m + climbed, 1)
        # a sloped leg's own length (the hypotenuse); straight up, the vertical metres
        outcome.flown_m = round(outcome.flown_m + math.hypot(across, climbed if math.isfinite(climbed) else 0.0), 1)
        outcome.look_ups += not further
        outcome.look_up_at.append([step, obs.node, altitude_m, start_m])
        self.on_progress(f"looked up from {altitude_m:.0f} m at waypoint {at}: "
                         f"{len(seen.landmarks) if seen else 0} landmark(s) in sight; "
                         + ("flying on up there" if seen is not None else "back at cruise"))
        return seen if seen is not None else await self._observe(at, heading)

    async def _come_down(self, executor: FlightExecutor, obs: WorldObservation, heading: float, step: int,
                         outcome: FlightOutcome, action: Any) -> WorldObservation:
        """Back to cruise at this waypoint after a look-up; the observation to act on (from cruise, names read).
        Asked for at cruise, or part of the way down other than on the way to a waypoint (or to an altitude
        outside (cruise, up there)), it flies nothing (a ``command_refused`` event) and gives the view back."""
        reason = come_down_refusal(action.altitude_m, self.sup.cruise_alt_m, self._up_m, action.node is not None)
        if reason is not None:
            return await self._refused_look_up(obs, heading, step, action.altitude_m, reason, outcome, "come_down")
        top = self.bridge.state.rel_alt_m
        down = await self._back_to_cruise(executor, top, top, "descend")  # from up there: one way
        self._up_m = None
        if math.isfinite(down):
            outcome.climb_m = round(outcome.climb_m + down, 1)
            outcome.flown_m = round(outcome.flown_m + down, 1)
        self.on_progress(f"came down to cruise at waypoint {obs.node}")
        return await self._observe(obs.node, heading)

    async def _look_low(self, executor: FlightExecutor, obs: WorldObservation, heading: float,
                        altitude_m: float | None, floor_m: float | None, step: int,
                        outcome: FlightOutcome) -> WorldObservation:
        """Descend at this waypoint, look around reading the shop fronts, come back to cruise; the observation
        to act on (the names read down there). Refused as a look-up is (`look_low_refusal`, the envelope)."""
        reason = "over the roofs: come down first" if self._up_m is not None else \
            look_low_refusal(altitude_m, self.sup.cruise_alt_m, floor_m)  # no floor without the camera
        if reason is not None:
            return await self._refused_look_up(obs, heading, step, altitude_m, reason, outcome, "look_low")
        assert altitude_m is not None
        before = self.bridge.state.rel_alt_m
        down = await executor.descend_to(altitude_m)
        if down.refused is not None:
            return await self._refused_look_up(obs, heading, step, altitude_m, f"safety envelope: {down.refused}",
                                               outcome)
        bottom = self.bridge.state.rel_alt_m
        seen = None
        if down.arrived:
            seen = await self._observe(obs.node, heading, altitude_m)
            seen = await self._camera_view(step, seen, outcome, "low")
            bottom = min(bottom, self.bridge.state.rel_alt_m)
        else:  # not down there in time: what it would read is not the view from altitude_m
            self.event("move_timeout", {"command": "descend", "altitude_m": altitude_m, "error_m": round(down.error_m, 1)})
        vertical = await self._back_to_cruise(executor, before, bottom, "climb")
        if math.isfinite(vertical):
            outcome.flown_m = round(outcome.flown_m + vertical, 1)
        outcome.look_lows += 1
        outcome.look_low_at.append([step, obs.node, altitude_m])
        self.on_progress(f"looked low from {altitude_m:.0f} m at waypoint {obs.node}: "
                         f"{len(seen.pois) if seen else 0} name(s) read; back at cruise")
        return seen if seen is not None else await self._observe(obs.node, heading)

    async def _back_to_cruise(self, executor: FlightExecutor, before: float, extreme: float, command: str) -> float:
        """Back to cruise (a timeout reported as `command`'s): the end of a look-low, of a look-up that did not
        get up there, or the come-down; the vertical metres flown from `before` to `extreme` and back, as
        measured (NaN if the altitude was not reported)."""
        back = await executor.back_to_cruise()
        if not back.arrived:
            self.event("move_timeout", {"command": command, "altitude_m": self.sup.cruise_alt_m,
                                        "error_m": round(back.error_m, 1)})
        return abs(extreme - before) + abs(extreme - self.bridge.state.rel_alt_m)

    async def _refused_look_up(self, obs: WorldObservation, heading: float, step: int, altitude_m: float | None,
                               reason: str, outcome: FlightOutcome, command: str = "") -> WorldObservation:
        """Recorded in the outcome (and as a ``command_refused`` event when `command` says which: the executor
        sends its own); the agent goes on with the cruise view (from cruise: it was not flown)."""
        outcome.refused_look_ups += 1
        shown = altitude_m if altitude_m is None or math.isfinite(altitude_m) else str(altitude_m)
        if command:
            self.event("command_refused", {"command": command, "step": step, "waypoint": obs.node,
                                           "altitude_m": shown, "reason": reason})
        outcome.refused_look_up_at.append([step, obs.node, shown, reason])
        self.on_progress(f"look to {altitude_m} m refused: {reason}")
        return obs if obs.altitude_m is None or self._up_m is not None else await self._observe(obs.node, heading)

    def _maps(self, step: int, folder: Path) -> bool:
        """The agent's landmark and semantic maps of this step: into semantic_images/, the semantic one published."""
        if not self.sup.save_maps and self.publisher is None:
            return False
        from onboard.agent.map_render import encode_png, render_semantic_map, write_maps

        try:
            if self.sup.save_maps:
                semantic = write_maps(self.agent.state, folder, self.mission.name)[1]
            else:
                semantic = encode_png(render_semantic_map(self.agent.state, self.mission.name)[0])
        except Exception:  # a map is a by-product: never let it end a flight
            log.exception("drawing the agent's maps at step %d", step)
            return False
        self.publish("map", MapImage(semantic, step=step, kind="semantic"))
        return True

    async def _finish_analysis(self) -> None:
        """On the ground: the mission analysis (the model's, within its deadline) kept, stored and sent.

        Sent before ``flight_end`` so the ground station folds it into its lessons for this flight.
        """
        if self.agent is None or self.agent.state is None:
            return
        try:
            analysis = await asyncio.to_thread(self.agent.finish_mission)
        except Exception:  # an analysis is a by-product of a flight that is over: never fail the flight for it
            log.exception("mission analysis")
            return
        if analysis is not None:
            self.event("mission_analysis", analysis.to_json())

    async def _wait_for_lessons(self) -> int:
        """After landing: wait for the ground station to deliver this flight's lessons (or time out).

        A fleet member waits the whole time: the ground's courier delivers every member's lessons
        to every member, so the first bundle in is not necessarily this flight's, and meanwhile
        the landed member stays heard on the fleet channel.
        """
        wait = self.sup.lessons_wait_s
        if wait <= 0 or self.sync_server is None:
            return 0
        before = self.sync_server.counters["imported"]
        whole = self.cfg.fleet.enabled
        self.on_progress(f"landed; waiting {'' if whole else 'up to '}{wait:.0f} s for the ground station's lessons")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and (whole or self.sync_server.counters["imported"] == before):
            await asyncio.sleep(0.2)
        got = self.sync_server.counters["imported"] - before
        self.on_progress(f"lessons imported: {got} bundle(s); memory now holds {self.store.count()} experiences"
                         if got else "no lessons arrived")
        return got

    def _write_results(self, folder: Path, outcome: FlightOutcome) -> None:
        flight = {"flight": outcome.to_json()}
        if self.agent is not None and self.agent.state is not None:
            self.agent.write_results(folder, extra=flight)
        else:
            write_episode(folder, [], flight)

    async def close(self) -> None:
        """Stop everything started, each part on its own: one failing to close never keeps another open."""
        if self._state_task is not None:
            self._state_task.cancel()
            self._state_task = None
        if self.fleet_channel is not None:  # before the bridge it feeds
            try:
                self.fleet_channel.close()
                self.event("fleet_counters", self.fleet_channel.counters())
            except Exception:
                log.exception("closing the fleet channel")
        for name, obj in (("status socket", self.status), ("bridge", self.bridge)):
            if obj is not None:
                try:
                    await obj.close()
                except Exception:
                    log.exception("closing the %s", name)
        plan_model = self._plan_model if self._owns_plan_model else None
        for name, obj in (("world link", self._world), ("detector", self.detector), ("camera", self.camera),
                          ("lesson sync", self.sync_server), ("memory", self.store), ("telemetry", self.publisher),
                          ("planner model", plan_model)):
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    log.exception("closing the %s", name)

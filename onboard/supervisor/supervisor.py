"""The onboard supervisor: one process that flies missions with the agent in the loop.

`Supervisor.start` brings up, in this order, the telemetry publisher (journal first, so
nothing after it is lost), the experience memory and the lesson-sync socket, the models
(planner, text reader, detector, when configured), the onboard map, the flight bridge, the
fleet channel (``fleet.enabled``: the other members' reports into the bridge's separation
rule), the state publisher and the status socket (`startup.py`, `health.py`). `fly` then
flies one mission through the mission runner (`onboard.mission.runner.MissionRunner`: the
loop, the looks, the refusals and the accounting, the same code the benchmark scores) over
the MAVSDK vehicle port and the world-feed/map/camera sensor port (`flight_ports.py`), with
the supervisor's hooks around each step (`flight_hooks.py`: telemetry, maps, detections,
the fleet's findings). Whatever ends the mission (arrival, the step budget, SIGTERM, a
failsafe, a person taking over, an exception) the vehicle is brought down (or left to whoever
took it over), ``flight_end`` is published and the flight's results folder and outcome written.

The agent's step runs in a worker thread (`asyncio.to_thread`), so a slow planner model never
stalls the event loop that carries telemetry, the status socket and the bridge; the setpoint
stream has its own thread anyway. Nor does the step wait for the planner model: the plan is
asked on its own thread and adopted at the first step after it arrives (`agent.llm_plan_wait`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from contract.messages import Event, FlightEnd, State, VlmAnswerReport
from contract.results import write_episode
from onboard.config import AerieConfig
from onboard.map.city import landmark_aliases
from onboard.mission.record import MissionEnd
from onboard.mission.runner import MissionLimits, MissionRunner
from onboard.supervisor import startup
from onboard.supervisor.flight_executor import FlightExecutor, MissionAborted
from onboard.supervisor.flight_hooks import FlightHooks
from onboard.supervisor.flight_ports import FlightSensor, FlightVehicle
from onboard.supervisor.health import health_checks, perception_note
from onboard.supervisor.look_around import look_around_for
from onboard.supervisor.look_limits import look_low_floor, look_up_ceiling
from onboard.supervisor.mission import Mission, check_name
from onboard.supervisor.outcome import FlightOutcome, peak_rss_mb, results_folder
from onboard.supervisor.restarting_worker import RestartingWorker
from onboard.supervisor.world_link import WorldLink

log = logging.getLogger("aerie.supervisor")

# Re-exported for callers that import them from here (`aerie fly`, the tests).
__all__ = ["FlightOutcome", "Supervisor", "perception_note", "results_folder"]


def _flight_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


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
        self.vlm: Any = None  # the VLM on the flight path (onboard.inference.vlm_asker) when inference.vlm_model is set
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
        self.frames: Any = None  # the one connection to supervisor.camera (camera_frames.shared_frames)
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

    async def start(self) -> None:
        """Everything a flight needs, in an order where nothing published is ever lost."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        startup.start_telemetry(self)
        startup.open_memory(self)
        note = perception_note(self.sup)
        self.on_progress(note)
        self.event("perception", {"enabled": note.startswith("perception on"), "note": note})
        startup.load_models(self)
        startup.load_map(self)
        if self._world is None:
            self._world = WorldLink(self.sup.world_endpoint, self.sup.world_timeout_s)
        await startup.connect_bridge(self)
        startup.start_fleet_channel(self)
        self._state_task = asyncio.create_task(self._state_loop())
        await self._adopt_airborne()
        if self.sup.status_socket:
            from onboard.supervisor.status_server import StatusServer, vehicle_live

            self.status = await StatusServer(self.data_dir, health_checks(self), lambda: vehicle_live(self.bridge)).start()

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
        t0, finish = time.monotonic(), "land"  # how an ended (not terminated) mission comes down
        outcome = FlightOutcome(flight_id=self.flight_id, mission=mission.name, results_dir=str(folder),
                                perception=self.sup.perception)
        self.outcome = outcome
        executor = FlightExecutor(self.bridge, self.sup, self.event)
        periods_from = len(self.bridge.streamer.periods_s)
        self.agent = None
        self._look = None
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
            flying = asyncio.ensure_future(self._mission(executor, folder, outcome, stop))
            halt = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({flying, halt}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                halt.cancel()
                if not flying.done():  # SIGTERM: abandon the step (a slow model must not delay the landing)
                    flying.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await flying
                    outcome.end = MissionEnd.TERMINATED
            if not flying.cancelled():
                flying.result()  # the mission's own end, or its exception
        except MissionAborted as exc:
            finish = getattr(exc, "finish", "land")  # "rtl": the camera lost (supervisor.camera_lost: return)
            outcome.end, outcome.detail = MissionEnd.ABORTED, str(exc)
            self.event("mission_aborted", {"reason": str(exc)})
        except Exception as exc:
            outcome.end, outcome.detail = MissionEnd.ERROR, f"{type(exc).__name__}: {exc}"
            log.exception("mission failed")
            self.event("mission_error", {"error": outcome.reason})
            raise
        finally:
            terminated = outcome.end is MissionEnd.TERMINATED
            how = self.sup.on_terminate if terminated else finish
            try:
                outcome.landed = await executor.finish(how, wait_s=self.sup.terminate_timeout_s if terminated else None)
            except Exception as exc:  # the autopilot's own failsafes still hold; say so
                outcome.landed = f"could not land: {type(exc).__name__}: {exc}"
                outcome.landing_failed = True
                log.error("%s", outcome.landed)
            if self._look is not None:  # camera perception: what the look-arounds cost
                outcome.look_around_s = [round(x, 2) for x in self._look.seconds]
                outcome.read_ms = [round(x, 1) for x in self._look.read_ms]
                outcome.bad_frames = self._look.bad_frames
                outcome.camera_losses = self._look.frames.losses if self._look.frames is not None else 0
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
                                                    outcome.steps, str(outcome.landed), round(outcome.flown_m, 1)))
                outcome.telemetry_last_seq = self.publisher.last_seq
                self.publisher.flush(5.0)
                outcome.lessons_imported = await self._wait_for_lessons(stop)
        return outcome

    async def _mission(self, executor: FlightExecutor, folder: Path, outcome: FlightOutcome,
                       stop: asyncio.Event) -> None:
        """The agent for this mission, the ports, the hooks, and the runner that flies it."""
        from onboard.agent.agent import GraphAgent

        mission, gazetteer = self.mission, self._gazetteer
        still = self.bridge.failsafe_recovered()  # a previous flight's failsafe ends only on evidence
        if still is not None:
            raise MissionAborted(f"bridge failsafe {still}")
        want_image = self.sup.camera == "world" and self.sup.detect_every_steps > 0
        sensor = FlightSensor(self.bridge, self._world, cruise_alt_m=self.sup.cruise_alt_m, want_image=want_image,
                              onboard_map=self.map, map_source=self._map_source, max_snap_m=self.cfg.map.max_snap_m,
                              progress=self.on_progress)
        first = await sensor.feed(None, 0.0, None)  # on the ground: the moves on offer set the agent's spacing
        if not first.moves:
            raise MissionAborted("no moves on offer at the take-off position: the world feed offers none (a sensor "
                                 "only?) and no onboard map is configured (map.path, aerie fly --map)"
                                 if self.map is None else "the onboard map offers no moves at the take-off position")
        self.agent = (self._agent_factory or GraphAgent)(
            self.cfg.agent, gazetteer, name=self.cfg.agent.planner, memory=self.cfg.memory,
            experience_store=self.store, plan_model=self._plan_model,
            step_spacing_m=statistics.median([m.length for m in first.moves]),
            reader_generate=functools.partial(startup.reader_generate, self), flight_id=self.flight_id,
            aliases=self._aliases, vlm=self.vlm if self.cfg.agent.planner == "vlm" else None)
        known = None
        if self.map is not None:
            from onboard.supervisor.map_waypoints import OffTheMap, knowledge_for

            s = self.bridge.state
            try:
                known = knowledge_for(self.map, s.home_lat, s.home_lon, self.cfg.map.position_uncertainty_m)
            except OffTheMap as exc:
                raise MissionAborted(str(exc)) from None
        # Off the loop: where the parser cannot settle the words, the model reads them (about a second).
        await asyncio.to_thread(self.agent.reset, mission.instruction, 0, known)
        r = self.agent.reading
        if r is not None and r.unsettled:
            log.info("instruction: parser unsettled (%s); read by the %s%s", r.unsettled, r.reader,
                     f" (model refused: {'; '.join(r.model_errors)})" if r.model_errors else "")
        if self.sup.perception == "camera":
            self._look = sensor.look = look_around_for(self, executor, gazetteer, folder)
        step_limit = mission.step_limit or self.sup.step_limit
        limits = MissionLimits(step_limit, self.sup.cruise_alt_m, look_up_ceiling(self.cfg),
                               look_low_floor(self.cfg))
        runner = MissionRunner(self.agent, FlightVehicle(executor, self.event), sensor, limits, start=first.node,
                               hooks=FlightHooks(self, self.agent, folder, outcome, step_limit), record=outcome,
                               stop=stop, offload=asyncio.to_thread, search_only=mission.search_only)
        await runner.run()
        if outcome.end is MissionEnd.ARRIVED:
            outcome.agent_success = bool(self.agent.state.final.mission_success)

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
            self.publish("mission_analysis", analysis.to_message(self.flight_id))

    async def _wait_for_lessons(self, stop: asyncio.Event | None = None) -> int:
        """After landing: wait for the ground station to deliver this flight's lessons (or time out, or a stop).

        SIGTERM (`stop`) ends the wait at once: the outcome is already written, and a service stopped
        here must not run into its stop timeout.

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
            if stop is not None and stop.is_set():
                self.on_progress("stopped while waiting for lessons")
                break
            await asyncio.sleep(0.2)
        got = self.sync_server.counters["imported"] - before
        self.on_progress(f"lessons imported: {got} bundle(s); memory now holds {self.store.count()} experiences"
                         if got else "no lessons arrived")
        return got

    def _write_results(self, folder: Path, outcome: FlightOutcome) -> None:
        flight = {"flight": outcome.to_json()}
        if self.vlm is not None:  # calls per mission and seconds per call; an answer after the last step, on record
            if self.agent is not None and self.agent.state is not None:
                for answer in self.vlm.answers():
                    self.agent.note_vlm(answer)
                    self.event("vlm_answer", VlmAnswerReport.read(answer.to_json()).body())  # after the last step
            flight["vlm"] = self.vlm.summary()
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
        for name, obj in (("world link", self._world), ("detector", self.detector), ("camera frames", self.frames),
                          ("lesson sync", self.sync_server), ("memory", self.store), ("telemetry", self.publisher),
                          ("planner model", plan_model), ("vision-language model", self.vlm)):
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    log.exception("closing the %s", name)

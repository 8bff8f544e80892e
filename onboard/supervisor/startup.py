"""Bringing a supervisor's parts up, each on its own: telemetry, memory, models, map, bridge, fleet channel.

Each function sets the part on the supervisor it is given and says what it did (an event, a
progress line); one that cannot start raises naming what is missing, before anything flies.
The order they are called in is the supervisor's (`Supervisor.start`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from onboard.perception.camera_sightings import PerceptionUnavailable
from onboard.supervisor.restarting_worker import RestartingWorker

log = logging.getLogger("aerie.supervisor")


def start_telemetry(supervisor: Any) -> None:
    if not supervisor.cfg.telemetry.enabled:
        return
    from onboard.telemetry.publisher import TelemetryPublisher

    supervisor.publisher = TelemetryPublisher(supervisor.cfg.telemetry, supervisor.cfg.vehicle_id, data_dir=supervisor.data_dir).start()


def open_memory(supervisor: Any) -> None:
    if not supervisor.sup.use_memory:
        return
    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore
    from onboard.telemetry.settings import resolve_path

    supervisor.embedder = MiniLMEmbedder.load()
    path = resolve_path(supervisor.data_dir, supervisor.cfg.memory.path)
    supervisor.store = ExperienceStore.open(path, supervisor.embedder, supervisor.cfg.memory)
    supervisor.store.warm()  # vectors in memory and prefilters trained now, not on the first in-flight retrieval
    if supervisor.sup.accept_lessons and supervisor.publisher is not None:
        from onboard.telemetry.memory_sync import MemorySyncServer

        supervisor.sync_server = MemorySyncServer(supervisor.cfg.telemetry, data_dir=supervisor.data_dir,
                                            import_fn=lambda bundle: import_lessons(supervisor, bundle),
                                            on_result=supervisor.event).start()


def import_lessons(supervisor: Any, bundle: Path) -> Any:
    """Runs on the sync thread: its own connection to the memory file (WAL, one writer at a time)."""
    from onboard.memory.bundle import import_bundle
    from onboard.memory.experience_store import ExperienceStore
    from onboard.telemetry.settings import resolve_path

    from onboard.agent.mission_lessons import retire_merged

    with ExperienceStore.open(resolve_path(supervisor.data_dir, supervisor.cfg.memory.path), supervisor.embedder,
                              supervisor.cfg.memory) as store:
        # The source stays the bundle's ("bundle:<vehicle_id>"): in a fleet the ground delivers every
        # vehicle's lessons to every vehicle, and whose flight a lesson came from is worth keeping.
        report = import_bundle(store, bundle)
        retire_merged(store)  # a flight's lesson that holds this vehicle's own analysis replaces it
        return report


def reader_generate(supervisor: Any, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
    """The instruction reader's model call: the plan model, loaded on the first description that needs it."""
    if supervisor._plan_model is None:
        from onboard.inference.planner_model import PlannerModel

        supervisor._plan_model = PlannerModel.from_config(supervisor.cfg.inference)
    return supervisor._plan_model.generate_json(messages, schema)


def load_models(supervisor: Any) -> None:
    if supervisor.sup.perception == "camera" and supervisor.text_reader is None:
        from onboard.perception.camera_sightings import open_reader

        supervisor.text_reader = open_reader(supervisor.cfg.inference)  # PerceptionUnavailable naming the file
    if supervisor.cfg.agent.planner == "llm" and supervisor._plan_model is None:
        from onboard.inference.planner_model import PlannerModel

        inference = supervisor.cfg.inference
        if not supervisor.cfg.agent.llm_plan_wait:  # no step waits for the plan: a slow CPU gets longer
            inference = replace(inference, call_deadline_s=max(inference.call_deadline_s,
                                                               supervisor.cfg.agent.llm_plan_deadline_s))
        supervisor._plan_model = PlannerModel.from_config(inference)
    if supervisor.cfg.inference.vlm_model and supervisor.vlm is None:  # off by default; a bad file stops the start
        from onboard.inference.vlm_asker import VlmAsker

        supervisor.vlm = VlmAsker.from_config(supervisor.cfg.inference)
    if supervisor.sup.camera and supervisor.sup.detect_every_steps > 0:
        from onboard.perception.pipeline import build_pipeline
        from onboard.supervisor.camera_frames import camera_intrinsics

        def make_pipeline() -> Any:
            # The intrinsics are fixed per pipeline; frames of another size are resized by the caller.
            return build_pipeline(supervisor.cfg.inference, camera_intrinsics(supervisor.sup))

        supervisor.detector = RestartingWorker("detector", make_pipeline, backoff_s=supervisor.sup.restart_backoff_s,
                                         backoff_max_s=supervisor.sup.restart_backoff_max_s,
                                         max_restarts=supervisor.sup.max_restarts, on_event=supervisor.event,
                                         close=lambda p: p.close())
        supervisor.detector._ensure()  # load now: `aerie status` should report loaded models before take-off
        loaded, detail = supervisor.detector.healthy()
        if not loaded:  # asked for and unloadable: refuse to fly blind rather than say nothing
            raise PerceptionUnavailable(
                f"the configuration asks for perception (supervisor.camera={supervisor.sup.camera!r}, "
                f"detect_every_steps={supervisor.sup.detect_every_steps}) but it cannot load: {detail} "
                f"(inference.manifest={supervisor.cfg.inference.manifest or 'models/manifest.yaml'!r}, "
                f"inference.model_dir={supervisor.cfg.inference.model_dir!r})")


def load_map(supervisor: Any) -> None:
    """The configured onboard map, checked before anything flies; a bad file stops the start, naming it."""
    from onboard.map.map_file import load_map
    from onboard.map.settings import map_file_path

    path = map_file_path(supervisor.cfg.data_dir, supervisor.cfg.map)
    if path is None:
        return
    t0 = time.perf_counter()
    supervisor.map = load_map(path, supervisor.cfg.map.extract_sha256 or None, max_inflated_bytes=supervisor.cfg.map.max_inflated_bytes)
    load_ms = (time.perf_counter() - t0) * 1000.0
    supervisor._map_source = f"map {path.name}"
    g = supervisor.map.graph
    note = (f"onboard map {path}: {g.n_nodes} corridor waypoints, {len(supervisor.map.landmarks)} landmarks, "
            f"loaded in {load_ms:.0f} ms; the world feed is a sensor only")
    log.info("%s", note)
    supervisor.on_progress(note)
    supervisor.event("map", {"path": str(path), "waypoints": g.n_nodes, "landmarks": len(supervisor.map.landmarks),
                       "extract_sha256": supervisor.map.header.extract_sha256, "load_ms": round(load_ms, 1)})


async def connect_bridge(supervisor: Any) -> None:
    from firmware_bridge.bridge import FlightBridge
    from contract.messages import bridge_event_listener

    supervisor.bridge = await FlightBridge.connect(supervisor.cfg.bridge)
    supervisor.bridge.events.add_listener(bridge_event_listener(supervisor.publish))


def start_fleet_channel(supervisor: Any) -> None:
    """With fleet.enabled, tell the other members where this vehicle is and hand theirs to the bridge."""
    if not supervisor.cfg.fleet.enabled:
        return
    from onboard.fleet.channel import FleetChannel, position_from_state
    from onboard.fleet.findings import FleetFindings

    bridge = supervisor.bridge
    supervisor.fleet_findings = FleetFindings(supervisor.cfg.fleet.member_id,
                                        radio_range_m=supervisor.cfg.fleet_channel.findings_max_range_m,
                                        max_age_s=supervisor.cfg.fleet_channel.findings_max_age_s)
    supervisor.fleet_channel = FleetChannel(supervisor.cfg.fleet_channel, supervisor.cfg.fleet.member_id,
                                      lambda: position_from_state(bridge.state, supervisor.cfg.fleet.member_id),
                                      bridge.update_traffic, data_dir=supervisor.data_dir,
                                      own_findings=supervisor.fleet_findings.outgoing,
                                      take_findings=supervisor.fleet_findings.take).start()
    supervisor.event("fleet_channel", {"member_id": supervisor.cfg.fleet.member_id, "endpoint": supervisor.fleet_channel.endpoint,
                                 "peers": [p.endpoint for p in supervisor.cfg.fleet_channel.peers],
                                 "curve": supervisor.cfg.fleet_channel.curve})

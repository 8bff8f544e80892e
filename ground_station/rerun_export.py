"""One flight of the ground station's log as a Rerun recording (``.rrd``) for the Rerun viewer.

The dashboard replays a flight in the browser; an ``.rrd`` replays it offline,
with a time slider over every signal at once, and can be attached to an issue.
It reads the flight log read-only, so it can run beside a live ``aerie ground``.

Everything is logged at the message's own time (timeline ``time``, the
vehicle's ``t_ns``) and its ``seq`` (timeline ``seq``), never at export time,
so exporting the same flight twice gives the same recording. Each payload is
read with its :mod:`contract.messages` class; one that does not decode (or
carries nothing to draw) is counted and skipped: one bad message must not
cost the rest of the flight.

``rerun-sdk`` is imported only here, when an export runs, so the rest of the
ground station works without it.

Entities (3D ones in metres east/north/up of home, see :mod:`.home_frame`):

- ``world/vehicle/position`` (Points3D per state), ``world/vehicle/trajectory``
  (LineStrips3D, static: the whole path), ``vehicle/gps`` (GeoPoints)
- ``vehicle/battery_percent``, ``vehicle/battery_voltage_v``, ``vehicle/altitude_m`` (Scalars)
- ``log/mode`` (TextLog, when mode/armed/in-air change), ``log/events``, ``log/flight``, ``log/plan``
- ``log/agent`` (TextLog per agent step), ``agent/distance_estimate_m`` (Scalars),
  ``world/agent/pose`` (Points3D)
- ``log/detections`` (TextLog), ``world/detections`` (Points3D with labels)
- ``map`` (EncodedImage of each map snapshot PNG)
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from contract.messages import (AgentStep, Detection, Detections, Event, FlightEnd, FlightStart, MapImage,
                               MissionAnalysisReport, PayloadError, Plan, Pose, State, decode_payload)
from ground_station.dashboard.items import json_safe
from ground_station.dashboard.log_reader import open_reader
from ground_station.flight_log import Flight, FlightLog
from ground_station.home_frame import enu_from_home, finite, home_offset_ne

# Event kinds shown as warnings in the viewer's text log.
_WARN_EVENTS = frozenset({"failsafe", "command_refused", "payload_refused", "pattern_stuck"})
_VEHICLE_RGB = (79, 179, 255)
_AGENT_RGB = (255, 160, 60)
_DETECTION_RGB = (230, 60, 90)


class ExportError(RuntimeError):
    """The flight cannot be exported (no log, rerun-sdk missing, the recording cannot be written)."""


class FlightNotFound(ExportError):
    """No flight of that vehicle starts at that seq."""


@dataclass(frozen=True)
class ExportSummary:
    """What went into the recording, so a caller can tell a thin export from a full one."""

    path: Path
    vehicle_id: str
    start_seq: int
    end_seq: int | None
    messages: int
    rows: dict[str, int]           # entity path -> rows logged (a static row counts once)
    malformed: dict[str, int]      # message type -> payloads nothing could be taken from

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "vehicle_id": self.vehicle_id, "start_seq": self.start_seq,
                "end_seq": self.end_seq, "messages": self.messages, "rows": dict(sorted(self.rows.items())),
                "malformed": dict(sorted(self.malformed.items()))}


def find_flight(log: FlightLog, vehicle_id: str, start_seq: int) -> Flight:
    """The flight of ``vehicle_id`` starting at ``start_seq``; the error lists the ones there are."""
    flights = log.flights(vehicle_id)
    for flight in flights:
        if flight.start_seq == start_seq:
            return flight
    have = ", ".join(str(f.start_seq) for f in flights) or "none"
    raise FlightNotFound(f"no flight of vehicle {vehicle_id!r} starts at seq {start_seq} "
                         f"(flights start at: {have}; see `aerie ground show`)")


def export_flight(db_path: str | Path, vehicle_id: str, start_seq: int, out: str | Path) -> ExportSummary:
    """Write the flight as an ``.rrd`` at ``out`` (replaced only once the recording is complete)."""
    reader = open_reader(db_path)
    if reader is None:
        from ground_station.log_db import is_url, redact

        raise ExportError(f"{redact(str(db_path)) if is_url(db_path) else db_path}: no flight log yet")
    try:
        flight = find_flight(reader.log, vehicle_id, start_seq)
        envelopes = list(reader.log.flight_messages(flight))
    finally:
        reader.close()
    try:
        import rerun as rr
    except ModuleNotFoundError as exc:
        raise ExportError("rerun-sdk is not installed (pip install rerun-sdk)") from exc

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    rec = rr.RecordingStream("aerie", recording_id=f"{vehicle_id}-flight-{start_seq}")
    try:
        rec.save(partial)
        rec.set_log_time_enabled(False)     # the flight's own clock only: re-exports are identical
        rec.set_log_tick_enabled(False)
        rec.send_recording_name(f"{vehicle_id} flight {start_seq}")
        rec.send_recording_start_time_nanos(flight.start_t_ns)
        recorder = _FlightRecorder(rr, rec)
        for env in envelopes:
            recorder.add(env)
        recorder.finish()
        rec.flush()
        rec.disconnect()
        os.replace(partial, out)
    except Exception as exc:
        rec.disconnect()
        partial.unlink(missing_ok=True)
        raise ExportError(f"{out}: cannot write the recording ({type(exc).__name__}: {exc})") from exc
    return ExportSummary(out, vehicle_id, start_seq, flight.end_seq, len(envelopes), dict(recorder.rows),
                         dict(recorder.malformed))


def _as_text(value: Any) -> str:
    return json.dumps(json_safe(value), sort_keys=True, ensure_ascii=False)


@dataclass
class _FlightRecorder:
    """Turns one flight's envelopes, in seq order, into log calls on one recording stream."""

    rr: Any                        # the rerun module, imported by the caller
    rec: Any                       # its RecordingStream
    rows: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)
    path: list[tuple[float, float, float]] = field(default_factory=list)
    first_fix: tuple[float, float] | None = None
    home_ne: tuple[float, float] = (0.0, 0.0)
    last_mode: str | None = None

    def add(self, env: Mapping[str, Any]) -> None:
        msg_type = str(env.get("type"))
        self.rec.set_time("seq", sequence=int(env["seq"]))
        self.rec.set_time("time", timestamp=_datetime64_ns(int(env["t_ns"])))
        try:
            payload = decode_payload(msg_type, env.get("payload"))
        except PayloadError:
            self.malformed[msg_type] += 1
            return
        handlers: dict[type, Callable[[Any], bool]] = {
            FlightStart: self._on_flight_start, FlightEnd: self._on_flight_end, State: self._on_state,
            Event: self._on_event, Plan: self._on_plan, AgentStep: self._on_agent_step,
            Detections: self._on_detections, MapImage: self._on_map, MissionAnalysisReport: self._on_analysis}
        if not handlers[type(payload)](payload):
            self.malformed[msg_type] += 1

    def finish(self) -> None:
        if len(self.path) >= 2:
            self._log("world/vehicle/trajectory", self.rr.LineStrips3D([self.path], colors=[_VEHICLE_RGB]),
                      static=True)

    def _log(self, entity: str, archetype: Any, *, static: bool = False) -> None:
        self.rec.log(entity, archetype, static=static)
        self.rows[entity] += 1

    def _text(self, entity: str, text: str, level: str = "INFO") -> None:
        self._log(entity, self.rr.TextLog(text, level=level))

    def _scalar(self, entity: str, value: Any) -> None:
        number = finite(value)
        if number is not None:
            self._log(entity, self.rr.Scalars(number))

    # -- one handler per message type: True if anything could be taken from the payload ----------

    def _on_flight_start(self, payload: FlightStart) -> bool:
        self._text("log/flight", f"flight start: {_as_text(payload.body())}")
        return True

    def _on_flight_end(self, payload: FlightEnd) -> bool:
        self._text("log/flight", f"flight end: {_as_text(payload.body())}")
        return True

    def _on_state(self, state: State) -> bool:
        used = False
        lat, lon = finite(state.lat), finite(state.lon)
        if lat is not None and lon is not None:
            self.first_fix = self.first_fix or (lat, lon)
            self._log("vehicle/gps", self.rr.GeoPoints(lat_lon=[[lat, lon]], colors=[_VEHICLE_RGB]))
            used = True
        self.home_ne = home_offset_ne(state)
        enu = enu_from_home(state, first_fix=self.first_fix)
        if enu is not None:
            self.path.append(enu)
            self._log("world/vehicle/position", self.rr.Points3D([enu], colors=[_VEHICLE_RGB]))
            used = True
        before = sum(self.rows.values())
        self._scalar("vehicle/battery_percent", state.battery_percent)
        self._scalar("vehicle/battery_voltage_v", state.battery_voltage_v)
        altitude = finite(state.rel_alt_m)
        self._scalar("vehicle/altitude_m", altitude if altitude is not None else enu[2] if enu else None)
        used = used or sum(self.rows.values()) > before
        if state.flight_mode != "UNKNOWN" or state.armed:
            mode = (f"mode {state.flight_mode}, {'armed' if state.armed else 'disarmed'}, "
                    f"{'in air' if state.in_air else 'on ground'}")
            if mode != self.last_mode:
                self.last_mode = mode
                self._text("log/mode", mode)
            used = True
        return used

    def _on_event(self, event: Event) -> bool:
        self._text("log/events", f"{event.kind}: {_as_text(event.detail)}",
                   "WARN" if event.kind in _WARN_EVENTS else "INFO")
        return True

    def _on_analysis(self, report: MissionAnalysisReport) -> bool:
        self._text("log/analysis", f"{report.source} {report.status}, key step {report.key_timestep}: {report.text}")
        return True

    def _on_plan(self, plan: Plan) -> bool:
        self._text("log/plan", _as_text(plan.body()))
        return True

    def _on_agent_step(self, step: AgentStep) -> bool:
        text = f"step {step.step} | {step.current_state} | {step.action}: {step.reason}"
        if step.distance_estimate_m is not None:
            text += f" | target ~{step.distance_estimate_m:.1f} m"
        if step.plan_version is not None:
            text += f" | plan v{step.plan_version}" + (f", retrieval {step.retrieval_mode}" if step.retrieval_mode else "")
        self._text("log/agent", text)
        self._scalar("agent/distance_estimate_m", step.distance_estimate_m)
        self._log("world/agent/pose", self.rr.Points3D([_agent_position(step.pose)], colors=[_AGENT_RGB]))
        return True

    def _on_detections(self, payload: Detections) -> bool:
        dets = payload.detections
        if not dets:
            return True
        self._text("log/detections", "; ".join(_detection_text(d) for d in dets))
        home_n, home_e = self.home_ne
        labels, points = [], []
        for d in dets:
            if d.north is not None and d.east is not None:       # same frame as the vehicle: from home
                labels.append(d.label)
                points.append((d.east - home_e, d.north - home_n, 0.0))
        if points:
            self._log("world/detections", self.rr.Points3D(points, labels=labels,
                                                           colors=[_DETECTION_RGB] * len(points)))
        return True

    def _on_map(self, payload: MapImage) -> bool:
        self._log("map", self.rr.EncodedImage(contents=payload.png, media_type="image/png"))
        return True


def _datetime64_ns(t_ns: int) -> Any:
    import numpy as np

    return np.datetime64(t_ns, "ns")


def _agent_position(pose: Pose) -> tuple[float, float, float]:
    """The agent's pose as (east, north, up): its own frame is metres east (x) and north (y) of take-off."""
    return pose.x, pose.y, pose.z


def _detection_text(d: Detection) -> str:
    parts = [d.label, f"{d.score:.2f}", f"bearing {d.bearing_deg:.0f} deg"]
    if d.range_m is not None:
        parts.append(f"{d.range_m:.1f} m")
    return " ".join(parts)

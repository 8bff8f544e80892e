"""One flight of the ground station's log as a Rerun recording (``.rrd``) for the Rerun viewer.

The dashboard replays a flight in the browser; an ``.rrd`` replays it offline,
with a time slider over every signal at once, and can be attached to an issue.
It reads the flight log read-only, so it can run beside a live ``aerie ground``.

Everything is logged at the message's own time (timeline ``time``, the
vehicle's ``t_ns``) and its ``seq`` (timeline ``seq``), never at export time,
so exporting the same flight twice gives the same recording. A payload the
exporter cannot use is counted and skipped: one bad message must not cost the
rest of the flight.

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

from ground_station.dashboard.items import json_safe
from ground_station.dashboard.log_reader import open_reader
from ground_station.flight_log import Flight, FlightLog
from ground_station.home_frame import enu_from_home, finite, home_offset_ne

# Event kinds shown as warnings in the viewer's text log.
_WARN_EVENTS = frozenset({"failsafe", "command_refused", "payload_refused", "pattern_stuck", "pattern_ababa"})
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
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
        raise ExportError(f"{db_path}: no flight log yet")
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
        msg_type, payload = str(env.get("type")), env.get("payload")
        self.rec.set_time("seq", sequence=int(env["seq"]))
        self.rec.set_time("time", timestamp=_datetime64_ns(int(env["t_ns"])))
        handlers: dict[str, Callable[[Any], bool]] = {
            "flight_start": self._on_flight_start, "flight_end": self._on_flight_end, "state": self._on_state,
            "event": self._on_event, "plan": self._on_plan, "agent_step": self._on_agent_step,
            "detections": self._on_detections, "map": self._on_map}
        handler = handlers.get(msg_type)
        if handler is None or not handler(payload):
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

    def _on_flight_start(self, payload: Any) -> bool:
        self._text("log/flight", f"flight start: {_as_text(payload)}")
        return True

    def _on_flight_end(self, payload: Any) -> bool:
        self._text("log/flight", f"flight end: {_as_text(payload)}")
        return True

    def _on_state(self, payload: Any) -> bool:
        if not isinstance(payload, dict):
            return False
        used = False
        lat, lon = finite(payload.get("lat")), finite(payload.get("lon"))
        if lat is not None and lon is not None:
            self.first_fix = self.first_fix or (lat, lon)
            self._log("vehicle/gps", self.rr.GeoPoints(lat_lon=[[lat, lon]], colors=[_VEHICLE_RGB]))
            used = True
        self.home_ne = home_offset_ne(payload)
        enu = enu_from_home(payload, first_fix=self.first_fix)
        if enu is not None:
            self.path.append(enu)
            self._log("world/vehicle/position", self.rr.Points3D([enu], colors=[_VEHICLE_RGB]))
            used = True
        before = sum(self.rows.values())
        self._scalar("vehicle/battery_percent", payload.get("battery_percent"))
        self._scalar("vehicle/battery_voltage_v", payload.get("battery_voltage_v"))
        altitude = finite(payload.get("rel_alt_m"))
        self._scalar("vehicle/altitude_m", altitude if altitude is not None else enu[2] if enu else None)
        used = used or sum(self.rows.values()) > before
        if "flight_mode" in payload or "armed" in payload:
            mode = (f"mode {payload.get('flight_mode', '?')}, {'armed' if payload.get('armed') else 'disarmed'}, "
                    f"{'in air' if payload.get('in_air') else 'on ground'}")
            if mode != self.last_mode:
                self.last_mode = mode
                self._text("log/mode", mode)
            used = True
        return used

    def _on_event(self, payload: Any) -> bool:
        if not isinstance(payload, dict) or not isinstance(payload.get("kind"), str):
            return False
        kind = payload["kind"]
        self._text("log/events", f"{kind}: {_as_text(payload.get('detail'))}",
                   "WARN" if kind in _WARN_EVENTS else "INFO")
        return True

    def _on_plan(self, payload: Any) -> bool:
        if not isinstance(payload, dict):
            return False
        self._text("log/plan", _as_text(payload))
        return True

    def _on_agent_step(self, payload: Any) -> bool:
        if not isinstance(payload, dict) or not isinstance(payload.get("decision"), dict):
            return False
        decision = payload["decision"]
        distance = finite(payload.get("distance_estimate_m"))
        text = (f"step {payload.get('step', '?')} | {payload.get('current_state', '')} | "
                f"{decision.get('action', '')}: {decision.get('reason', '')}")
        if distance is not None:
            text += f" | target ~{distance:.1f} m"
        self._text("log/agent", text)
        self._scalar("agent/distance_estimate_m", distance)
        pose = _agent_position(payload.get("pose"))
        if pose is not None:
            self._log("world/agent/pose", self.rr.Points3D([pose], colors=[_AGENT_RGB]))
        return True

    def _on_detections(self, payload: Any) -> bool:
        items = payload.get("detections") if isinstance(payload, dict) else None
        if not isinstance(items, list):
            return False
        dets = [d for d in items if isinstance(d, dict)]
        if not dets:
            return not items
        self._text("log/detections", "; ".join(_detection_text(d) for d in dets))
        home_n, home_e = self.home_ne
        labels, points = [], []
        for d in dets:
            north, east = finite(d.get("north")), finite(d.get("east"))
            if north is not None and east is not None:       # same frame as the vehicle: from home
                labels.append(str(d.get("label", "?")))
                points.append((east - home_e, north - home_n, 0.0))
        if points:
            self._log("world/detections", self.rr.Points3D(points, labels=labels,
                                                           colors=[_DETECTION_RGB] * len(points)))
        return True

    def _on_map(self, payload: Any) -> bool:
        png = payload.get("png") if isinstance(payload, dict) else None
        if not isinstance(png, bytes) or not png.startswith(_PNG_MAGIC):
            return False
        self._log("map", self.rr.EncodedImage(contents=png, media_type="image/png"))
        return True


def _datetime64_ns(t_ns: int) -> Any:
    import numpy as np

    return np.datetime64(t_ns, "ns")


def _agent_position(pose: Any) -> tuple[float, float, float] | None:
    """The agent's pose as (east, north, up): ``{x, y, z}`` (step_report), ``{east, north}`` or ``[x, y, z, yaw]``."""
    if isinstance(pose, list) and len(pose) >= 2:
        pose = dict(zip(("x", "y", "z"), pose))
    if not isinstance(pose, dict):
        return None
    east = finite(pose.get("x", pose.get("east")))
    north = finite(pose.get("y", pose.get("north")))
    if east is None or north is None:
        return None
    return east, north, finite(pose.get("z", pose.get("up"))) or 0.0


def _detection_text(d: Mapping[str, Any]) -> str:
    parts = [str(d.get("label", "?"))]
    score, bearing, rng = finite(d.get("score")), finite(d.get("bearing_deg")), finite(d.get("range_m"))
    if score is not None:
        parts.append(f"{score:.2f}")
    if bearing is not None:
        parts.append(f"bearing {bearing:.0f} deg")
    if rng is not None:
        parts.append(f"{rng:.1f} m")
    return " ".join(parts)

"""``event``: something happened (a failsafe, a refused command, a mission refused, a worker restarted, ...).

``kind`` is one of :data:`EVENT_KINDS`, the one registry of what the runtime
emits: the vehicle's publisher refuses any other (:func:`check_kind`), so a
new kind is added here, with its meaning, or it fails the test that emits it;
a test reads the source for every kind emitted and checks both ways. A reader
still shows a kind it does not know (a newer vehicle's), so decoding does not
refuse one. ``detail`` is a free-form map of what the emitter knew: shown and
stored, never computed with (what the ground computes with has its own
message type, such as ``mission_analysis``). ``t`` is the emitter's own clock
when it differs from the envelope's, and ``source`` says which part emitted it
("bridge" for the flight bridge's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from contract.payloads.base import Payload, Reader, plain

# The flight bridge's, through its event fan-out (firmware_bridge/).
_BRIDGE: dict[str, str] = {
    "armed": "the vehicle armed", "disarmed": "the vehicle disarmed",
    "takeoff": "MAVSDK's in-air flag rose", "landed": "MAVSDK's in-air flag fell",
    "mode_change": "the flight mode changed (from, to)",
    "failsafe": "PX4 activated a failsafe", "failsafe_cleared": "the bridge's failsafe latch was cleared",
    "link_lost": "no heartbeat within the timeout", "link_restored": "heartbeats again",
    "battery_warn": "battery below the warning level", "battery_return": "battery low: returning",
    "battery_land": "battery critical: landing",
    "geofence_set": "the geofence was uploaded", "command_refused": "a command refused (bridge or autopilot)",
    "intent_stale": "the setpoint intent went stale: holding",
    "stream_stalled": "offboard lost to the own stale stream, taken back (count, mode)",
    "traffic_rejected": "a fleet member's position report was refused",
    "separation_refused": "a setpoint refused for separation",
    "fleet_channel_silent": "no fleet report within the timeout", "fleet_channel_restored": "fleet reports again",
    "separation_clear": "separation: no conflict", "separation_layer": "separation: flying on the own layer",
    "separation_climb": "separation: climbing to the own layer", "separation_hold": "separation: holding",
    "separation_fallback": "separation: fleet silent, on the own layer",
    "separation_fallback_climb": "separation: fleet silent, climbing to the own layer where it stands",
    "gimbal_command": "a command to the camera gimbal (take control, set angles) and its result",
    "gimbal_attitude": "where a gimbal pointing ended: the reported attitude, reached or not, and its track",
    "gimbal_silent": "the gimbal stopped reporting its attitude", "gimbal_restored": "the gimbal reports again",
}
# The supervisor's and the parts it runs (onboard/).
_SUPERVISOR: dict[str, str] = {
    "map": "the onboard map loaded", "perception": "what perception runs", "camera_perception": "camera reading set up",
    "fleet_channel": "the fleet channel opened", "fleet_counters": "the fleet channel's counters at the end",
    "instruction_understood": "how the instruction was read", "mission_refused": "the instruction was refused",
    "mission_aborted": "the mission was aborted", "mission_error": "the mission ended with an error",
    "move_timeout": "a leg was not completed in time", "bad_frame": "a camera frame was refused",
    "camera_lost": "the camera (supervisor.camera) stopped delivering frames",
    "camera_restored": "the camera delivers frames again",
    "agent_paused": "the link was lost: the agent waits", "agent_resumed": "the link is back: the agent goes on",
    "taken_over": "a person took over (mode switched)", "left_offboard": "offboard left after landing",
    "landing_moved": "the landing spot moved away from fleet members",
    "adopted_airborne": "already airborne at start: sent home or landed",
    "stop_airborne": "stopped while airborne: brought down",
    "vlm_answer": "the vision-language model answered (kind, step of its frame, seconds, what it said)",
    "worker_crashed": "an inference worker crashed", "worker_restarted": "an inference worker was restarted",
    "lessons_imported": "a lesson bundle was imported", "lessons_refused": "a lesson bundle was refused",
}
# The telemetry publisher's own, and its benchmark's.
_TELEMETRY: dict[str, str] = {
    "payload_refused": "a message too large to send", "bench_warmup": "the telemetry benchmark's first message",
}
# The scripted flight check's (sim/flight_check.py), when its lines go to a dashboard.
_CHECK: dict[str, str] = {"flight_check": "one step of the flight check"}
# The dashboard demo's (sim/dashboard_demo.py): a scripted flight that shows every panel.
_DEMO: dict[str, str] = {
    "mission_start": "the demo's mission started", "mission_end": "the demo's mission ended",
    "place_created": "the demo's place", "anchor_created": "the demo's anchor", "pattern_stuck": "the demo's pattern",
}

EVENT_KINDS: Mapping[str, str] = {**_BRIDGE, **_SUPERVISOR, **_TELEMETRY, **_CHECK, **_DEMO}


class UnknownEventKind(ValueError):
    """An event of a kind the registry does not name: add it to EVENT_KINDS, with its meaning."""


def check_kind(kind: str) -> str:
    if kind not in EVENT_KINDS:
        raise UnknownEventKind(f"event kind {kind!r} is not in contract.payloads.event.EVENT_KINDS")
    return kind


@dataclass(frozen=True)
class Event(Payload):
    MSG_TYPE: ClassVar[str] = "event"
    SCHEMA_VERSION: ClassVar[int] = 1

    kind: str
    detail: dict[str, Any] | None = None
    t: float | None = None
    source: str = ""

    @classmethod
    def of(cls, kind: str, detail: Any = None, *, t: float | None = None, source: str = "") -> "Event":
        """From a producer's values: a detail that is not a map is wrapped as ``{"value": ...}``."""
        d = plain(detail)
        if d is not None and not isinstance(d, dict):
            d = {"value": d}
        return cls(str(kind), d, None if t is None else float(t), source)

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "detail": self.detail}
        if self.t is not None:
            out["t"] = self.t
        if self.source:
            out["source"] = self.source
        return out

    @classmethod
    def _from(cls, r: Reader) -> "Event":
        return cls(kind=r.text("kind", non_empty=True), detail=r.mapping("detail"), t=r.opt_number("t", lo=0.0),
                   source=r.text("source", ""))

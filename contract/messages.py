"""The telemetry message payloads: one frozen, versioned dataclass per message type.

As PX4's modules share uORB message definitions and MAVSDK hands every plugin
typed structs, the vehicle builds these and the ground station reads them back
through :func:`decode_payload`; nobody builds or reads a payload by string key.
Each class (in :mod:`contract.payloads`) has ``MSG_TYPE``, ``SCHEMA_VERSION``,
``encode() -> dict`` (msgpack-ready, with the version under ``"v"``) and
``decode(d)``, which refuses an unknown version, a missing field, a wrong type
or an out-of-range number with a :class:`PayloadError` naming the message type
and the field. Unknown keys are ignored (see :mod:`contract.payloads.base`).
"""

from __future__ import annotations

from typing import Any, Callable

from contract.envelope import MESSAGE_TYPES
from contract.payloads.analysis import MissionAnalysisReport
from contract.payloads.agent_step import (REGION_BOUND_M, REGION_MOST_VERTICES, AgentStep, Anchor, AnchorGraph,
                                         Movement, Place, Pose, SearchRegion)
from contract.payloads.base import Payload, PayloadError, plain
from contract.payloads.detections import Detection, Detections
from contract.payloads.event import EVENT_KINDS, Event
from contract.payloads.flight import FlightEnd, FlightStart
from contract.payloads.map import PNG_MAGIC, MapImage
from contract.payloads.plan import LlmPlanCall, Plan, PlanStep, RetrievedLesson
from contract.payloads.state import State
from contract.payloads.vlm_answer import VlmAnswerReport

__all__ = ["AgentStep", "Anchor", "AnchorGraph", "Detection", "Detections", "EVENT_KINDS", "Event", "FlightEnd",
           "FlightStart", "LlmPlanCall", "MapImage", "MissionAnalysisReport", "Movement", "PAYLOAD_TYPES", "PNG_MAGIC", "Payload",
           "PayloadError", "Place", "Plan", "PlanStep", "Pose", "REGION_BOUND_M", "REGION_MOST_VERTICES", "RetrievedLesson", "SearchRegion",
           "State", "VlmAnswerReport", "bridge_event_listener",
           "decode_payload", "plain"]

# Message type -> its payload class; the envelope's MESSAGE_TYPES, each with its schema.
PAYLOAD_TYPES: dict[str, type[Payload]] = {cls.MSG_TYPE: cls for cls in (
    State, Event, AgentStep, Detections, Plan, MapImage, FlightStart, FlightEnd, MissionAnalysisReport)}
assert set(PAYLOAD_TYPES) == MESSAGE_TYPES, "every envelope message type needs its payload class"


def decode_payload(msg_type: str, data: Any) -> Payload:
    """The typed payload of a message of ``msg_type``; raises :class:`PayloadError`."""
    cls = PAYLOAD_TYPES.get(msg_type)
    if cls is None:
        raise PayloadError(str(msg_type), "(type)", f"unknown message type {msg_type!r}", reason="unknown_type")
    return cls.decode(data)


def bridge_event_listener(publish: Callable[[str, Any], Any]) -> Callable[[Any], None]:
    """A listener for ``bridge.events.add_listener``: each ``BridgeEvent(kind, detail, t)`` becomes an event.

    ``publish`` is usually ``publisher.publish``; the bridge's events are taken by shape,
    so this package need not import the bridge.
    """
    def listener(ev: Any) -> None:
        t = getattr(ev, "t", None)
        publish("event", Event.of(str(getattr(ev, "kind", "bridge")), getattr(ev, "detail", None),
                                  t=t if isinstance(t, (int, float)) else None, source="bridge"))
    return listener

"""Payload builders: plain dicts for each message type, from the runtime's own objects.

The telemetry core does not import the flight bridge or the agent; these
helpers take their objects by shape (dataclasses, enums, attributes) so the
supervisor can hand over ``bridge.state`` or a ``BridgeEvent`` directly.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Mapping

# Event kinds the runtime emits (payload of an "event" message is {kind, detail}).
EVENT_KINDS: frozenset[str] = frozenset({
    "mission_start", "mission_end", "failsafe", "command_refused", "place_created", "anchor_created",
    "pattern_ababa", "pattern_stuck", "fallback_used", "payload_refused",
})


def plain(value: Any) -> Any:
    """A msgpack-friendly copy: dataclasses to dicts, enums to names, tuples to lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return str(value)


def state_payload(state: Any) -> dict[str, Any]:
    """A ``VehicleState``-like dataclass (or mapping) as a plain dict."""
    out = plain(state)
    if not isinstance(out, dict):
        raise TypeError(f"state must be a dataclass or mapping, got {type(state).__name__}")
    return out


def event_payload(kind: str, detail: Any = None, *, t: float | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": str(kind), "detail": plain(detail)}
    if t is not None:
        payload["t"] = float(t)
    return payload


def agent_step_payload(*, step: int, current_state: str, action: str, reason: str,
                       pose: Mapping[str, float] | Any, distance_estimate_m: float | None,
                       **extra: Any) -> dict[str, Any]:
    """One FrameLog entry: what the agent saw, what it decided and why, where it thinks it is."""
    return {"step": int(step), "current_state": current_state, "decision": {"action": action, "reason": reason},
            "pose": plain(pose), "distance_estimate_m": distance_estimate_m, **plain(extra)}


def map_payload(png: bytes, *, step: int | None = None, **extra: Any) -> dict[str, Any]:
    return {"png": bytes(png), "step": step, **plain(extra)}


def bridge_event_listener(publish_event: Callable[[str, Any], Any]) -> Callable[[Any], None]:
    """A listener for ``bridge.events.add_listener``: each ``BridgeEvent(kind, detail, t)`` becomes an event.

    ``publish_event`` is usually ``publisher.event``.
    """
    def listener(ev: Any) -> None:
        publish_event(str(getattr(ev, "kind", "bridge")), {"detail": plain(getattr(ev, "detail", None)),
                                                          "t": getattr(ev, "t", None), "source": "bridge"})
    return listener

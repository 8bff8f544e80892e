"""``event``: something happened (mission start/end, failsafe, refused command, a new place, ...).

``kind`` is open-ended: the bridge, the supervisor and the agent each add
kinds, and a reader that does not know one still shows it. ``detail`` is a
free-form map of what the emitter knew (shown, stored, never computed with);
``t`` is the emitter's own clock when it differs from the envelope's, and
``source`` says which part emitted it ("bridge" for the flight bridge's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader, plain

# Kinds the runtime itself names; others (from the bridge) are welcome too.
EVENT_KINDS: frozenset[str] = frozenset({
    "mission_start", "mission_end", "failsafe", "command_refused", "place_created", "anchor_created",
    "pattern_ababa", "pattern_stuck", "fallback_used", "payload_refused",
})


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

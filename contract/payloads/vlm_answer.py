"""The ``vlm_answer`` event's detail, typed: one answer of the vision-language model, as the ground reads it.

An answer travels as an ``event`` of kind ``vlm_answer`` (the one registry of what the runtime emits
stays :data:`contract.payloads.event.EVENT_KINDS`), but the ground counts these and shows the latest,
so the detail has a schema: the vehicle checks it through :meth:`VlmAnswerReport.read` before it sends it, the ground
reads it back through :meth:`VlmAnswerReport.from_event`, which refuses a detail that does not fit
with a :class:`PayloadError` naming the field, never guessing at a half-read answer.

``kind`` is the question asked: ``caption``, ``confirm`` (does this frame show the goal) or the
expert's strategy (``navigate``, ``search``) for the ``vlm`` planner's decisions; a reader shows a
kind it does not know. ``step`` is the step whose frame the model saw, ``delivered_step`` the step
the answer was handed to the agent before (None: after the last step). ``used_fallback`` says the
answer did not fit its contract and the geometric decision (or "not seen") stood in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import PayloadError, Reader
from contract.payloads.event import Event

# What the ground keeps of an answer's words: the vehicle already cuts them to this (VlmAnswer.to_json).
TEXT_MOST = 200
ERROR_MOST = 160


@dataclass(frozen=True)
class VlmAnswerReport:
    EVENT_KIND: ClassVar[str] = "vlm_answer"

    kind: str
    step: int
    seconds: float
    text: str = ""
    used_fallback: bool = False
    errors: tuple[str, ...] = ()
    delivered_step: int | None = None

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "step": self.step, "seconds": self.seconds, "text": self.text,
                               "used_fallback": self.used_fallback, "delivered_step": self.delivered_step}
        if self.errors:
            out["errors"] = list(self.errors)
        return out

    @classmethod
    def read(cls, detail: Any) -> "VlmAnswerReport":
        """From an answer's map (``VlmAnswer.to_json()`` with ``delivered_step``, or a received detail)."""
        r = Reader("event:vlm_answer", detail, "detail.")
        return cls(kind=r.text("kind", non_empty=True), step=r.integer("step", lo=0),
                   seconds=r.number("seconds", lo=0.0), text=r.text("text", "")[:TEXT_MOST],
                   used_fallback=r.flag("used_fallback", False),
                   errors=tuple(e[:ERROR_MOST] for e in r.texts("errors", ())),
                   delivered_step=r.opt_integer("delivered_step", lo=0))

    @classmethod
    def from_event(cls, event: Event) -> "VlmAnswerReport":
        """The answer an event carries; a :class:`PayloadError` if it is not a ``vlm_answer`` or does not fit."""
        if event.kind != cls.EVENT_KIND:
            raise PayloadError("event", "kind", f"not a {cls.EVENT_KIND} event: {event.kind!r}", reason="bad_field")
        return cls.read(event.detail)


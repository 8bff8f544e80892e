"""``mission_analysis``: the vehicle's own end-of-mission analysis, as the ground station folds it into a lesson.

The vehicle (``onboard/agent/mission_analysis.py``) writes it when a mission
ends: who wrote it (``model``, ``rule`` when no model was asked, ``fallback``
when the model failed), the outcome, the step that decided it and why, the
strategies of the plan to fly next time, and the sentence that went into the
flight's reflection. The ground's post-flight analyser reads a model's
analysis into the lesson it writes (``ground_station/flight_analysis.py``);
it is computed with, so it is a message of its own, not an event's detail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader

SOURCES = ("model", "rule", "fallback")
STATUSES = ("success", "failure")
MAX_STEP = 1_000_000
MAX_TEXT_CHARS = 4000
MAX_PLAN_STEPS = 16
MAX_ERRORS = 32
MAX_SECONDS = 86_400.0


def one_of(r: Reader, key: str, allowed: tuple[str, ...]) -> str:
    value = r.text(key)
    if value not in allowed:
        raise r.fail(key, f"{value[:40]!r} is not one of {list(allowed)}", "out_of_range")
    return value


def bounded_texts(r: Reader, key: str, most: int, chars: int = MAX_TEXT_CHARS) -> tuple[str, ...]:
    items = r.texts(key, ())
    if len(items) > most:
        raise r.fail(key, f"more than {most} items", "out_of_range")
    if any(len(t) > chars for t in items):
        raise r.fail(key, f"an item is longer than {chars} characters", "out_of_range")
    return items


@dataclass(frozen=True)
class MissionAnalysisReport(Payload):
    MSG_TYPE: ClassVar[str] = "mission_analysis"
    SCHEMA_VERSION: ClassVar[int] = 1

    source: str                           # model | rule | fallback
    status: str                           # success | failure
    key_timestep: int
    reason: str = ""
    refined_plan: tuple[str, ...] = ()    # the strategies of the plan to fly next time
    text: str = ""                        # the reflection written into the flight's window
    errors: tuple[str, ...] = ()
    seconds: float = 0.0
    flight_id: str = ""                   # the flight it analyses (FlightStart.flight_id)

    def body(self) -> dict[str, Any]:
        return {"source": self.source, "status": self.status, "key_timestep": self.key_timestep,
                "reason": self.reason, "refined_plan": list(self.refined_plan), "text": self.text,
                "errors": list(self.errors), "seconds": self.seconds, "flight_id": self.flight_id}

    @classmethod
    def _from(cls, r: Reader) -> "MissionAnalysisReport":
        return cls(source=one_of(r, "source", SOURCES), status=one_of(r, "status", STATUSES),
                   key_timestep=r.integer("key_timestep", lo=0, hi=MAX_STEP),
                   reason=r.text("reason", "")[:MAX_TEXT_CHARS],
                   refined_plan=bounded_texts(r, "refined_plan", MAX_PLAN_STEPS, 40),
                   text=r.text("text", "")[:MAX_TEXT_CHARS], errors=bounded_texts(r, "errors", MAX_ERRORS),
                   seconds=r.number("seconds", 0.0, lo=0.0, hi=MAX_SECONDS), flight_id=r.text("flight_id", "")[:200])

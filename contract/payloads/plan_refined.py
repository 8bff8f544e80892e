"""``plan_refined``: the lesson's plan for next time, as a strategic-plan record carries it.

A :class:`contract.records.StrategicPlan` keeps it as JSON text (the record's
fields are strings, stored and bundled as they are); this is that text's one
schema. The ground station's post-flight analyser writes it
(``ground_station/flight_analysis.py``) with the plan flown, where that flight
put the goal (``goal``: where it read the goal's name, or on failure the
estimate it searched in vain) and the landmark map it fused, both in *that*
flight's take-off frame, the step to avoid on a failure, and the vehicle's own
model analysis (``onboard``, keyed by the flight id by which the vehicle
retires its own record of it). The vehicle writes one for its model's
analysis (``onboard/agent/mission_lessons.py``) and reads positions from it
(``onboard/agent/experience_prior.py``).

Records older than this schema hold unversioned JSON: a map of the same keys
(with ``plan``, or a goal that is a place), or the plain plan (whose ``goal`` is text). :meth:`RefinedPlan.from_text` reads those as what they
were; anything else, and a version it was not written for, is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from contract.payloads.base import VERSION_KEY, Payload, PayloadError, Reader

GOAL_SOURCES = ("name read", "estimate")
# Positions are metres of a take-off frame: a city, with room to spare.
MAX_OFFSET_M = 1_000_000.0
MAX_STEP = 1_000_000
MAX_TEXT_CHARS = 4000
MAX_LANDMARKS = 10_000


@dataclass(frozen=True)
class GoalFix:
    xy_m: tuple[float, float]
    source: str            # "name read" | "estimate"

    def body(self) -> dict[str, Any]:
        return {"xy_m": list(self.xy_m), "source": self.source}

    @classmethod
    def read(cls, r: Reader) -> "GoalFix":
        xy = r.xy("xy_m")
        if xy is None:
            raise r.fail("xy_m", "missing", "missing_field")
        _bounded_xy(r, "xy_m", xy)
        source = r.text("source")
        if source not in GOAL_SOURCES:
            raise r.fail("source", f"{source[:40]!r} is not one of {list(GOAL_SOURCES)}", "out_of_range")
        return cls(xy, source)


@dataclass(frozen=True)
class AvoidStep:
    """The failed flight's key step and its move (to avoid there), or the move to prefer."""

    at_step: int
    avoid: str | None = None
    prefer: str | None = None

    def body(self) -> dict[str, Any]:
        return {"at_step": self.at_step, "avoid": self.avoid, "prefer": self.prefer}

    @classmethod
    def read(cls, r: Reader) -> "AvoidStep":
        return cls(r.integer("at_step", lo=0, hi=MAX_STEP), r.opt_text("avoid"), r.opt_text("prefer"))


@dataclass(frozen=True)
class OnboardLesson:
    """The vehicle's own model analysis of the flight, as the ground folded it in."""

    flight_id: str
    key_timestep: int | None = None
    reason: str = ""
    refined_plan: tuple[str, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"flight_id": self.flight_id, "key_timestep": self.key_timestep, "reason": self.reason,
                "refined_plan": list(self.refined_plan)}

    @classmethod
    def read(cls, r: Reader) -> "OnboardLesson":
        return cls(r.text("flight_id", "")[:200], r.opt_integer("key_timestep", lo=0, hi=MAX_STEP),
                   (r.opt_text("reason") or "")[:MAX_TEXT_CHARS], r.texts("refined_plan", ()))


def _bounded_xy(r: Reader, key: str, xy: tuple[float, float]) -> None:
    if not all(-MAX_OFFSET_M <= v <= MAX_OFFSET_M for v in xy):
        raise r.fail(key, f"{xy} is beyond {MAX_OFFSET_M:g} m of take-off", "out_of_range")


@dataclass(frozen=True)
class RefinedPlan(Payload):
    MSG_TYPE: ClassVar[str] = "plan_refined"
    SCHEMA_VERSION: ClassVar[int] = 1

    plan: Any = None                                    # the plan to fly next time (a plan's map, as flown)
    goal: GoalFix | None = None
    landmarks: dict[str, tuple[float, float]] = field(default_factory=dict)
    avoid: tuple[AvoidStep, ...] = ()
    onboard: OnboardLesson | None = None
    key_timestep: int | None = None                     # the onboard analysis's own key step (its record)

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"plan": self.plan}
        if self.goal is not None:
            out["goal"] = self.goal.body()
        if self.landmarks:
            out["landmarks"] = {n: list(xy) for n, xy in sorted(self.landmarks.items())}
        if self.avoid:
            out["avoid"] = [a.body() for a in self.avoid]
        if self.onboard is not None:
            out["onboard"] = self.onboard.body()
        if self.key_timestep is not None:
            out["key_timestep"] = self.key_timestep
        return out

    @classmethod
    def _from(cls, r: Reader) -> "RefinedPlan":
        landmarks = r.xy_map("landmarks") or {}
        if len(landmarks) > MAX_LANDMARKS:
            raise r.fail("landmarks", f"more than {MAX_LANDMARKS}", "out_of_range")
        for name, xy in landmarks.items():
            _bounded_xy(r, f"landmarks.{name}", xy)
        return cls(plan=r.data.get("plan"), goal=r.nested("goal", GoalFix.read), landmarks=landmarks,
                   avoid=r.each("avoid", AvoidStep.read, ()), onboard=r.nested("onboard", OnboardLesson.read),
                   key_timestep=r.opt_integer("key_timestep", lo=0, hi=MAX_STEP))

    def to_text(self) -> str:
        """The record's ``plan_refined`` field."""
        return json.dumps(self.encode(), sort_keys=True, allow_nan=False)

    @classmethod
    def from_text(cls, text: str) -> "RefinedPlan":
        """A record's ``plan_refined``; PayloadError when it is not one (JSON or not)."""
        try:
            doc = json.loads(text or "null")
        except (TypeError, ValueError) as exc:
            raise PayloadError(cls.MSG_TYPE, "(text)", f"not JSON: {str(exc)[:80]}", reason="malformed") from exc
        if isinstance(doc, dict) and VERSION_KEY not in doc:   # written before the schema: read as it was
            refined = "plan" in doc or isinstance(doc.get("goal"), dict)   # a plain plan's goal is its text
            doc = {**doc, VERSION_KEY: 1} if refined else {VERSION_KEY: 1, "plan": doc}
        elif not isinstance(doc, dict):
            doc = {VERSION_KEY: 1, "plan": doc}
        return cls.decode(doc)

"""``plan``: the agent's current long-term plan, published when it or its source changes.

``llm`` is there with the llm planner: the model's plan call (asked at
``requested_step``, answered at ``answered_step``, adopted at ``adopted_step``),
so a slow model shows as steps flown on the fallback plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader


@dataclass(frozen=True)
class PlanStep:
    goal: str
    strategy: str            # navigate | search | locate
    desired_state: str = ""

    def body(self) -> dict[str, Any]:
        return {"goal": self.goal, "strategy": self.strategy, "desired_state": self.desired_state}

    @classmethod
    def read(cls, r: Reader) -> "PlanStep":
        return cls(r.text("goal"), r.text("strategy"), r.text("desired_state", ""))


@dataclass(frozen=True)
class RetrievedLesson:
    """A past lesson the plan was made with."""

    uid: str
    similarity: float
    status: str

    def body(self) -> dict[str, Any]:
        return {"uid": self.uid, "similarity": self.similarity, "status": self.status}

    @classmethod
    def read(cls, r: Reader) -> "RetrievedLesson":
        return cls(r.text("uid"), r.number("similarity", lo=-1.0, hi=1.0), r.text("status"))


@dataclass(frozen=True)
class LlmPlanCall:
    wait: bool
    requested_step: int
    source: str
    answered_step: int | None = None
    adopted_step: int | None = None
    call_s: float | None = None

    def body(self) -> dict[str, Any]:
        return {"wait": self.wait, "requested_step": self.requested_step, "answered_step": self.answered_step,
                "adopted_step": self.adopted_step, "call_s": self.call_s, "source": self.source}

    @classmethod
    def read(cls, r: Reader) -> "LlmPlanCall":
        return cls(r.flag("wait"), r.integer("requested_step", lo=0), r.text("source"),
                   r.opt_integer("answered_step", lo=0), r.opt_integer("adopted_step", lo=0),
                   r.opt_number("call_s", lo=0.0))


@dataclass(frozen=True)
class Plan(Payload):
    MSG_TYPE: ClassVar[str] = "plan"
    SCHEMA_VERSION: ClassVar[int] = 1

    goal: str
    steps: tuple[PlanStep, ...]
    source: str = ""                          # geometric | llm | llm-fallback | ...
    reason: str = ""
    errors: tuple[str, ...] = ()
    retrieved: tuple[RetrievedLesson, ...] = ()
    llm: LlmPlanCall | None = None

    def body(self) -> dict[str, Any]:
        return {"goal": self.goal, "source": self.source, "errors": list(self.errors),
                "retrieved": [r.body() for r in self.retrieved], "steps": [s.body() for s in self.steps],
                "reason": self.reason, "llm": None if self.llm is None else self.llm.body()}

    @classmethod
    def _from(cls, r: Reader) -> "Plan":
        return cls(goal=r.text("goal"), steps=r.each("steps", PlanStep.read), source=r.text("source", ""),
                   reason=r.text("reason", ""), errors=r.texts("errors", ()),
                   retrieved=r.each("retrieved", RetrievedLesson.read, ()), llm=r.nested("llm", LlmPlanCall.read))

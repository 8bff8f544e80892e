"""``flight_start`` and ``flight_end``: the brackets the ground station cuts its log into flights by.

The ground opens a flight at ``flight_start`` whatever its payload says (the
bracket is the message itself); the payload is what the flight was (mission,
instruction, home) and how it ended (the agent's verdict, why, how far).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader


@dataclass(frozen=True)
class FlightStart(Payload):
    MSG_TYPE: ClassVar[str] = "flight_start"
    SCHEMA_VERSION: ClassVar[int] = 1

    flight_id: str = ""
    mission: str = ""
    task_instruction: str = ""
    agent: str = ""                              # the planner: geometric | llm | ...
    home: tuple[float, float] | None = None      # lat, lon of home
    step_limit: int | None = None
    understood: str = ""                         # the instruction as the vehicle read it back before arming

    def body(self) -> dict[str, Any]:
        return {"flight_id": self.flight_id, "mission": self.mission, "task_instruction": self.task_instruction,
                "agent": self.agent, "home": None if self.home is None else list(self.home),
                "step_limit": self.step_limit, "understood": self.understood}

    @classmethod
    def _from(cls, r: Reader) -> "FlightStart":
        home = r.xy("home")
        if home is not None and not (-90.0 <= home[0] <= 90.0 and -180.0 <= home[1] <= 180.0):
            raise r.fail("home", f"{list(home)} is not a latitude, longitude", "out_of_range")
        return cls(flight_id=r.text("flight_id", ""), mission=r.text("mission", ""),
                   task_instruction=r.text("task_instruction", ""), agent=r.text("agent", ""), home=home,
                   step_limit=r.opt_integer("step_limit", lo=0), understood=r.text("understood", ""))


@dataclass(frozen=True)
class FlightEnd(Payload):
    MSG_TYPE: ClassVar[str] = "flight_end"
    SCHEMA_VERSION: ClassVar[int] = 1

    flight_id: str = ""
    success: bool | None = None    # the agent's own verdict; None: it never said
    reason: str = ""               # arrived | step_limit | terminated | aborted: ... | error: ...
    steps: int | None = None
    landed: str = ""
    flown_m: float | None = None

    def body(self) -> dict[str, Any]:
        return {"flight_id": self.flight_id, "success": self.success, "reason": self.reason, "steps": self.steps,
                "landed": self.landed, "flown_m": self.flown_m}

    @classmethod
    def _from(cls, r: Reader) -> "FlightEnd":
        return cls(flight_id=r.text("flight_id", ""), success=r.opt_flag("success"), reason=r.text("reason", ""),
                   steps=r.opt_integer("steps", lo=0), landed=r.text("landed", ""),
                   flown_m=r.opt_number("flown_m", lo=0.0))

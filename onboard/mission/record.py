"""What a mission came to: how it ended, where it went, what it flew and what it refused.

`aerie fly` extends it into its `FlightOutcome` (the flight's own figures: landing, setpoint
periods, telemetry); `aerie bench nav` turns it into an episode record. Both read the same
fields, written by the one `MissionRunner`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class MissionEnd(StrEnum):
    NOT_STARTED = "not started"
    ARRIVED = "arrived"          # the agent declared arrival (whether it is right is the judge's)
    STEP_LIMIT = "step_limit"
    TERMINATED = "terminated"    # stopped from outside (SIGTERM)
    REFUSED = "refused"          # not flown: the instruction was not understood, or no waypoint was allowed
    ABORTED = "aborted"          # the vehicle could not go on (failsafe, link gone, taken over, off the map)
    ERROR = "error"              # an exception in the mission's own code


@dataclass(frozen=True)
class LookUp:
    """One climb flown (a climb in legs: one per leg): the agent's step, where it began, to and from (m)."""

    step: int
    waypoint: int
    altitude_m: float
    from_m: float


@dataclass(frozen=True)
class ComeDown:
    """One descent from over the roofs: straight down at `waypoint`, or on the way from it to the next."""

    step: int
    waypoint: int
    from_m: float
    to_m: float


@dataclass(frozen=True)
class LookLow:
    step: int
    waypoint: int
    altitude_m: float


@dataclass(frozen=True)
class Refusal:
    """A look (or a come-down) asked for and not flown: the vehicle's rule or the safety envelope said no."""

    step: int
    waypoint: int
    command: str
    altitude_m: float | str | None  # a non-finite altitude as its text, so the record stays valid JSON
    reason: str


@dataclass
class MissionRecord:
    """The mission's own figures; `reason` says why it ended in words (the refusal, the abort)."""

    end: MissionEnd = MissionEnd.NOT_STARTED
    detail: str = ""
    understood: str = ""
    steps: int = 0
    flown_m: float = 0.0         # path length, climbs and descents included (SPL pays for them)
    flight_s: float = 0.0        # the legs' flight time (the vehicle port's), not wall time
    climb_m: float = 0.0         # vertical metres of look-ups and come-downs
    low_m: float = 0.0           # vertical metres of look-lows (down and back)
    final_node: int | None = None
    trajectory: list[int] = field(default_factory=list)  # the waypoint after each step, the first included
    invalid_moves: int = 0       # moves to a waypoint not on offer: a step spent, nothing flown
    look_ups: int = 0            # look-ups flown (a climb in legs counts once)
    look_up_at: list[LookUp] = field(default_factory=list)
    come_down_at: list[ComeDown] = field(default_factory=list)
    look_lows: int = 0
    look_low_at: list[LookLow] = field(default_factory=list)
    refused_looks: list[Refusal] = field(default_factory=list)
    refused_waypoints: list[int] = field(default_factory=list)  # the safety envelope refused flying there
    timed_out_legs: int = 0
    step_ms: list[float] = field(default_factory=list)  # the agent's time per step

    @property
    def refused_before_arming(self) -> bool:
        return self.end is MissionEnd.REFUSED and not self.trajectory

    @property
    def refused_look_ups(self) -> int:
        return len(self.refused_looks)

    @property
    def reason(self) -> str:
        """How it ended, in one phrase: "arrived", "step_limit", "refused: <why>", "aborted: <why>"."""
        return f"{self.end}: {self.detail}" if self.detail else str(self.end)

    @property
    def step_ms_p50(self) -> float:
        return statistics.median(self.step_ms) if self.step_ms else float("nan")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(reason=self.reason, refused_look_ups=self.refused_look_ups,
                 refused_before_arming=self.refused_before_arming,
                 step_ms_p50=round(self.step_ms_p50, 2) if self.step_ms else None)
        return d

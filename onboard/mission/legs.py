"""What one commanded leg came to, as every vehicle port reports it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class LegStatus(StrEnum):
    ARRIVED = "arrived"
    TIMED_OUT = "timed_out"  # flown, but not there in time: the vehicle is near, not at, the target
    REFUSED = "refused"      # nothing flown: the safety envelope (or the port's own rule) would not take it


@dataclass(frozen=True)
class Leg:
    """One leg: how it ended, what it cost, and why when it was not flown.

    `metres` is the leg's own length as flown (a sloped leg: the hypotenuse; straight up or down: the
    vertical metres); `vertical_m` the vertical part of it (NaN where the altitude was not reported);
    `seconds` its flight time. A timed-out climb has come back to cruise, both ways in its figures.
    """

    status: LegStatus
    metres: float = 0.0
    vertical_m: float = 0.0
    seconds: float = 0.0
    reason: str = ""
    error_m: float = 0.0  # how far from the target it ended (horizontal; a vertical leg: altitude)

    @property
    def arrived(self) -> bool:
        return self.status is LegStatus.ARRIVED

    @property
    def refused(self) -> bool:
        return self.status is LegStatus.REFUSED

    @staticmethod
    def refusal(reason: str) -> "Leg":
        return Leg(LegStatus.REFUSED, reason=reason)

    def finite_vertical(self) -> float:
        return self.vertical_m if math.isfinite(self.vertical_m) else 0.0

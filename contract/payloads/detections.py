"""``detections``: what perception found in one camera frame, placed in the vehicle's local frame.

``north``/``east`` are metres in the autopilot's local frame (as the ``state``
message's ``north_m``/``east_m``), present when the detector estimated a range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader


@dataclass(frozen=True)
class Detection:
    label: str
    score: float                     # 0..1
    bearing_deg: float
    range_m: float | None = None
    north: float | None = None
    east: float | None = None

    def body(self) -> dict[str, Any]:
        return {"label": self.label, "score": self.score, "bearing_deg": self.bearing_deg, "range_m": self.range_m,
                "north": self.north, "east": self.east}

    @classmethod
    def read(cls, r: Reader) -> "Detection":
        return cls(r.text("label"), r.number("score", lo=0.0, hi=1.0), r.number("bearing_deg", lo=-360.0, hi=360.0),
                   r.opt_number("range_m", lo=0.0), r.opt_number("north"), r.opt_number("east"))


@dataclass(frozen=True)
class Detections(Payload):
    MSG_TYPE: ClassVar[str] = "detections"
    SCHEMA_VERSION: ClassVar[int] = 1

    detections: tuple[Detection, ...]
    step: int | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"step": self.step, "detections": [d.body() for d in self.detections],
                "timings_ms": dict(self.timings_ms)}

    @classmethod
    def _from(cls, r: Reader) -> "Detections":
        return cls(detections=r.each("detections", Detection.read), step=r.opt_integer("step", lo=0),
                   timings_ms=r.numbers_map("timings_ms"))

"""``fleet_report``: one vehicle's position and velocity, as it tells the other members of its fleet.

The fleet channel (``onboard/fleet/channel.py``) is a wire of its own, beside
the telemetry to the ground: every member publishes this report a few times a
second and reads the others'. Its frame on the wire is
``contract/fleet_frame.py``'s (beside ``fleet_discovery``, what a member found).

The report carries how old its position already was when it was sent
(``age_s``), not a wall-clock time: members need not share a clock, and the
receiver adds nothing for transit (milliseconds on a LAN, well inside the
separation rule's margins). Every number is range-checked on decode and NaN
or infinity is refused: a report from the network is untrusted, and a NaN
latitude would compare false with every separation test written after it.
The bounds are the separation rule's own (``firmware_bridge.fleet_picture``
imports them from here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader

# Bounds a report must lie in: an aircraft, not a spacecraft.
MAX_SPEED_M_S = 100.0
MIN_ALT_AMSL_M = -500.0
MAX_ALT_AMSL_M = 20_000.0
MAX_REPORT_AGE_S = 600.0
MAX_MEMBER_ID = 255
# The seq counts the frames one member sent since its channel started (loss figures).
MAX_SEQ = (1 << 63) - 1


@dataclass(frozen=True)
class FleetReport(Payload):
    MSG_TYPE: ClassVar[str] = "fleet_report"
    SCHEMA_VERSION: ClassVar[int] = 1

    member_id: int
    seq: int
    lat: float
    lon: float
    alt_amsl_m: float
    vn_m_s: float
    ve_m_s: float
    vd_m_s: float
    age_s: float  # how old the position was when the report was sent, seconds

    def body(self) -> dict[str, Any]:
        return {"member_id": self.member_id, "seq": self.seq, "lat": self.lat, "lon": self.lon,
                "alt_amsl_m": self.alt_amsl_m, "vn_m_s": self.vn_m_s, "ve_m_s": self.ve_m_s,
                "vd_m_s": self.vd_m_s, "age_s": self.age_s}

    @classmethod
    def _from(cls, r: Reader) -> "FleetReport":
        speed = dict(lo=-MAX_SPEED_M_S, hi=MAX_SPEED_M_S)
        return cls(member_id=r.integer("member_id", lo=1, hi=MAX_MEMBER_ID), seq=r.integer("seq", lo=1, hi=MAX_SEQ),
                   lat=r.number("lat", lo=-90.0, hi=90.0), lon=r.number("lon", lo=-180.0, hi=180.0),
                   alt_amsl_m=r.number("alt_amsl_m", lo=MIN_ALT_AMSL_M, hi=MAX_ALT_AMSL_M),
                   vn_m_s=r.number("vn_m_s", **speed), ve_m_s=r.number("ve_m_s", **speed),
                   vd_m_s=r.number("vd_m_s", **speed), age_s=r.number("age_s", lo=0.0, hi=MAX_REPORT_AGE_S))

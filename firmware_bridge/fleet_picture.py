"""What this vehicle knows of the other vehicles of its fleet: last positions, velocities, ages.

The fleet channel (ZeroMQ between supervisors, or a test harness reading the
other simulators) hands reports to the bridge; this module keeps them. It is
the separation rule's only source, so it trusts nothing: a report with a
non-finite or out-of-range number is rejected by name and never stored (a NaN
position compares false with every distance and would read as "far away"), a
report older than the one already held does not replace it, and an entry
older than the channel timeout drops out, because a position that old says
nothing about where the vehicle is now. Its last report is still kept apart
(`last_known`): a vehicle that went quiet standing on the ground (a member
whose mission ended and whose process exited) is most likely still standing
there, and a landing must not come down on it (an 8-vehicle bench run had a
member land 0.06 m from one that had landed and left the channel).

Times are the caller's clock (``time.monotonic()`` in the bridge, a synthetic
one in tests); a report's ``age_s`` says how old its position already was when
it was handed over, so the picture stores when the position was true.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Bounds a report must lie in (an aircraft, not a spacecraft): the fleet channel's wire checks the same.
from contract.fleet_report import MAX_ALT_AMSL_M, MAX_REPORT_AGE_S, MAX_SPEED_M_S, MIN_ALT_AMSL_M


@dataclass(frozen=True)
class TrafficReport:
    """One other vehicle's position as the fleet channel heard it."""

    member_id: int
    lat: float
    lon: float
    alt_amsl_m: float
    vn_m_s: float = 0.0
    ve_m_s: float = 0.0
    vd_m_s: float = 0.0
    age_s: float = 0.0  # how old the position already was when handed to the bridge


@dataclass(frozen=True)
class Traffic:
    """A stored report and the clock time its position was true."""

    report: TrafficReport
    t: float

    def age_s(self, now: float) -> float:
        return now - self.t


def report_error(r: TrafficReport) -> str | None:
    """Why ``r`` cannot be used (naming the field), or None. Written so that NaN fails every test."""
    if isinstance(r.member_id, bool) or not isinstance(r.member_id, int) or not 1 <= r.member_id <= 255:
        return f"member_id {r.member_id!r} is not a fleet member number (1..255)"
    if not -90.0 <= r.lat <= 90.0:
        return f"member {r.member_id}: lat {r.lat!r} is not a latitude"
    if not -180.0 <= r.lon <= 180.0:
        return f"member {r.member_id}: lon {r.lon!r} is not a longitude"
    if not MIN_ALT_AMSL_M <= r.alt_amsl_m <= MAX_ALT_AMSL_M:
        return f"member {r.member_id}: alt_amsl_m {r.alt_amsl_m!r} outside {MIN_ALT_AMSL_M:.0f}..{MAX_ALT_AMSL_M:.0f}"
    for name in ("vn_m_s", "ve_m_s", "vd_m_s"):
        v = getattr(r, name)
        if not -MAX_SPEED_M_S <= v <= MAX_SPEED_M_S:
            return f"member {r.member_id}: {name} {v!r} outside -{MAX_SPEED_M_S:.0f}..{MAX_SPEED_M_S:.0f} m/s"
    if not 0.0 <= r.age_s <= MAX_REPORT_AGE_S:
        return f"member {r.member_id}: age_s {r.age_s!r} outside 0..{MAX_REPORT_AGE_S:.0f} s"
    return None


class FleetPicture:
    """The others' last reports, keyed by member id; safe to update from one thread and read from another."""

    def __init__(self, own_id: int, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.own_id = own_id
        self.timeout_s = timeout_s
        self.clock = clock
        self._entries: dict[int, Traffic] = {}
        self._expired: dict[int, Traffic] = {}  # members gone quiet: their last report, until heard again
        self._heard_t = -math.inf  # when the channel last delivered anything usable
        self._lock = threading.Lock()

    def update(self, reports: Iterable[TrafficReport], now: float | None = None) -> tuple[str, ...]:
        """Take a batch from the channel; return why each rejected report was rejected.

        A batch counts as the channel speaking when it holds at least one usable report,
        or none at all (a fleet whose other members are all on the ground still talks).
        The own member id is ignored (a channel may echo it back).
        """
        now = self.clock() if now is None else now
        rejected: list[str] = []
        accepted = 0
        batch = list(reports)
        with self._lock:
            for r in batch:
                why = report_error(r)
                if why is not None:
                    rejected.append(why)
                    continue
                accepted += 1
                if r.member_id == self.own_id:
                    continue
                t = now - r.age_s
                held = self._entries.get(r.member_id)
                if held is None or t >= held.t:
                    self._entries[r.member_id] = Traffic(r, t)
                    self._expired.pop(r.member_id, None)
            if accepted or not batch:
                self._heard_t = now
        return tuple(rejected)

    def silent_s(self, now: float | None = None) -> float:
        """Seconds since the channel last delivered (inf before it ever did)."""
        now = self.clock() if now is None else now
        return now - self._heard_t

    def stale(self, now: float | None = None) -> bool:
        """The channel has been silent longer than its timeout: nothing in the picture can be trusted."""
        return not self.silent_s(now) <= self.timeout_s

    def fresh(self, now: float | None = None) -> list[Traffic]:
        """Entries younger than the timeout; older ones are dropped for good."""
        now = self.clock() if now is None else now
        with self._lock:
            old = [k for k, e in self._entries.items() if not e.age_s(now) <= self.timeout_s]
            for k in old:
                self._expired[k] = self._entries.pop(k)
            return list(self._entries.values())

    def last_known(self, now: float | None = None) -> list[Traffic]:
        """The last report of every member gone quiet (past the timeout, not heard since)."""
        self.fresh(now)
        with self._lock:
            return list(self._expired.values())

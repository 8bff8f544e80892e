"""The fleet's findings on one vehicle: what the others told it, and what it tells them.

Two threads meet here: the fleet channel's thread hands in each member's
``fleet_discovery`` frame (`take`) and asks for this vehicle's latest one
(`outgoing`); the flight loop, between two agent steps, gives the agent what
the others found (`for_agent`) and sets what the agent found itself
(`publish`). One lock guards both; nothing here waits on a socket.

Frames are snapshots of each sender's newest findings, so the union over
frames is kept: per member, landmarks by name (the newest frame wins: more
sightings behind it), signs by name and place, places looked from by place
(a place: latitude and longitude to 1e-4 degree, about 10 m; only to tell
repeats apart). Each member's share is bounded (`MAX_KEPT`), so a hostile
peer that invents findings costs bounded memory. Findings outlive the flight
that made them (the city does not move between flights) but not `max_age_s`
since their member last said them: what a member stopped saying, or said in
a flood that has ended, does not weigh on every later mission.

A finding is only worth something where this vehicle may fly: one placed
farther from home than the geofence's radius or the configured radio range
(`reach`) is refused and counted, whatever the member's key. The home and
fence are the flight loop's (`for_agent`); until it has said them, findings
are kept and judged when it does.

Positions cross the wire as latitude/longitude (members take off from
different places) and are brought into this vehicle's frame (east, north of
its home) with the one geodesy; the agent's frame is dead-reckoned from the
take-off waypoint, which is home.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contract.fleet_discovery import (MAX_FIXES, MAX_ITEMS, MAX_NAME_CHARS, MAX_SPREAD_M, FleetDiscovery,
                                      LandmarkFinding, LookedFrom, SignRead)
from common.geodesy import GeoPoint, geo_from_ned, great_circle_m, ned_from_geo
from onboard.vocab.observation import SharedFindings, SharedLandmark

# Findings of each kind kept per member; beyond it the oldest go.
MAX_KEPT = 2000


@dataclass
class _Member:
    # Each value is (finding, when it was last heard); the dicts run oldest first.
    landmarks: dict[str, tuple[LandmarkFinding, float]] = field(default_factory=dict)
    signs: dict[tuple[str, float, float], tuple[SignRead, float]] = field(default_factory=dict)
    looked: dict[tuple[float, float], tuple[LookedFrom, float]] = field(default_factory=dict)

    def kinds(self) -> tuple[dict, dict, dict]:
        return self.landmarks, self.signs, self.looked


def _place(lat: float, lon: float) -> tuple[float, float]:
    return round(lat, 4), round(lon, 4)


def _keep(d: dict, key: Any, value: Any, now: float) -> None:
    d.pop(key, None)  # re-inserted: the newest go last, the oldest first out
    d[key] = (value, now)
    while len(d) > MAX_KEPT:
        del d[next(iter(d))]


def _expire(d: dict, oldest: float) -> int:
    """Drop the entries last heard before ``oldest`` (they run oldest first); how many went."""
    n = 0
    while d and next(iter(d.values()))[1] < oldest:
        del d[next(iter(d))]
        n += 1
    return n


class FleetFindings:
    """The others' findings (per member) and this vehicle's own latest frame."""

    def __init__(self, member_id: int, *, radio_range_m: float = math.inf, max_age_s: float = math.inf,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not (radio_range_m > 0 and max_age_s > 0):  # NaN fails too
            raise ValueError("radio_range_m and max_age_s must be positive")
        self.member_id = member_id
        self.radio_range_m = radio_range_m
        self.max_age_s = max_age_s
        self._clock = clock
        self._home: GeoPoint | None = None  # the flight loop's, with the fence's radius: what is in reach
        self._fence_m = math.inf
        self.refused: Counter[str] = Counter()  # findings not kept, by reason
        self.expired = 0  # findings dropped for age
        self._lock = threading.Lock()
        self._members: dict[int, _Member] = {}
        self._own: FleetDiscovery | None = None
        self._version = 0  # bumped on every frame taken
        self._given: tuple[int, float, float] | None = None  # what the last `for_agent` was made from
        self._last: SharedFindings | None = None
        self.taken = 0

    # -- the channel's thread --------------------------------------------------------------------
    def take(self, found: FleetDiscovery) -> None:
        """One member's frame (already checked by the wire's reader), merged into what is kept."""
        with self._lock:
            now = self._clock()
            m = self._members.setdefault(found.member_id, _Member())
            for x in found.landmarks:
                if self._in_reach(x):
                    _keep(m.landmarks, x.name, x, now)
            for s in found.signs:
                if self._in_reach(s):
                    _keep(m.signs, (s.name, *_place(s.lat, s.lon)), s, now)
            for p in found.looked_from:
                if self._in_reach(p):
                    _keep(m.looked, _place(p.lat, p.lon), p, now)
            self._version += 1
            self.taken += 1

    def _in_reach(self, x: LandmarkFinding | SignRead | LookedFrom) -> bool:
        """Whether a finding lies where this vehicle may fly (unknown home: yes, judged later); counts a no."""
        if self._home is None:
            return True
        if great_circle_m(self._home, x.lat, x.lon) <= min(self.radio_range_m, self._fence_m):  # NaN fails
            return True
        self.refused["out_of_reach"] += 1
        return False

    def _prune(self, now: float, *, judge_reach: bool) -> None:
        """Drop what expired and, when the home or fence changed, what now lies out of reach (counted once:
        what is taken while a home is known was judged then)."""
        oldest = now - self.max_age_s
        changed = False
        for mid in list(self._members):
            m = self._members[mid]
            for kept in m.kinds():
                gone = _expire(kept, oldest)
                if gone:
                    self.expired += gone
                    changed = True
                if judge_reach and self._home is not None:
                    far = [k for k, (x, _) in kept.items() if not self._in_reach(x)]
                    for k in far:
                        del kept[k]
                    changed = changed or bool(far)
            if not any(m.kinds()):
                del self._members[mid]
        if changed:
            self._version += 1

    def outgoing(self) -> FleetDiscovery | None:
        """This vehicle's latest frame (None: nothing found yet)."""
        with self._lock:
            return self._own

    # -- the flight loop ---------------------------------------------------------------------------
    def publish(self, found: SharedFindings | None, home: GeoPoint, flight_id: str) -> None:
        """The agent's own findings (its frame, east/north of `home`) become the frame the others get."""
        if found is None:
            return

        def geo(xy: tuple[float, float]) -> tuple[float, float]:
            lat, lon = geo_from_ned(home, xy[1], xy[0])
            return float(lat), float(lon)

        frame = FleetDiscovery(
            self.member_id, 1, flight_id[:MAX_NAME_CHARS],
            landmarks=tuple(LandmarkFinding(x.name[:MAX_NAME_CHARS], *geo(x.xy), spread_m=min(x.spread_m, MAX_SPREAD_M),
                                            fixes=max(1, min(x.fixes, MAX_FIXES)))
                            for x in found.landmarks[-MAX_ITEMS:] if x.name),
            signs=tuple(SignRead(name[:MAX_NAME_CHARS], *geo(xy)) for name, xy in found.signs[-MAX_ITEMS:] if name),
            looked_from=tuple(LookedFrom(*geo(xy)) for xy in found.looked_from[-MAX_ITEMS:]))
        with self._lock:
            self._own = frame if (frame.landmarks or frame.signs or frame.looked_from) else None

    def for_agent(self, home: GeoPoint, *, fence_m: float = math.inf) -> SharedFindings | None:
        """Everything the others found that is in reach of ``home`` (within ``fence_m``, the geofence's radius,
        and the radio range) and not expired, in this vehicle's frame; None while there is nothing."""
        with self._lock:
            moved = (home, fence_m) != (self._home, self._fence_m)
            self._home, self._fence_m = home, fence_m
            self._prune(self._clock(), judge_reach=moved)
            key = (self._version, home.lat, home.lon)
            if key == self._given:
                return self._last
            marks: dict[str, LandmarkFinding] = {}
            for m in self._members.values():  # one landmark from two members: the one more sightings placed
                for x, _ in m.landmarks.values():
                    if x.name not in marks or x.fixes > marks[x.name].fixes:
                        marks[x.name] = x
            signs = [s for m in self._members.values() for s, _ in m.signs.values()]
            looked = [p for m in self._members.values() for p, _ in m.looked.values()]

            def xy(lat: float, lon: float) -> tuple[float, float]:
                north, east = ned_from_geo(home, lat, lon)
                return round(float(east), 1), round(float(north), 1)

            out = SharedFindings(
                tuple(SharedLandmark(x.name, xy(x.lat, x.lon), x.spread_m, x.fixes) for x in marks.values()),
                tuple((s.name, xy(s.lat, s.lon)) for s in signs), tuple(xy(p.lat, p.lon) for p in looked))
            self._given, self._last = key, (out if (out.landmarks or out.signs or out.looked_from) else None)
            return self._last

    def counts(self) -> dict[str, int]:
        """Frames taken, what is kept and what was not (for the flight's record)."""
        with self._lock:
            return {"frames_taken": self.taken, "members": len(self._members),
                    "expired": self.expired, **{f"refused_{k}": v for k, v in sorted(self.refused.items())},
                    "landmarks": len({n for m in self._members.values() for n in m.landmarks}),
                    "signs": sum(len(m.signs) for m in self._members.values()),
                    "looked_from": sum(len(m.looked) for m in self._members.values())}

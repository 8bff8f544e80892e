"""The exploration memory a vehicle consults: its own discoveries merged with its peers'.

Two vehicles only avoid each other's ground if they can talk about places in
one language, so everything here is in the common frame that GPS gives both
of them: a waypoint id (the street-corridor waypoints are one shared map)
plus east/north metres from a common origin. A vehicle's own dead-reckoned
frame would differ from its peer's by the take-off offset.

What is shared follows the two-agent design: where each vehicle has been
(with the exits it saw there, so the peer can route through ground it never
flew), the POIs it read, where it is now, and the frontier waypoint it has
claimed. Merging is a set union keyed by waypoint id and POI identity, so a
repeated or re-ordered message changes nothing; only a peer's pose and claim
are "latest wins" (by the peer's step counter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from onboard.vocab.observation import NeighbourMove
from onboard.agent.street_map import StreetMap

POI_GRID_M = 10.0  # two readings of one sign land in the same cell unless perception is poor


@dataclass(frozen=True)
class Fix:
    """A position both vehicles understand: waypoint id and east/north metres of the common origin."""

    waypoint: int
    east: float
    north: float

    def distance_to(self, east: float, north: float) -> float:
        return math.hypot(self.east - east, self.north - north)


@dataclass(frozen=True)
class SeenPoi:
    """A POI read by some vehicle, placed in the common frame."""

    name: str
    east: float
    north: float

    def key(self) -> tuple[str, int, int]:
        """Identity across vehicles: a chain shop's branches share a name but not a place."""
        return self.name, round(self.east / POI_GRID_M), round(self.north / POI_GRID_M)


@dataclass(frozen=True)
class VisitedWaypoint:
    """A waypoint a vehicle flew to and the exits it saw there."""

    fix: Fix
    exits: tuple[Fix, ...]


@dataclass(frozen=True)
class Discovery:
    """One vehicle's news since its last message (or everything, when `full`)."""

    vehicle_id: str
    step: int
    pose: Fix
    visited: tuple[VisitedWaypoint, ...] = ()
    pois: tuple[SeenPoi, ...] = ()
    claim: Fix | None = None
    full: bool = False


@dataclass(frozen=True)
class PeerStatus:
    """Where a peer last said it was and which frontier waypoint it is heading for."""

    step: int
    pose: Fix
    claim: Fix | None


def exits_from(fix: Fix, moves: tuple[NeighbourMove, ...]) -> tuple[Fix, ...]:
    """The moves on offer placed in the common frame from the vehicle's own fix."""
    out = []
    for m in moves:
        r = math.radians(m.bearing)
        out.append(Fix(m.node, fix.east + m.length * math.sin(r), fix.north + m.length * math.cos(r)))
    return tuple(out)


@dataclass
class ExplorationView:
    """The team's map as this vehicle knows it; `streets.flown` is every waypoint any vehicle visited."""

    vehicle_id: str
    streets: StreetMap = field(default_factory=StreetMap)
    visited_by: dict[int, set[str]] = field(default_factory=dict)
    pois: dict[tuple[str, int, int], SeenPoi] = field(default_factory=dict)
    poi_seen_by: dict[tuple[str, int, int], set[str]] = field(default_factory=dict)
    peers: dict[str, PeerStatus] = field(default_factory=dict)
    _own_visits: list[VisitedWaypoint] = field(default_factory=list)
    _own_pois: list[SeenPoi] = field(default_factory=list)
    _sent_visits: int = 0
    _sent_pois: int = 0
    _visited_xy: np.ndarray | None = None

    # --- what this vehicle found -------------------------------------------------
    def record_visit(self, visit: VisitedWaypoint) -> None:
        if self._merge_visit(self.vehicle_id, visit):
            self._own_visits.append(visit)

    def record_poi(self, poi: SeenPoi) -> None:
        if self._merge_poi(self.vehicle_id, poi):
            self._own_pois.append(poi)

    def news(self, step: int, pose: Fix, claim: Fix | None, full: bool = False) -> Discovery:
        """What to tell the peers now: unsent discoveries, or all of them when `full`."""
        visits = self._own_visits if full else self._own_visits[self._sent_visits:]
        pois = self._own_pois if full else self._own_pois[self._sent_pois:]
        self._sent_visits, self._sent_pois = len(self._own_visits), len(self._own_pois)
        return Discovery(self.vehicle_id, step, pose, tuple(visits), tuple(pois), claim, full)

    # --- what the peers found ----------------------------------------------------
    def merge(self, d: Discovery) -> None:
        """Fold a peer's message in; idempotent, so duplicates and full snapshots are harmless."""
        if d.vehicle_id == self.vehicle_id:
            return
        for v in d.visited:
            self._merge_visit(d.vehicle_id, v)
        for p in d.pois:
            self._merge_poi(d.vehicle_id, p)
        old = self.peers.get(d.vehicle_id)
        if old is None or d.step >= old.step:
            self.peers[d.vehicle_id] = PeerStatus(d.step, d.pose, d.claim)

    def peer_step(self, vehicle_id: str) -> int:
        """The latest step heard from a peer; -1 before its first message."""
        p = self.peers.get(vehicle_id)
        return -1 if p is None else p.step

    # --- queries the explorer makes ------------------------------------------------
    def visited(self, waypoint: int) -> bool:
        return waypoint in self.streets.flown

    def frontier(self) -> list[int]:
        return self.streets.frontier()

    def novelty(self, east: float, north: float) -> float:
        """Distance to the nearest waypoint any vehicle has visited: how much new ground a place offers."""
        if self._visited_xy is None:
            pts = [self.streets.xy[w] for w in self.streets.flown]
            self._visited_xy = np.array(pts) if pts else np.zeros((0, 2))
        if not len(self._visited_xy):
            return math.inf
        return float(np.min(np.hypot(self._visited_xy[:, 0] - east, self._visited_xy[:, 1] - north)))

    def position(self, waypoint: int) -> tuple[float, float]:
        e, n = self.streets.xy[waypoint]
        return float(e), float(n)

    def claims_against(self, waypoint: int) -> bool:
        """A peer with priority (lower vehicle id) claims `waypoint`: this vehicle must yield it.

        Priority by id alone, not by distance, so both vehicles reach the same
        verdict from whatever (possibly stale) poses each one holds.
        """
        return any(p.claim is not None and p.claim.waypoint == waypoint and vid < self.vehicle_id
                   for vid, p in self.peers.items())

    def claimed_by_peer(self, waypoint: int) -> bool:
        return any(p.claim is not None and p.claim.waypoint == waypoint for p in self.peers.values())

    # --- merging -----------------------------------------------------------------
    def _merge_visit(self, who: str, v: VisitedWaypoint) -> bool:
        seen = self.visited_by.setdefault(v.fix.waypoint, set())
        new = who not in seen
        seen.add(who)
        if v.fix.waypoint in self.streets.flown and not new:
            return False
        # GPS fixes outrank positions guessed from another waypoint's exits.
        self.streets.xy[v.fix.waypoint] = np.array([v.fix.east, v.fix.north])
        for x in v.exits:
            self.streets.xy.setdefault(x.waypoint, np.array([x.east, x.north]))
        moves = tuple(NeighbourMove(x.waypoint, _bearing(v.fix, x), v.fix.distance_to(x.east, x.north))
                      for x in v.exits)
        self.streets.observe(v.fix.waypoint, moves)
        self._visited_xy = None
        return new

    def _merge_poi(self, who: str, p: SeenPoi) -> bool:
        k = p.key()
        self.pois.setdefault(k, p)
        seen = self.poi_seen_by.setdefault(k, set())
        new = who not in seen
        seen.add(who)
        return new


def _bearing(a: Fix, b: Fix) -> float:
    return math.degrees(math.atan2(b.east - a.east, b.north - a.north)) % 360.0

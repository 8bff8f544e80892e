"""An exploring agent: flies to ground nobody in the team has seen, using the shared view.

Coverage (distinct POIs read) grows with new ground, not with new waypoint
ids: waypoints are ~50 m apart and a sign is readable at ~60 m, so a side
waypoint next to the flown path adds little. Each move on offer is therefore
scored by its *novelty* (distance to the nearest waypoint any team member has
visited), by its distance from the peers (so that two vehicles leaving one
launch site fan out instead of trailing each other) and, weakly, by going
straight on (zig-zags revisit the same view). When every move on offer leads
to visited ground the agent routes over the known corridors to the cheapest
frontier waypoint instead of wandering, which is what breaks loops.

A target is *claimed* and published; a frontier a peer has claimed is never
chosen, and when two claims cross on the link (both vehicles picked one
before hearing the other) the lower vehicle id keeps it and the other
re-plans (see `ExplorationView.claims_against`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.exploration.exploration_view import ExplorationView, Fix, SeenPoi, VisitedWaypoint, exits_from
from onboard.vocab.observation import AgentAction, AgentObservation, NeighbourMove
from onboard.map.compass import angle_diff


@dataclass(frozen=True)
class ExplorerSettings:
    """Weights of the frontier choice, in metres of novelty they are worth."""

    novelty_cap_m: float = 120.0  # beyond twice the POI reading range more distance adds nothing
    peer_range_m: float = 250.0  # peers farther than this no longer push
    peer_weight: float = 0.4  # metres of novelty per metre away from the nearest peer
    straight_bonus_m: float = 8.0  # for going straight on rather than turning back
    peer_claim_penalty_m: float = 200.0  # route cost added for frontiers near a peer's claim
    jitter_m: float = 5.0  # random score noise: vehicles of one design need not fly one path


class FrontierExplorer:
    """One vehicle's exploration policy over an `ExplorationView` (own or shared)."""

    def __init__(self, vehicle_id: str, settings: ExplorerSettings | None = None, seed: int = 0,
                 view: ExplorationView | None = None) -> None:
        self.vehicle_id = vehicle_id
        self.settings = settings or ExplorerSettings()
        self.view = view or ExplorationView(vehicle_id)
        self.rng = np.random.default_rng(seed)
        self.claim: Fix | None = None
        self.pose: Fix | None = None
        self._heading: float | None = None

    def perceive(self, obs: AgentObservation, fix: Fix) -> None:
        """Record the waypoint, its exits and the POIs read here into the view."""
        self.pose = fix
        self.view.record_visit(VisitedWaypoint(fix, exits_from(fix, obs.moves)))
        for p in obs.pois:
            r = math.radians(p.bearing)
            self.view.record_poi(SeenPoi(p.name, fix.east + p.distance * math.sin(r),
                                         fix.north + p.distance * math.cos(r)))

    def act(self, obs: AgentObservation, fix: Fix) -> AgentAction:
        """Perceive, then choose a move towards new ground; the claim is updated as a side effect."""
        self.perceive(obs, fix)
        if not obs.moves:
            self.claim = None
            return AgentAction.arrive("no move on offer")
        move, reason = self._adjacent_frontier(obs.moves) or self._route_to_frontier(obs.moves, fix)
        self._heading = move.bearing
        return AgentAction.move(move.node, reason)

    # --- choices ---------------------------------------------------------------------
    def _adjacent_frontier(self, moves: tuple[NeighbourMove, ...]) -> tuple[NeighbourMove, str] | None:
        v, s = self.view, self.settings
        open_moves = [m for m in moves if not v.visited(m.node) and not self._blocked(m.node)]
        if not open_moves:
            return None
        best, best_score = open_moves[0], -math.inf
        for m in open_moves:
            e, n = v.position(m.node)
            score = min(v.novelty(e, n), s.novelty_cap_m) + s.peer_weight * self._peer_distance(e, n)
            if self._heading is not None:
                score += s.straight_bonus_m * math.cos(math.radians(angle_diff(m.bearing, self._heading)))
            score += self.rng.uniform(0.0, s.jitter_m)
            if score > best_score:
                best, best_score = m, score
        e, n = v.position(best.node)
        self.claim = Fix(best.node, e, n)
        return best, f"frontier next door (novelty {min(v.novelty(e, n), s.novelty_cap_m):.0f} m)"

    def _route_to_frontier(self, moves: tuple[NeighbourMove, ...], fix: Fix) -> tuple[NeighbourMove, str]:
        v, s = self.view, self.settings
        dist, first = v.streets.routes_from(fix.waypoint)
        on_offer = {m.node: m for m in moves}
        keep = self.claim.waypoint if self.claim is not None else None
        best, best_cost = None, math.inf
        for w in v.frontier():
            if w not in dist or first.get(w) not in on_offer or self._blocked(w):
                continue
            e, n = v.position(w)
            cost = dist[w] - min(v.novelty(e, n), s.novelty_cap_m)
            if self._near_peer_claim(e, n):
                cost += s.peer_claim_penalty_m
            cost -= s.peer_weight * self._peer_distance(e, n)
            if w == keep:
                cost -= 1.0  # hysteresis: do not flip between two equally good targets
            cost += self.rng.uniform(0.0, s.jitter_m)
            if cost < best_cost:
                best, best_cost = w, cost
        if best is None:
            self.claim = None
            back = [m for m in moves if self._heading is None or angle_diff(m.bearing, self._heading) < 150.0]
            pool = back or list(moves)
            return pool[int(self.rng.integers(len(pool)))], "no reachable frontier: wander"
        e, n = v.position(best)
        self.claim = Fix(best, e, n)
        return on_offer[first[best]], f"route to frontier {best} ({dist[best]:.0f} m)"

    # --- peers -------------------------------------------------------------------------
    def _blocked(self, waypoint: int) -> bool:
        """A peer holds this frontier; it stays this vehicle's only if it held it first and has priority."""
        if not self.view.claimed_by_peer(waypoint):
            return False
        mine = self.claim is not None and self.claim.waypoint == waypoint
        return not mine or self.view.claims_against(waypoint)

    def _peer_distance(self, east: float, north: float) -> float:
        """Distance to the nearest peer (capped); 0 with no peer so independent agents score as before."""
        cap = self.settings.peer_range_m
        d = [min(p.pose.distance_to(east, north), cap) for p in self.view.peers.values()]
        return min(d) if d else 0.0

    def _near_peer_claim(self, east: float, north: float) -> bool:
        return any(p.claim is not None and p.claim.distance_to(east, north) < self.settings.novelty_cap_m / 2
                   for p in self.view.peers.values())

"""One exploration mission of a team on the Helsinki world: who flew where and which POIs were read.

The vehicles take off from one launch site and fly in lock-step: in each
step every vehicle, in turn, reads the peers' discoveries (when sharing),
observes, chooses a move and publishes. A vehicle waits for the message its
peer published in the same round (or the round before, for the peer that
goes after it), so the run is deterministic even though the messages go
through real ZeroMQ sockets on loopback.

Coverage is counted from ground truth: each POI sighting is matched to the
world's POI it came from (same name, in range, nearest distance), so two
readings of one shop count once and two branches of a chain count twice.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from sim.exploration.discovery_share import DiscoveryShare
from sim.exploration.exploration_view import Fix
from sim.exploration.frontier_explorer import ExplorerSettings, FrontierExplorer
from onboard.vocab.observation import AgentObservation, NeighbourMove, PoiSighting
from sim.world.perception import OraclePerception
from sim.world.world import World


@dataclass
class TeamResult:
    """The outcome of one mission; `pois_by_vehicle` holds world POI indices."""

    start: int
    vehicles: int
    sharing: bool
    pois_by_vehicle: list[set[int]]
    trails: list[list[int]]
    claim_clashes: int = 0  # a vehicle claimed a frontier a peer held at that moment
    refused_frames: int = 0
    late_frames: int = 0
    wall_s: float = 0.0
    counters: list[dict] = field(default_factory=list)

    @property
    def team_pois(self) -> int:
        return len(set().union(*self.pois_by_vehicle))

    @property
    def overlap_pois(self) -> int:
        """POIs read by more than one vehicle: effort the team spent twice."""
        if len(self.pois_by_vehicle) < 2:
            return 0
        seen: dict[int, int] = {}
        for s in self.pois_by_vehicle:
            for p in s:
                seen[p] = seen.get(p, 0) + 1
        return sum(1 for c in seen.values() if c > 1)

    @property
    def team_waypoints(self) -> int:
        return len(set().union(*map(set, self.trails)))


class PoiMatcher:
    """Maps sightings back to world POI indices (the benchmark's ground truth, never the agent's)."""

    def __init__(self, world: World, range_m: float) -> None:
        self.world = world
        self.range_m = range_m
        self._xy = np.array([p.xy for p in world.city.pois])
        self._cache: dict[int, list[tuple[int, str, float]]] = {}

    def ids(self, node: int, sightings) -> set[int]:
        near = self._near(node)
        out = set()
        for s in sightings:
            cands = [(abs(d - s.distance), i) for i, name, d in near if name == s.name]
            if cands:
                out.add(min(cands)[1])
        return out

    def _near(self, node: int) -> list[tuple[int, str, float]]:
        if node not in self._cache:
            here = self.world.graph.xy[node]
            d = np.hypot(self._xy[:, 0] - here[0], self._xy[:, 1] - here[1])
            self._cache[node] = [(int(i), self.world.city.pois[i].name, float(d[i]))
                                 for i in np.flatnonzero(d <= self.range_m + 1.0)]
        return self._cache[node]


def fix_of(world: World, node: int) -> Fix:
    """What GPS tells a vehicle at `node`: the waypoint id and east/north of the world origin."""
    e, n = world.graph.xy[node]
    return Fix(int(node), float(e), float(n))


def observe(world: World, perception: OraclePerception, node: int, step: int,
            budget: int) -> tuple[AgentObservation, list]:
    """The explorer's observation (moves and POIs read; no landmarks, exploring needs none) and raw sightings."""
    moves = tuple(NeighbourMove(m.node, float(m.bearing), float(m.distance)) for m in world.graph.neighbours(node))
    seen = perception.pois_at(node)
    pois = tuple(PoiSighting(p.name, float(p.bearing), float(p.distance)) for p in seen)
    return AgentObservation(step, budget - step, moves, (), pois), seen


def run_team(world: World, start: int, budget: int, vehicles: int, sharing: bool, seed: int,
             noise: str = "perfect", settings: ExplorerSettings | None = None, team: str = "bench",
             matcher: PoiMatcher | None = None, wait_s: float = 2.0) -> TeamResult:
    """Fly `vehicles` explorers from `start` for `budget` moves each; sharing over ZeroMQ when asked."""
    ids = [f"v{i}" for i in range(vehicles)]
    agents = [FrontierExplorer(vid, settings, seed=seed * 7919 + i) for i, vid in enumerate(ids)]
    perceptions = [OraclePerception(world, noise, seed * 7919 + 101 + i) for i in range(vehicles)]
    matcher = matcher or PoiMatcher(world, perceptions[0].noise.poi_range_m)
    shares = [DiscoveryShare(a.view, team=team) for a in agents] if sharing else []
    result = TeamResult(start, vehicles, sharing, [set() for _ in ids], [[start] for _ in ids])
    t0 = time.perf_counter()
    try:
        for s in shares:
            s.start()
        for i, s in enumerate(shares):
            for j, peer in enumerate(shares):
                if i != j:
                    s.connect(peer.endpoint)
        for s in shares:
            if not s.wait_for_subscribers(vehicles - 1, timeout_s=wait_s):
                raise RuntimeError("a peer never subscribed to the discovery link")
        nodes = [start] * vehicles
        for step in range(budget + 1):
            for i, agent in enumerate(agents):
                if shares:
                    for j in range(vehicles):
                        due = min(step if j < i else step - 1, budget - 1)  # nobody publishes at the end
                        if j != i and due >= 0 and not shares[i].wait_for(ids[j], due, wait_s):
                            result.late_frames += 1
                obs, seen = observe(world, perceptions[i], nodes[i], step, budget)
                result.pois_by_vehicle[i] |= matcher.ids(nodes[i], seen)
                fix = fix_of(world, nodes[i])
                if step == budget:
                    agent.perceive(obs, fix)  # the last view counts; no move left to make
                    continue
                action = agent.act(obs, fix)
                if agent.claim is not None and agent.view.claimed_by_peer(agent.claim.waypoint):
                    result.claim_clashes += 1
                if shares:
                    shares[i].publish(step, fix, agent.claim)
                if action.kind == "move" and action.node in world.graph.adj[nodes[i]]:
                    nodes[i] = action.node
                result.trails[i].append(nodes[i])
    finally:
        for s in shares:
            s.close()
    result.wall_s = time.perf_counter() - t0
    result.counters = [vars(s.counters) | {"refused": dict(s.counters.refused)} for s in shares]
    result.refused_frames = sum(s.counters.refused_total for s in shares)
    return result


def starts_from_seed(world: World, count: int, seed: int) -> list[int]:
    """`count` distinct launch waypoints, the same for a given seed."""
    rng = np.random.default_rng(seed)
    return [int(n) for n in rng.choice(world.graph.n_nodes, size=min(count, world.graph.n_nodes), replace=False)]


def mean(xs: list[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else math.nan

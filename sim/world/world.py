"""The benchmark world: city + street graph + landmarks, goals and visibility.

Built once from the OSM extract (see `sim.world.cache.load_world`), then used
read-only by perception, the renderer, task generation and episodes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from onboard.map.city import Building, City, Poi
from onboard.map.corridors import StreetGraph, discretise
from sim.world.visibility import DEFAULT_RANGE_M, Occluders, visible_landmarks

# The drone flies the street graph at this height above ground: an urban
# corridor over the streets, just above the eaves of the common 5-6 storey
# blocks (about 20 m) but below the 7-9 storey blocks, towers, domes and
# spires, which still hide landmarks. At 15 m a described landmark was in view
# from only 9 % of nodes (the task became a blind search); at 25 m, 18 %.
CRUISE_ALT_M = 25.0
# A goal POI counts as reachable when a graph node is within this distance.
GOAL_SNAP_M = 50.0


@dataclass
class World:
    """Everything an episode needs; plain data, picklable."""

    city: City
    graph: StreetGraph
    landmarks: list[Building]
    goals: list[Poi]  # POIs with a unique name within GOAL_SNAP_M of a node
    goal_nodes: list[int]  # the node each goal snaps to
    visible: list[list[int]]  # per node: indices into `landmarks` visible from it
    cruise_alt: float = CRUISE_ALT_M
    view_range: float = DEFAULT_RANGE_M
    network_choice: dict = field(default_factory=dict)  # network type -> POIs within 50 m

    # -- visibility from other altitudes (a look-up climbs above the cruise altitude) --------------
    @property
    def occluders(self) -> Occluders:
        """Every building's footprint edges for line-of-sight tests: built on first use, kept on the world.

        The same occluders `build_world` computed `visible` with (`Occluders.from_buildings(city.buildings)`);
        not pickled (`__getstate__`), so the cache file stays as it was and a loaded world builds them once.
        """
        occ = self.__dict__.get("_occluders")
        if occ is None:
            occ = self.__dict__["_occluders"] = Occluders.from_buildings(self.city.buildings)
        return occ

    def visible_from(self, node: int, altitude: float | None = None) -> list[int]:
        """Indices into `landmarks` in line of sight from `node` with the camera at `altitude` (m above ground).

        At the cruise altitude (or None) this is the precomputed `visible[node]`; at another altitude it is
        computed with the same rule and range (`visible_landmarks`) and cached per (node, altitude) on the world,
        so every episode and study shares it.
        """
        if altitude is None or altitude == self.cruise_alt:
            return self.visible[node]
        cache = self.__dict__.setdefault("_visible_at", {})
        key = (int(node), float(altitude))
        if key not in cache:
            cache[key] = visible_landmarks(self.graph.xy[node], float(altitude), self.landmarks, self.occluders,
                                           self.view_range)
        return cache[key]

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_occluders", "_visible_at")}

    def prominence(self) -> dict[str, int]:
        """For each landmark name, from how many nodes it can be seen."""
        counts = Counter(j for v in self.visible for j in v)
        return {lm.name: counts.get(j, 0) for j, lm in enumerate(self.landmarks)}

    @property
    def origin(self):
        return self.city.origin

    def landmark(self, name: str) -> Building:
        for lm in self.landmarks:
            if lm.name == name:
                return lm
        raise KeyError(f"no landmark named {name!r}")

    def goal_by_name(self, name: str) -> Poi | None:
        return next((p for p in self.goals if p.name == name), None)


def poi_coverage(graph: StreetGraph, pois: list[Poi], radius: float = GOAL_SNAP_M) -> int:
    """How many POIs have a graph node within `radius` metres."""
    if not pois:
        return 0
    P = np.array([p.xy for p in pois])
    count = 0
    for chunk in np.array_split(P, max(1, len(P) // 200)):
        d = np.hypot(chunk[:, None, 0] - graph.xy[None, :, 0], chunk[:, None, 1] - graph.xy[None, :, 1])
        count += int((d.min(axis=1) <= radius).sum())
    return count


def choose_network(city: City) -> tuple[str, StreetGraph, dict[str, int]]:
    """The network type whose largest component brings most POIs within 50 m of a node.

    Ties go to the graph with fewer nodes (a smaller action space for the same goals).
    """
    scores: dict[str, int] = {}
    graphs: dict[str, StreetGraph] = {}
    for ntype, edges in city.streets.items():
        g = discretise(edges, city.origin, ntype).largest_component()
        graphs[ntype] = g
        scores[ntype] = poi_coverage(g, city.pois)
    best = max(scores, key=lambda t: (scores[t], -graphs[t].n_nodes))
    return best, graphs[best], scores


def build_world(city: City, network_type: str | None = None, cruise_alt: float = CRUISE_ALT_M,
                view_range: float = DEFAULT_RANGE_M) -> World:
    """Discretise streets, pick goals and precompute landmark visibility per node."""
    if network_type is None:
        network_type, graph, scores = choose_network(city)
    else:
        graph = discretise(city.streets[network_type], city.origin, network_type).largest_component()
        scores = {network_type: poi_coverage(graph, city.pois)}
    landmarks = city.landmarks
    name_counts = Counter(p.name for p in city.pois)
    goals, goal_nodes = [], []
    for p in city.pois:
        if name_counts[p.name] != 1:
            continue  # a chain shop with several branches cannot be a unique goal
        n = graph.nearest_node(*p.xy)
        if np.hypot(*(graph.xy[n] - p.xy)) <= GOAL_SNAP_M:
            goals.append(p)
            goal_nodes.append(n)
    occ = Occluders.from_buildings(city.buildings)
    visible = [visible_landmarks(graph.xy[i], cruise_alt, landmarks, occ, view_range) for i in range(graph.n_nodes)]
    world = World(city=city, graph=graph, landmarks=landmarks, goals=goals, goal_nodes=goal_nodes,
                  visible=visible, cruise_alt=cruise_alt, view_range=view_range, network_choice=scores)
    world.__dict__["_occluders"] = occ  # the same ones, kept for `visible_from` (not pickled)
    return world

"""The benchmark world: the onboard map + goals and landmark visibility.

Built once from the OSM extract's onboard map (`onboard.map.build.build_map`,
see `sim.world.cache.load_world`), so the corridor graph the benchmark scores
is the one a vehicle carries; then used read-only by perception, the renderer,
task generation and episodes. What the simulator adds is what only an oracle
knows: which POIs make goals and what can be seen from where.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from onboard.map.city import Building, Poi, landmark_aliases
from onboard.map.corridors import StreetGraph
from onboard.map.onboard_map import OnboardMap
from sim.world.visibility import DEFAULT_RANGE_M, Occluders, visible_landmarks

# The drone flies the street graph at this height above ground: an urban
# corridor over the streets, just above the eaves of the common 5-6 storey
# blocks (about 20 m) but below the 7-9 storey blocks, towers, domes and
# spires, which still hide landmarks. Lower, a described landmark is in view from
# far fewer nodes and the task becomes a blind search (docs/BENCHMARKS.md, "Why the defaults").
CRUISE_ALT_M = 25.0
# A goal POI counts as reachable when a graph node is within this distance.
GOAL_SNAP_M = 50.0


@dataclass
class World:
    """Everything an episode needs; plain data, picklable."""

    map: OnboardMap  # the city: corridor graph, buildings, landmarks, POIs
    landmarks: list[Building]
    goals: list[Poi]  # POIs with a unique name within GOAL_SNAP_M of a node
    goal_nodes: list[int]  # the node each goal snaps to
    visible: list[list[int]]  # per node: indices into `landmarks` visible from it
    cruise_alt: float = CRUISE_ALT_M
    view_range: float = DEFAULT_RANGE_M

    @property
    def graph(self) -> StreetGraph:
        """The corridor graph: the onboard map's own (one street graph, not two)."""
        return self.map.graph

    @property
    def city(self) -> OnboardMap:
        """The map the world was built from (`.buildings`, `.pois`, `.name`, `.origin`, `.bounds`)."""
        return self.map

    @property
    def network_choice(self) -> dict[str, int]:
        """Network type -> named places within reach of its corridors, as the map build scored them."""
        return self.map.header.network_scores

    # -- visibility from other altitudes (a look-up climbs above the cruise altitude) --------------
    @property
    def occluders(self) -> Occluders:
        """Every building's footprint edges for line-of-sight tests: built on first use, kept on the world.

        The same occluders `build_world` computed `visible` with (`Occluders.from_buildings(map.buildings)`);
        not pickled (`__getstate__`), so the cache file stays as it was and a loaded world builds them once.
        """
        occ = self.__dict__.get("_occluders")
        if occ is None:
            occ = self.__dict__["_occluders"] = Occluders.from_buildings(self.map.buildings)
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
        return self.map.origin

    def aliases(self) -> dict[str, str]:
        """The landmarks' other names the reader may use (alias -> name; `onboard.map.city.landmark_aliases`)."""
        return landmark_aliases(self.landmarks, self.city.pois)

    def landmark(self, name: str) -> Building:
        for lm in self.landmarks:
            if lm.name == name:
                return lm
        raise KeyError(f"no landmark named {name!r}")

    def goal_by_name(self, name: str) -> Poi | None:
        return next((p for p in self.goals if p.name == name), None)


def build_world(onboard_map: OnboardMap, cruise_alt: float = CRUISE_ALT_M,
                view_range: float = DEFAULT_RANGE_M) -> World:
    """Pick goals among the map's POIs and precompute landmark visibility per corridor node."""
    graph = onboard_map.graph
    landmarks = onboard_map.landmarks
    name_counts = Counter(p.name for p in onboard_map.pois)
    goals, goal_nodes = [], []
    for p in onboard_map.pois:
        if name_counts[p.name] != 1:
            continue  # a chain shop with several branches cannot be a unique goal
        n = graph.nearest_node(*p.xy)
        if np.hypot(*(graph.xy[n] - p.xy)) <= GOAL_SNAP_M:
            goals.append(p)
            goal_nodes.append(n)
    occ = Occluders.from_buildings(onboard_map.buildings)
    visible = [visible_landmarks(graph.xy[i], cruise_alt, landmarks, occ, view_range) for i in range(graph.n_nodes)]
    world = World(map=onboard_map, landmarks=landmarks, goals=goals, goal_nodes=goal_nodes,
                  visible=visible, cruise_alt=cruise_alt, view_range=view_range)
    world.__dict__["_occluders"] = occ  # the same ones, kept for `visible_from` (not pickled)
    return world

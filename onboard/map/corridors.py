"""The flight corridors: the street graph discretised to nodes about every 50 m, as PReP built its cities.

Why this construction: the OSM ways of a city centre are broken into many
short pieces (crossings, sidewalks on both sides of a street, tram stops), so
cutting each way every 50 m would leave clusters of nodes a few metres apart.
Instead every street is sampled densely (every `sample_m`), node centres are
picked greedily among the samples so that no two are closer than
`min_spacing_m` in the plane (street intersections first, so they become
nodes), every sample is owned by its nearest centre, and two nodes are
neighbours when a street runs from one's cell into the other's. Because every
street piece either stays in one cell or crosses into the next, each connected
street component becomes exactly one connected node graph, and the spacing
between neighbours lands around 50 m.

The drone flies at a cruise altitude along this graph: urban corridors over
streets, below the roofs of the taller blocks, so landmarks can be hidden by
buildings and the agent has to move along streets rather than fly straight.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from onboard.map.city import StreetEdge
from onboard.map.compass import bearing_deg, compass8

# Defaults of the two build parameters (`onboard.map.build_params.BuildParams`, config `map.build`);
# a map records the values it was built with in its header.
SAMPLE_M = 5.0
MIN_SPACING_M = 40.0
NODE_SPACING_M = 50.0  # the nominal step length the benchmark talks about (what MIN_SPACING_M yields)


@dataclass(frozen=True)
class Neighbour:
    """A move the agent can make: the node id, its compass word and its geometry."""

    node: int
    direction: str  # N, NE, E, SE, S, SW, W, NW
    bearing: float  # degrees clockwise from north
    distance: float  # metres


@dataclass
class StreetGraph:
    """Nodes (ENU + geodetic) and undirected edges; adjacency sorted by bearing."""

    xy: np.ndarray  # (n, 2) ENU metres
    latlon: np.ndarray  # (n, 2) degrees
    adj: list[list[int]]
    network_type: str
    origin: GeoPoint
    _nbr_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_nodes(self) -> int:
        return len(self.xy)

    def edges(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(self.n_nodes) for b in self.adj[a] if a < b]

    def edge_length(self, a: int, b: int) -> float:
        return float(np.hypot(*(self.xy[b] - self.xy[a])))

    def neighbours(self, node: int) -> list[Neighbour]:
        """The moves from `node`, each with its compass direction (N, NE, ...)."""
        if node not in self._nbr_cache:
            out = []
            for b in self.adj[node]:
                d = self.xy[b] - self.xy[node]
                brg = bearing_deg(d[0], d[1])
                out.append(Neighbour(b, compass8(brg), round(brg, 1), round(float(np.hypot(*d)), 1)))
            self._nbr_cache[node] = sorted(out, key=lambda n: n.bearing)
        return self._nbr_cache[node]

    def nearest_node(self, x: float, y: float) -> int:
        return int(np.argmin(np.hypot(self.xy[:, 0] - x, self.xy[:, 1] - y)))

    def nearest_node_latlon(self, lat: float, lon: float) -> int:
        north, east = ned_from_geo(self.origin, lat, lon)
        return self.nearest_node(east, north)

    def hops_from(self, source: int) -> np.ndarray:
        """Breadth-first hop counts from `source` (-1 where unreachable)."""
        dist = np.full(self.n_nodes, -1, dtype=int)
        dist[source] = 0
        q = deque([source])
        while q:
            a = q.popleft()
            for b in self.adj[a]:
                if dist[b] < 0:
                    dist[b] = dist[a] + 1
                    q.append(b)
        return dist

    def metres_from(self, source: int) -> np.ndarray:
        """Dijkstra path length in metres from `source` (inf where unreachable)."""
        dist = np.full(self.n_nodes, np.inf)
        dist[source] = 0.0
        heap = [(0.0, source)]
        while heap:
            d, a = heapq.heappop(heap)
            if d > dist[a]:
                continue
            for b in self.adj[a]:
                nd = d + self.edge_length(a, b)
                if nd < dist[b]:
                    dist[b] = nd
                    heapq.heappush(heap, (nd, b))
        return dist

    def shortest_path(self, source: int, target: int, metres: bool = False) -> list[int]:
        """A fewest-hops (or, with `metres`, shortest-length) path from source to target; [] if none."""
        if metres:
            return self._dijkstra_path(source, target)
        prev = {source: source}
        q = deque([source])
        while q and target not in prev:
            a = q.popleft()
            for b in self.adj[a]:
                if b not in prev:
                    prev[b] = a
                    q.append(b)
        return _walk_back(prev, source, target)

    def _dijkstra_path(self, source: int, target: int) -> list[int]:
        dist = {source: 0.0}
        prev = {source: source}
        heap = [(0.0, source)]
        while heap:
            d, a = heapq.heappop(heap)
            if a == target:
                break
            if d > dist[a]:
                continue
            for b in self.adj[a]:
                nd = d + self.edge_length(a, b)
                if nd < dist.get(b, np.inf):
                    dist[b], prev[b] = nd, a
                    heapq.heappush(heap, (nd, b))
        return _walk_back(prev, source, target)

    def components(self) -> list[list[int]]:
        seen = np.zeros(self.n_nodes, dtype=bool)
        comps = []
        for s in range(self.n_nodes):
            if not seen[s]:
                comp = np.flatnonzero(self.hops_from(s) >= 0)
                seen[comp] = True
                comps.append(comp.tolist())
        return sorted(comps, key=len, reverse=True)

    def largest_component(self) -> "StreetGraph":
        """The graph restricted to its largest connected component, renumbered."""
        keep = self.components()[0]
        index = {old: new for new, old in enumerate(keep)}
        adj = [sorted(index[b] for b in self.adj[a] if b in index) for a in keep]
        return StreetGraph(self.xy[keep], self.latlon[keep], adj, self.network_type, self.origin)

    def to_networkx(self):
        """A networkx Graph with `length` (metres) on every edge, for checks and plots."""
        import networkx as nx

        g = nx.Graph()
        for i, (x, y) in enumerate(self.xy):
            g.add_node(i, x=float(x), y=float(y))
        for a, b in self.edges():
            g.add_edge(a, b, length=self.edge_length(a, b))
        return g


@dataclass
class DenseStreets:
    """Streets sampled every `sample_m`: points, their links and OSM degree."""

    xy: np.ndarray
    links: np.ndarray  # (m, 2) index pairs
    degree: np.ndarray  # OSM junction degree for sample points that are OSM nodes, else 2


def densify(edges: list[StreetEdge], step: float = SAMPLE_M) -> DenseStreets:
    """Resample each street polyline every `step` metres, sharing OSM end nodes."""
    key_index: dict[int, int] = {}
    pts: list[np.ndarray] = []
    links: list[tuple[int, int]] = []
    osm_degree: dict[int, int] = {}
    for e in edges:
        osm_degree[e.u] = osm_degree.get(e.u, 0) + 1
        osm_degree[e.v] = osm_degree.get(e.v, 0) + 1

    def endpoint(osm_id: int, p: np.ndarray) -> int:
        if osm_id not in key_index:
            key_index[osm_id] = len(pts)
            pts.append(p)
        return key_index[osm_id]

    for e in edges:
        c = e.coords
        if len(c) < 2:
            continue
        seg = np.hypot(*np.diff(c, axis=0).T)
        total = float(seg.sum())
        a = endpoint(e.u, c[0])
        b = endpoint(e.v, c[-1])
        n_inner = int(total // step)
        prev = a
        if n_inner >= 1 and total > 0:
            cum = np.concatenate([[0.0], np.cumsum(seg)])
            for s in np.linspace(0, total, n_inner + 2)[1:-1]:
                x = np.interp(s, cum, c[:, 0])
                y = np.interp(s, cum, c[:, 1])
                idx = len(pts)
                pts.append(np.array([x, y]))
                links.append((prev, idx))
                prev = idx
        if prev != b:
            links.append((prev, b))
    degree = np.full(len(pts), 2, dtype=int)
    for osm_id, idx in key_index.items():
        degree[idx] = osm_degree[osm_id]
    return DenseStreets(np.array(pts), np.array(links, dtype=int), degree)


class _Grid:
    """A uniform bucket grid for radius queries (no scipy in the runtime deps)."""

    def __init__(self, xy: np.ndarray, cell: float):
        self.xy, self.cell = xy, cell
        self.buckets: dict[tuple[int, int], list[int]] = {}
        for i, (x, y) in enumerate(xy):
            self.buckets.setdefault((int(x // cell), int(y // cell)), []).append(i)

    def near(self, x: float, y: float) -> list[int]:
        """Indices in the 3x3 cells around (x, y): a superset of those within `cell`."""
        cx, cy = int(x // self.cell), int(y // self.cell)
        out: list[int] = []
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                out.extend(self.buckets.get((cx + dx, cy + dy), ()))
        return out


def discretise(edges: list[StreetEdge], origin: GeoPoint, network_type: str,
               min_spacing: float = MIN_SPACING_M, sample_m: float = SAMPLE_M) -> StreetGraph:
    """Turn street polylines into a graph with a node about every 50 m (see module doc)."""
    dense = densify(edges, sample_m)
    grid = _Grid(dense.xy, min_spacing)
    # Intersections first (higher OSM degree), then the rest in street order.
    order = np.lexsort((np.arange(len(dense.xy)), -dense.degree))
    blocked = np.zeros(len(dense.xy), dtype=bool)
    centres: list[int] = []
    for i in order:
        if blocked[i]:
            continue
        centres.append(int(i))
        cand = np.array(grid.near(*dense.xy[i]))
        d = np.hypot(*(dense.xy[cand] - dense.xy[i]).T)
        blocked[cand[d < min_spacing]] = True
    cxy = dense.xy[centres]
    cgrid = _Grid(cxy, min_spacing)
    owner = np.empty(len(dense.xy), dtype=int)
    for i, (x, y) in enumerate(dense.xy):
        cand = np.array(cgrid.near(x, y))
        owner[i] = cand[np.argmin(np.hypot(cxy[cand, 0] - x, cxy[cand, 1] - y))]
    adj_sets: list[set[int]] = [set() for _ in centres]
    for a, b in dense.links:
        oa, ob = owner[a], owner[b]
        if oa != ob:
            adj_sets[oa].add(int(ob))
            adj_sets[ob].add(int(oa))
    lat, lon = geo_from_ned(origin, cxy[:, 1], cxy[:, 0])
    return StreetGraph(xy=cxy, latlon=np.column_stack([lat, lon]), adj=[sorted(s) for s in adj_sets],
                       network_type=network_type, origin=origin)


def _walk_back(prev: dict[int, int], source: int, target: int) -> list[int]:
    """The path source -> target from a search's predecessor map; [] when the search never reached target."""
    if target not in prev:
        return []
    path = [target]
    while path[-1] != source:
        path.append(prev[path[-1]])
    return path[::-1]

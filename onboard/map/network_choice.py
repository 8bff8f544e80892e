"""Which street network the corridors follow: the one that reaches the most named places.

An extract holds several street networks (pyrosm's driving, walking, cycling,
all). A drone flying the driving network over a pedestrian old town could
never get near half of its cafés; the full network doubles the waypoints for
few more places. So every type is discretised and scored by how many named
places have a corridor node within `poi_radius_m`, and the best wins, ties
going to the smaller graph (fewer moves to choose from for the same reach).
"""

from __future__ import annotations

import numpy as np

from onboard.map.build_params import BuildParams
from onboard.map.city import City, Poi
from onboard.map.corridors import StreetGraph, discretise


def poi_coverage(graph: StreetGraph, pois: list[Poi], radius: float) -> int:
    """How many POIs have a graph node within `radius` metres."""
    if not pois:
        return 0
    P = np.array([p.xy for p in pois])
    count = 0
    for chunk in np.array_split(P, max(1, len(P) // 200)):
        d = np.hypot(chunk[:, None, 0] - graph.xy[None, :, 0], chunk[:, None, 1] - graph.xy[None, :, 1])
        count += int((d.min(axis=1) <= radius).sum())
    return count


def corridor_graph(city: City, network_type: str, params: BuildParams) -> StreetGraph:
    """One network type's streets discretised, kept to its largest connected part (a drone cannot hop gaps)."""
    return discretise(city.streets[network_type], city.origin, network_type, min_spacing=params.min_spacing_m,
                      sample_m=params.sample_m).largest_component()


def choose_network(city: City, params: BuildParams) -> tuple[str, StreetGraph, dict[str, int]]:
    """(network type, its corridor graph, POIs reached per type scored); a fixed `params.network` scores only itself."""
    types = list(city.streets) if params.network == "auto" else [params.network]
    missing = [t for t in types if t not in city.streets]
    if missing:
        raise ValueError(f"the extract has no {', '.join(missing)} street network (it has {', '.join(city.streets)})")
    graphs = {t: corridor_graph(city, t, params) for t in types}
    scores = {t: poi_coverage(g, city.pois, params.poi_radius_m) for t, g in graphs.items()}
    best = max(scores, key=lambda t: (scores[t], -graphs[t].n_nodes))
    return best, graphs[best], scores

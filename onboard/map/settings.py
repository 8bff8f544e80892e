"""The `map:` section of the vehicle's config: which map file to fly with and how maps are built."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from common.typed_config import ranged
from onboard.map.build_params import BuildParams

DEFAULT_MAP_NAME = "map.aeriemap"


@dataclass(frozen=True)
class MapConfig:
    # The onboard map file (`aerie map build` writes one, `make flash` ships it); "" = fly without a
    # map. A relative path is under data_dir: map.aeriemap is <data_dir>/map.aeriemap.
    path: str = ""
    # Refuse a map built from any other extract than the one with this sha256 (`aerie map info`
    # shows a map's); "" accepts a map of any extract.
    extract_sha256: str = ""
    # How far a map position may be off (metres, one standard deviation): OSM footprints against where
    # the camera fixes a building. The agent trusts a map landmark as a landmark fixed this well.
    position_uncertainty_m: float = ranged(10.0, 0.0, 1000.0)
    # `aerie fly` with a map takes the moves on offer from the corridor waypoint nearest the position
    # the autopilot reports; farther than this (metres) from every waypoint, the vehicle is off the
    # map and the mission ends rather than guess.
    max_snap_m: float = ranged(30.0, 1.0, 1000.0)
    # Bytes the members of a map file may inflate to; a file that declares more is refused before
    # anything is inflated (a sealed file is whole, not necessarily harmless: a zip bomb seals too).
    max_inflated_bytes: int = ranged(268_435_456, 1_048_576, 4_294_967_296)
    # How `aerie map build` and `make flash` build a map. A map file keeps the parameters it was
    # built with in its header; changing these does not change a map already built.
    build: BuildParams = field(default_factory=BuildParams)

    def __post_init__(self) -> None:
        if self.extract_sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.extract_sha256):
            raise ValueError(f"extract_sha256 must be 64 lower-case hex digits or empty, got {self.extract_sha256!r}")


def map_file_path(data_dir: str | Path, cfg: MapConfig) -> Path | None:
    """The configured map file (relative paths under `data_dir`), or None when no map is configured."""
    if not cfg.path:
        return None
    path = Path(cfg.path).expanduser()
    return path if path.is_absolute() else Path(data_dir).expanduser() / path


def default_map_path(data_dir: str | Path, cfg: MapConfig) -> Path:
    """Where `aerie map build` writes and `aerie map info` looks by default: the configured file, else
    <data_dir>/map.aeriemap."""
    return map_file_path(data_dir, cfg) or Path(data_dir).expanduser() / DEFAULT_MAP_NAME

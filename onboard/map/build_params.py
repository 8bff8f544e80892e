"""How a map's corridors are built from an extract: the parameters a map file records.

One frozen dataclass serves as the `map.build` config section (range-checked
by `common.typed_config`) and as the header's record of how a map file was
made, so `aerie map info` shows exactly what `aerie map build` used and two
maps built differently from the same extract can be told apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.typed_config import ranged
from onboard.map.corridors import MIN_SPACING_M, SAMPLE_M
from onboard.map.osm_extract import NETWORK_TYPES

# "auto" picks the network type whose corridors reach the most named places.
NETWORK_CHOICES = ("auto",) + NETWORK_TYPES
# A named place counts as reachable when a corridor node is within this distance (metres).
POI_RADIUS_M = 50.0


@dataclass(frozen=True)
class BuildParams:
    # Streets are resampled every this many metres before corridor nodes are picked among the samples.
    sample_m: float = ranged(SAMPLE_M, 0.5, 50.0)
    # No two corridor nodes closer than this (metres); neighbours end up about 1.25 times this apart.
    min_spacing_m: float = ranged(MIN_SPACING_M, 5.0, 1000.0)
    # Which street network the corridors follow: auto (the type whose largest connected part
    # brings most named places within poi_radius_m of a node), driving, walking, cycling or all.
    network: str = "auto"
    # The reach that "auto" scores network types by (metres).
    poi_radius_m: float = ranged(POI_RADIUS_M, 1.0, 1000.0)

    def __post_init__(self) -> None:
        if self.network not in NETWORK_CHOICES:
            raise ValueError(f"network must be one of {', '.join(NETWORK_CHOICES)}, got {self.network!r}")
        if not self.sample_m < self.min_spacing_m:
            raise ValueError(f"sample_m ({self.sample_m}) must be below min_spacing_m ({self.min_spacing_m}): "
                             "corridor nodes are picked among the samples")

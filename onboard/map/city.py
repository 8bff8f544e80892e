"""The city as plain data: buildings, landmarks, POIs and street polylines in ENU.

What `osm_extract` parses an extract into. Nothing here depends on geopandas,
so the onboard map (`onboard_map.OnboardMap`) carries these same records and a
map file turns back into them without pyrosm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from common.geodesy import GeoPoint
from onboard.vocab.text_fold import fold

# Storey height used to turn `building:levels` into metres, plus a roof allowance
# per building. 3.2 m per storey is a common planning figure for European
# residential/office blocks; the roof allowance is added once.
STOREY_HEIGHT_M = 3.2
ROOF_ALLOWANCE_M = 1.5
# Buildings tagged with neither `height` nor `building:levels` get this height:
# the centre of Helsinki is mostly 5-7 storey blocks (about 20 m), see
# `aerie world info` for the distribution of tagged heights it is checked against.
DEFAULT_BUILDING_HEIGHT_M = 20.0


@dataclass
class Building:
    """One building footprint extruded to `height` metres.

    `height_source` says where the height came from: "height" (the OSM tag),
    "levels" (building:levels x STOREY_HEIGHT_M + ROOF_ALLOWANCE_M) or "default".
    """

    id: int
    name: str | None
    footprint: np.ndarray  # (k, 2) exterior ring in ENU metres, not closed
    height: float
    height_source: str
    kind: str = "yes"
    # Other names people call it by (OSM name:en, name:sv, alt_name, short_name, official_name): "Helsinki
    # Cathedral" is Helsingin tuomiokirkko. The instruction reader matches them as the name itself.
    aliases: tuple[str, ...] = ()

    @property
    def centroid(self) -> np.ndarray:
        return polygon_centroid(self.footprint)


@dataclass
class Poi:
    """A named point of interest (a goal candidate): café, shop, statue ...

    `possibly_stale` is true for every POI read from an extract: shops and cafés open,
    close and rename between the extract's date and a flight, so a map POI is a hint
    the vehicle must confirm by reading the sign, never a fact.
    """

    id: int
    name: str
    kind: str  # e.g. "cafe", "restaurant", "clothes", "artwork"
    xy: np.ndarray  # (2,) ENU metres
    lat: float
    lon: float
    possibly_stale: bool = True


@dataclass
class StreetEdge:
    """One OSM way segment between two OSM nodes, with its ENU polyline."""

    u: int
    v: int
    coords: np.ndarray  # (k, 2) ENU, from u to v


@dataclass
class City:
    """Everything loaded from the OSM extract, projected to the local frame."""

    name: str
    origin: GeoPoint
    buildings: list[Building]
    pois: list[Poi]
    streets: dict[str, list[StreetEdge]]  # network type -> edges
    source_sha256: str
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # min e, min n, max e, max n
    meta: dict = field(default_factory=dict)


def named_landmarks(buildings: list[Building]) -> list[Building]:
    """Named buildings, one per name (the largest footprint wins), sorted by name."""
    best: dict[str, Building] = {}
    for b in buildings:
        if b.name and (b.name not in best or polygon_area(b.footprint) > polygon_area(best[b.name].footprint)):
            best[b.name] = b
    return sorted(best.values(), key=lambda b: b.name)


def landmark_aliases(landmarks: list[Building], pois: list[Poi]) -> dict[str, str]:
    """Every alias of the named landmarks -> the landmark's name.

    An alias two landmarks share is nobody's, and so is one that is also a place's name among `pois`
    (the POI "The National Archives of Finland" in the archive's building): a description names that
    place as its goal, and read as the building it would become a landmark (ordinary dev, the subject
    form "Suomen Pankki lies 550 m south of The National Archives of Finland").
    """
    def key(name: str) -> str:
        k = fold(" ".join(name.split()))
        return k[4:] if k.startswith("the ") else k

    owners: dict[str, set[str]] = {}
    for b in landmarks:
        for a in b.aliases:
            owners.setdefault(a, set()).add(b.name or "")
    taken = {key(b.name or "") for b in landmarks} | {key(p.name) for p in pois}
    return {a: next(iter(o)) for a, o in owners.items() if len(o) == 1 and key(a) not in taken}


def polygon_area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)


def polygon_centroid(ring: np.ndarray) -> np.ndarray:
    x, y = ring[:, 0], ring[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    a = cross.sum() / 2.0
    if abs(a) < 1e-9:
        return ring.mean(axis=0)
    cx = ((x + np.roll(x, -1)) * cross).sum() / (6.0 * a)
    cy = ((y + np.roll(y, -1)) * cross).sum() / (6.0 * a)
    return np.array([cx, cy])

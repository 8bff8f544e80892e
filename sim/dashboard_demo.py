"""A scripted flight through a real telemetry link, to look at the dashboard without a vehicle.

``python -m sim.dashboard_demo [--port 8765] [--steps 240] [--buildings-radius 400]`` starts a
:class:`TelemetryPublisher` and a :class:`GroundStation` on loopback (no CURVE,
temporary directory) with the dashboard, and publishes a scripted flight:
states along a survey path, agent steps with goal/decision/reason and an
anchor graph, detections and events. The browser test flies the same script.
It is not the simulated vehicle: positions come from the script, not physics.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from contract.messages import (AgentStep, Anchor, AnchorGraph, Detection, Detections, FlightStart, MapImage, Place,
                               Pose, State)

GOAL = "the red kiosk at the north end of the square"


def _position(u: float) -> tuple[float, float]:
    """(east, north) at fraction ``u`` of the path: out along a street, a loop around a block, back."""
    if u < 0.3:
        return 0.0, 120.0 * u / 0.3
    if u < 0.8:
        a = (u - 0.3) / 0.5 * 2 * math.pi
        return 60.0 - 60.0 * math.cos(a), 120.0 + 45.0 * math.sin(a)
    return 0.0, 120.0 * (1 - (u - 0.8) / 0.2)


def waypoint(i: int, steps: int) -> tuple[float, float, float]:
    """(east, north, yaw_deg) of step ``i`` of ``steps``."""
    u = i / max(1, steps - 1)
    e, n = _position(u)
    e2, n2 = _position(min(1.0, u + 1e-3))
    if (e2, n2) == (e, n):
        e2, n2 = e, n - 1.0
    return e, n, math.degrees(math.atan2(e2 - e, n2 - n)) % 360


def state_at(i: int, steps: int) -> State:
    e, n, yaw = waypoint(i, steps)
    phase = "TAKEOFF" if i < 3 else "LAND" if i >= steps - 3 else "OFFBOARD"
    return State.from_state({"north_m": n, "east_m": e, "down_m": -30.0, "rel_alt_m": 30.0, "yaw_deg": yaw,
            "vn_m_s": 2.0 * math.cos(math.radians(yaw)), "ve_m_s": 2.0 * math.sin(math.radians(yaw)),
            "battery_percent": 98.0 - 60.0 * i / max(1, steps), "battery_voltage_v": 16.6 - 1.8 * i / max(1, steps),
            "flight_mode": phase, "armed": True, "in_air": i < steps - 1,
            "landed_state": "IN_AIR" if i < steps - 1 else "ON_GROUND", "gps_fix": "FIX_3D", "gps_satellites": 14, "global_position_ok": True,
            "home_position_ok": True, "local_position_ok": True, "armable": True,
            "lat": float("nan"), "lon": float("nan")})


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


def scripted_flight(pub: Any, *, steps: int = 240, period_s: float = 0.05, stop: threading.Event | None = None,
                    before_step: Callable[[int], None] | None = None) -> int:
    """Publish the script on ``pub``; returns how many steps were flown (fewer if ``stop`` was set).

    ``before_step(i)`` is called before step ``i`` (a test uses it to hold the flight
    until the browser has seen its start, so growth is observable however slow the machine).
    """
    pub.flight_start(FlightStart(mission="demo: find the kiosk"))
    pub.event("mission_start", {"goal": GOAL})
    anchors: list[dict[str, Any]] = []
    path: list[tuple[float, float]] = []
    places: list[dict[str, Any]] = []
    flown = 0
    for i in range(steps):
        if stop is not None and stop.is_set():
            break
        if before_step is not None:
            before_step(i)
        pub.publish("state", state_at(i, steps))
        e, n, yaw = waypoint(i, steps)
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
            dist = abs(150.0 - n) + abs(60.0 - e)
            graph = AnchorGraph(tuple(Anchor(a["anchor_id"], a["x"], a["y"], a["place_id"], tuple(a["neighbours"]))
                                      for a in anchors),
                                tuple(Place(p["place_id"], p["place_type"], tuple(p["anchors"])) for p in places))
            pub.publish("agent_step", AgentStep(
                step=i // 4, current_state=f"over a {'square' if n > 100 else 'street'}, heading {yaw:.0f} deg",
                action=action, reason=f"the kiosk should be {dist:.0f} m ahead; keep the street on the left",
                pose=Pose(round(e, 1), round(n, 1), 30.0, round(yaw, 1)),
                distance_estimate_m=round(dist, 1), goal=GOAL, anchor_graph=graph))
        if i % 8 == 4:
            pub.publish("detections", Detections((
                Detection("kiosk", 0.81, 12.0, 40.0, 165.0, 62.0),
                Detection("car", 0.64, -30.0, 18.5, round(n + 12.0, 1), round(e - 10.0, 1))), step=i // 4))
        if i == steps // 2:
            pub.event("pattern_stuck", {"window": 10})
        flown += 1
        time.sleep(period_s)
    pub.event("mission_end", {"result": "landed"})
    pub.flight_end({"reason": "landed"})
    return flown


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
    parser.add_argument("--flights", type=int, default=2)
    parser.add_argument("--buildings-radius", type=float, default=0.0,
                        help="draw the simulated world's buildings within this radius (m) of its origin")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tcfg = TelemetryConfig(pub_endpoint="tcp://127.0.0.1:0", replay_endpoint="tcp://127.0.0.1:0",
                               journal_path=str(Path(tmp) / "journal.sqlite"), state_rate_hz=0.0,
                               map_min_interval_s=0.0, curve=False)
        with TelemetryPublisher(tcfg, "demo-1") as pub:
            gcfg = dataclasses.replace(GroundConfig(), db_path=str(Path(tmp) / "flight_log.sqlite"), curve=False,
                                       vehicles=[VehicleLinkConfig("demo-1", pub.pub_endpoint, pub.replay_endpoint)],
                                       dashboard_port=args.port, stats_interval_s=0.0,
                                       dashboard_buildings_radius_m=args.buildings_radius)
            station = GroundStation(gcfg)
            thread = threading.Thread(target=station.run, daemon=True)
            thread.start()
            station.started.wait(10)
            with DashboardServer.from_config(gcfg, tmp) as dash:
                print(f"dashboard at {dash.url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
                try:
                    for _ in range(args.flights):
                        scripted_flight(pub, steps=args.steps, period_s=args.period)
                        time.sleep(1.0)
                    threading.Event().wait()
                except KeyboardInterrupt:
                    pass
            station.stop()
            thread.join(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

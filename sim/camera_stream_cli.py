"""`aerie sim camera`: the simulated vehicle's camera as an MJPEG stream (`sim/camera_stream.py`).

    aerie sim vehicle ...                          # prints its control_port on the ready line
    aerie sim camera --control-port 14600 --calibration sim_camera.yaml
    aerie fly --perception camera --camera http://127.0.0.1:8554/stream.mjpg ...

The camera (size, field of view, mounting pitch) is the configuration's ``supervisor`` camera
(`--config`, default the shipped defaults), so the supervisor's geometry and the rendered views agree.
Prints one JSON line with the stream's URL and the calibration file, then serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aerie sim camera", description=__doc__.splitlines()[0])
    ap.add_argument("--control-port", type=int, required=True, help="the sim vehicle's JSON control channel (UDP)")
    ap.add_argument("--host", default="127.0.0.1", help="address to serve the stream on")
    ap.add_argument("--port", type=int, default=8554, help="HTTP port of the stream (0: any free)")
    ap.add_argument("--fps", type=float, default=4.0, help="frames a second at most (rendered only while watched)")
    ap.add_argument("--latency", type=float, default=0.3, help="seconds from the pose a frame shows to its sending")
    ap.add_argument("--calibration", default=None, help="write the simulated camera's OpenCV calibration file here")
    ap.add_argument("--config", default=None, help="the vehicle config whose supervisor camera to render")
    args = ap.parse_args(argv)

    from onboard.config import AerieConfig, load_config
    from sim.camera_stream import CameraStream, truth_over_udp, write_calibration
    from sim.world.cache import load_world
    from sim.world.render import Camera

    sup = (load_config(args.config) if args.config else AerieConfig()).supervisor
    try:
        stream = CameraStream(load_world(None), truth_over_udp(args.control_port), camera=Camera.from_config(sup),
                              fps=args.fps, latency_s=args.latency, host=args.host, port=args.port)
    except ValueError as exc:
        print(f"aerie sim camera: {exc}", file=sys.stderr)
        return 2
    calibration = None
    if args.calibration:
        calibration = str(write_calibration(args.calibration, sup.camera_width, sup.camera_height, sup.camera_hfov_deg))
    try:
        stream.start()
    except OSError as exc:
        print(f"aerie sim camera: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    print(json.dumps({"event": "ready", "url": stream.url, "calibration": calibration, "fps": args.fps,
                      "latency_s": args.latency}), flush=True)
    done.wait()
    stream.close()
    return 0

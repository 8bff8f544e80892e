"""`aerie sim vehicle`: run one PX4-like vehicle until SIGTERM/SIGINT.

Prints exactly one JSON line on stdout when the link is bound and the loop is
running, so a parent process (or a person) knows the ports:
``{"event": "ready", "port": 14580, "gcs_port": 14540, "sysid": 1, "control_port": ..., "pid": ...}``

Several vehicles side by side: ``--instance N`` (``-i N``) shifts the ports and the
MAVLink system id the way PX4 SITL's ``px4 -i N`` does (see docs/ARCHITECTURE.md, "The rig and the bench").
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from .vehicle import DEFAULT_HOME, Vehicle, VehicleConfig


def _home(text: str) -> tuple[float, float, float]:
    parts = [float(x) for x in text.split(",")]
    if len(parts) == 2:
        return parts[0], parts[1], DEFAULT_HOME[2]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise argparse.ArgumentTypeError("--home takes LAT,LON or LAT,LON,ALT_AMSL")


def _param(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    if not name or not value:
        raise argparse.ArgumentTypeError("--param takes NAME=VALUE")
    return name.strip(), float(value)


def _wind(text: str) -> tuple[float, float, float]:
    parts = [float(x) for x in text.split(",")]
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError("--wind takes N,E or N,E,D in m/s")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else 0.0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="aerie sim vehicle", description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=_home, default=DEFAULT_HOME, help="LAT,LON[,ALT_AMSL] of the take-off point")
    ap.add_argument("--instance", "-i", type=int, default=0,
                    help="instance number N, as PX4 SITL's `px4 -i N`: ports 14580+N / 14540+N and system id N+1 "
                         "unless given explicitly")
    ap.add_argument("--gcs-port", type=int, default=None,
                    help="UDP port telemetry is sent to (MAVSDK udpin; default 14540 + instance, at most 14549 as PX4)")
    ap.add_argument("--port", type=int, default=None,
                    help="UDP port the vehicle binds (0 = any free port; default 14580 + instance)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--seed", type=int, default=0, help="seed for wind gusts and sensor noise")
    ap.add_argument("--sysid", type=int, default=None, help="MAVLink system id (PX4 MAV_SYS_ID; default instance + 1)")
    ap.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                    help="override a PX4 parameter at start (repeatable)")
    ap.add_argument("--prearm-delay", type=float, default=4.0, help="seconds until pre-arm checks pass (PX4 ~4)")
    ap.add_argument("--control-port", type=int, default=0, help="JSON control channel UDP port (0 = any free, -1 = off)")
    ap.add_argument("--setpoint-log", default=None, help="append JSON lines per received setpoint/command here")
    ap.add_argument("--rate-scale", type=float, default=1.0, help="multiply telemetry stream rates (CPU knob)")
    ap.add_argument("--battery-drain-scale", type=float, default=1.0, help="multiply battery consumption")
    ap.add_argument("--wind", type=_wind, default=(0.0, 0.0, 0.0), metavar="N,E[,D]", help="steady wind, m/s (NED)")
    ap.add_argument("--gust", type=float, default=0.0, help="gust standard deviation, m/s")
    ap.add_argument("--no-gimbal", action="store_true",
                    help="no camera gimbal (by default the vehicle announces one over MAVLink gimbal protocol v2)")
    ap.add_argument("--speed-factor", type=float, default=1.0,
                    help="simulated seconds per wall second (>1 runs faster; MAVSDK's 20 Hz setpoints then "
                         "arrive less often in simulated time)")
    return ap


def resolve_instance(args: argparse.Namespace) -> argparse.Namespace:
    """Fill ports and system id from the instance number where not given, as PX4 SITL does for `-i N`."""
    if not 0 <= args.instance <= 254:
        raise SystemExit("aerie sim vehicle: --instance must be within 0..254")
    if args.port is None:
        args.port = 14580 + args.instance
    if args.gcs_port is None:  # PX4: 14540..14549, instances from the tenth on all send to 14549
        args.gcs_port = 14540 + min(args.instance, 9)
    if args.sysid is None:
        args.sysid = args.instance + 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = resolve_instance(build_parser().parse_args(argv))
    cfg = VehicleConfig(
        home=args.home, port=args.port, gcs_port=args.gcs_port, host=args.host, seed=args.seed, sysid=args.sysid,
        params=dict(args.param), prearm_delay_s=args.prearm_delay,
        control_port=None if args.control_port < 0 else args.control_port, setpoint_log=args.setpoint_log,
        rate_scale=args.rate_scale, battery_drain_scale=args.battery_drain_scale, speed_factor=args.speed_factor,
        wind=(*args.wind, args.gust), gimbal=not args.no_gimbal,
    )
    try:
        vehicle = Vehicle(cfg)
    except (OSError, KeyError) as exc:
        print(f"aerie sim vehicle: {exc}", file=sys.stderr)
        return 2
    stop = {"flag": False}

    def _stop(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(json.dumps({"event": "ready", "port": vehicle.port, "gcs_port": cfg.gcs_port, "sysid": cfg.sysid,
                      "control_port": vehicle.control_port, "pid": os.getpid(), "home": list(cfg.home),
                      "speed_factor": cfg.speed_factor}), flush=True)
    vehicle.run(lambda: stop["flag"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

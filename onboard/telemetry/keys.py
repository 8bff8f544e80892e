"""`aerie keys generate DIR`: CurveZMQ key pairs for a vehicle and its ground station."""

from __future__ import annotations

import argparse
import sys

from contract.curve_keys import CurveKeyError, generate_link_keys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie keys", description="Generate CurveZMQ key files")
    sub = parser.add_subparsers(dest="cmd", required=True)
    gen = sub.add_parser("generate", help="write vehicle and ground key pairs into DIR")
    gen.add_argument("dir")
    gen.add_argument("--vehicle-name", default="vehicle", help="file name stem of the vehicle's pair")
    gen.add_argument("--ground-name", default="ground", help="file name stem of the ground station's pair")
    args = parser.parse_args(argv)
    try:
        paths = generate_link_keys(args.dir, vehicle=args.vehicle_name, ground=args.ground_name)
    except (CurveKeyError, OSError) as exc:
        print(f"aerie keys: {exc}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{name}: {path}")
    print("vehicle: telemetry.server_secret_key -> vehicle_secret, telemetry.authorized_keys_dir -> authorized_dir\n"
          "ground:  client_secret_key -> ground_secret, vehicles[].server_public_key -> vehicle_public")
    return 0

"""`aerie keys generate DIR`: CurveZMQ key pairs for a vehicle and its ground station, and the dashboard token.

`aerie keys dashboard-token DIR` replaces only the dashboard token (shown once, so a lost one is replaced).
"""

from __future__ import annotations

import argparse
import sys

from contract.access_token import generate_token
from contract.curve_keys import CurveKeyError, generate_link_keys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie keys", description="Generate CurveZMQ key files")
    sub = parser.add_subparsers(dest="cmd", required=True)
    gen = sub.add_parser("generate", help="write vehicle and ground key pairs into DIR")
    gen.add_argument("dir")
    gen.add_argument("--vehicle-name", default="vehicle", help="file name stem of the vehicle's pair")
    gen.add_argument("--ground-name", default="ground", help="file name stem of the ground station's pair")
    tok = sub.add_parser("dashboard-token", help="replace the dashboard token in DIR (printed once)")
    tok.add_argument("dir")
    args = parser.parse_args(argv)
    try:
        paths = {} if args.cmd == "dashboard-token" else generate_link_keys(args.dir, vehicle=args.vehicle_name,
                                                                            ground=args.ground_name)
        token, paths["dashboard_token_hash"] = generate_token(args.dir)
    except (CurveKeyError, OSError) as exc:
        print(f"aerie keys: {exc}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{name}: {path}")
    if args.cmd == "generate":
        print("vehicle: telemetry.server_secret_key -> vehicle_secret, telemetry.authorized_keys_dir -> authorized_dir\n"
              "ground:  client_secret_key -> ground_secret, vehicles[].server_public_key -> vehicle_public")
    print("ground:  dashboard_token_hash -> dashboard_token_hash\n"
          f"dashboard token (shown only now; only its hash is kept): {token}\n"
          "  send it as 'Authorization: Bearer TOKEN', or open the dashboard once at URL?token=TOKEN")
    return 0

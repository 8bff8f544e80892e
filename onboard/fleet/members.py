"""What makes N vehicle configs one fleet: a key pair each, who admits whom, each member's channel and peers.

One copy, used by the simulated rig (`aerie fleet`, `aerie bench fleet`) and by
`aerie fleet configs` (member configs for N PX4 SITL instances or vehicles), so a
fleet set up by hand is set up exactly as the one the tests fly. Every member's
fleet channel is a CurveZMQ server admitting the other members' public keys and
pins each peer's key when it connects; the ground station's public key is the
only one admitted on a vehicle's telemetry.
"""

from __future__ import annotations

import math

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence


@dataclass(frozen=True)
class FleetKeys:
    vehicles: tuple[tuple[Path, Path], ...]  # (public, secret) per member, member 1 first
    ground_public: Path
    ground_secret: Path
    telemetry_authorized: Path               # the ground's public key: admitted on every vehicle's telemetry
    fleet_authorized: Path                   # every member's public key: admitted on every member's channel


def fleet_keys(directory: Path, n: int) -> FleetKeys:
    """A key pair per vehicle (``vehicle<i>``) and one for the ground; who admits whom, as folders of public keys."""
    from contract.curve_keys import generate_keypair

    vehicles = tuple(generate_keypair(directory, f"vehicle{i + 1}") for i in range(n))
    ground_public, ground_secret = generate_keypair(directory, "ground")
    keys = FleetKeys(vehicles, ground_public, ground_secret, directory / "authorized", directory / "fleet_authorized")
    for d, publics in ((keys.telemetry_authorized, [ground_public]), (keys.fleet_authorized, [p for p, _ in vehicles])):
        d.mkdir(parents=True, exist_ok=True)
        for k in publics:
            shutil.copy(k, d / k.name)
    return keys


def member_config(base: Any, i: int, fleet_endpoints: Sequence[str], keys: FleetKeys) -> Any:
    """Member i+1's fleet settings on ``base``: separation on, its channel on ``fleet_endpoints[i]``, the others peers.

    The first layer lies the downwash minimum (plus 2 m) above cruise altitude, so a vehicle
    yielding to its layer leaves every cruising vehicle's downwash instead of flying in it; the
    layers are spaced as configured, or closer where n of them would pass the altitude ceiling,
    but never closer than the downwash minimum (then the config refuses, naming the ceiling).
    """
    from onboard.fleet.settings import FleetPeer

    f, n = base.fleet, len(fleet_endpoints)
    first = base.supervisor.cruise_alt_m + f.downwash_vertical_m + 2.0
    room = (base.safety.altitude_ceiling_m - first) / (n - 1) if n > 1 else math.inf
    spacing = max(f.downwash_vertical_m, min(f.layer_spacing_m, room))
    fleet = replace(f, enabled=True, member_id=i + 1, layer_spacing_m=spacing, layer_base_m=first - spacing)
    peers = tuple(FleetPeer(endpoint, str(keys.vehicles[j][0]), member_id=j + 1)
                  for j, endpoint in enumerate(fleet_endpoints) if j != i)
    channel = replace(base.fleet_channel, pub_endpoint=fleet_endpoints[i], peers=peers, curve=True,
                      secret_key=str(keys.vehicles[i][1]), authorized_keys_dir=str(keys.fleet_authorized))
    return replace(base, fleet=fleet, fleet_channel=channel)


def telemetry_keys(base: Any, i: int, keys: FleetKeys) -> Any:
    """``base``'s telemetry authenticated with CurveZMQ: member i+1's key pair, the ground the one client admitted."""
    return replace(base, telemetry=replace(base.telemetry, curve=True, server_secret_key=str(keys.vehicles[i][1]),
                                           authorized_keys_dir=str(keys.telemetry_authorized)))

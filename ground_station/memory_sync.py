"""The ground station's end of memory sync: deliver an export bundle to a vehicle and get its ack.

REQ/REP with the "lazy pirate" retry: a request without an answer within
``sync_timeout_s`` gets a fresh socket and is sent again, up to
``sync_attempts`` times. That is safe because the vehicle's import is
idempotent. See :mod:`onboard.telemetry.memory_sync` for the vehicle's side.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgpack

from contract.bounded_socket import bounded_socket
from ground_station.settings import GroundConfig, VehicleLinkConfig, resolve


class SyncError(RuntimeError):
    """The vehicle refused the bundle or never answered."""


def push_bundle(bundle: str | Path, link: VehicleLinkConfig, cfg: GroundConfig, *,
                base_dir: str | Path = ".") -> dict[str, Any]:
    """Send ``bundle`` to the vehicle of ``link``; returns its acknowledgement (added, already_present ...)."""
    import zmq

    from contract.bundle import read_bundle
    from contract import curve_keys

    bundle = Path(bundle)
    read_bundle(bundle)  # refuse to send what the vehicle would refuse to read
    data = bundle.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    request = msgpack.packb({"op": "bundle", "sha256": sha, "bundle": data}, use_bin_type=True)
    ctx = zmq.Context()
    try:
        for _attempt in range(max(1, cfg.sync_attempts)):
            req = bounded_socket(ctx, zmq.REQ, cfg.sync_max_reply_bytes)
            try:
                if cfg.curve:
                    curve_keys.make_client(req, resolve(base_dir, cfg.client_secret_key),
                                           resolve(base_dir, link.server_public_key))
                req.connect(link.sync_endpoint)
                req.send(request)
                if req.poll(int(cfg.sync_timeout_s * 1000)):
                    reply = msgpack.unpackb(req.recv(), raw=False)
                    if not isinstance(reply, dict):
                        raise SyncError(f"{link.vehicle_id}: unreadable acknowledgement")
                    if reply.get("op") == "error":
                        raise SyncError(f"{link.vehicle_id} refused the bundle: {reply.get('reason')}")
                    if reply.get("op") != "imported" or reply.get("sha256") != sha:
                        raise SyncError(f"{link.vehicle_id}: acknowledgement does not match the bundle")
                    return reply
            finally:
                req.close(0)
        raise SyncError(f"{link.vehicle_id}: no acknowledgement after {cfg.sync_attempts} attempts "
                        f"of {cfg.sync_timeout_s:g} s")
    finally:
        ctx.term()

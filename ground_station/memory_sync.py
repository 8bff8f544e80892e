"""The ground station's end of memory sync: deliver an export bundle to a vehicle and get its ack.

REQ/REP with the "lazy pirate" retry: a request without an answer within
``sync_timeout_s`` gets a fresh socket and is sent again, up to
``sync_attempts`` times. That is safe because the vehicle's import is
idempotent. The messages are :mod:`contract.memory_sync`'s; see
:mod:`onboard.telemetry.memory_sync` for the vehicle's side.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from contract.bounded_socket import bounded_socket
from contract.memory_sync import BundleDelivery, BundleImported, SyncRefusal, answers, deliveries
from contract.payloads.base import PayloadError
from ground_station.settings import GroundConfig, VehicleLinkConfig, resolve


class SyncError(RuntimeError):
    """The vehicle refused the bundle or never answered."""


class SyncRefused(SyncError):
    """The vehicle answered and refused the bundle: sending the same bytes again gets the same answer."""


def push_bundle(bundle: str | Path, link: VehicleLinkConfig, cfg: GroundConfig, *,
                base_dir: str | Path = ".", cancel: threading.Event | None = None) -> BundleImported:
    """Send ``bundle`` to the vehicle of ``link``; returns its acknowledgement (added, already_present ...).

    ``cancel`` set while waiting for an answer ends the wait at once (SyncError): a ground
    station shutting down does not sit out a silent vehicle's timeout.
    """
    import zmq

    from contract.bundle import read_bundle
    from contract import curve_keys

    bundle = Path(bundle)
    read_bundle(bundle)  # refuse to send what the vehicle would refuse to read
    delivery = BundleDelivery.of(bundle.read_bytes())
    request = deliveries(len(delivery.bundle)).pack(delivery)
    reader = answers(cfg.sync_max_reply_bytes)
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
                if _answered(req, cfg.sync_timeout_s, cancel):
                    try:
                        reply = reader.unpack(req.recv())
                    except PayloadError as exc:
                        raise SyncError(f"{link.vehicle_id}: unreadable acknowledgement ({exc})") from exc
                    if isinstance(reply, SyncRefusal):
                        raise SyncRefused(f"{link.vehicle_id} refused the bundle: {reply.reason}")
                    if reply.sha256 != delivery.sha256:
                        raise SyncError(f"{link.vehicle_id}: acknowledgement does not match the bundle")
                    return reply
                if cancel is not None and cancel.is_set():
                    raise SyncError(f"{link.vehicle_id}: cancelled while waiting for an acknowledgement")
            finally:
                req.close(0)
        raise SyncError(f"{link.vehicle_id}: no acknowledgement after {cfg.sync_attempts} attempts "
                        f"of {cfg.sync_timeout_s:g} s")
    finally:
        ctx.term()


def _answered(sock: Any, timeout_s: float, cancel: threading.Event | None) -> bool:
    """Whether ``sock`` has a reply within ``timeout_s``, looking at ``cancel`` every 0.1 s."""
    if cancel is None:
        return bool(sock.poll(int(timeout_s * 1000)))
    deadline = time.monotonic() + timeout_s
    while not cancel.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if sock.poll(int(min(left, 0.1) * 1000) + 1):
            return True
    return False

"""Memory sync: the ground station delivers a lesson bundle to a vehicle and hears what became of it.

The ground (``ground_station/memory_sync.py``, REQ with the lazy-pirate retry)
sends a ``bundle_delivery``: the bundle's bytes and their sha256, which the
decoder checks against the bytes (a delivery whose hash does not match is no
delivery). The vehicle (``onboard/telemetry/memory_sync.py``, a ROUTER) answers
``bundle_imported`` (how many lessons the bundle held, how many were new) or
``sync_refused`` with the reason. Import is idempotent (content-hash ids), so a
delivery sent again after a timeout changes nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader
from contract.wire import Channel, channel

SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# Lessons one bundle may report: far above any memory file's, short of nonsense.
MAX_LESSONS = 10_000_000
MAX_REASON_CHARS = 500
# Room for the map around the bundle's bytes in a delivery frame.
FRAME_SLACK_BYTES = 4096


def _sha(r: Reader) -> str:
    sha = r.text("sha256")
    if SHA256_HEX.fullmatch(sha) is None:
        raise r.fail("sha256", f"must be 64 lowercase hex digits, got {sha[:80]!r}", "out_of_range")
    return sha


@dataclass(frozen=True)
class BundleDelivery(Payload):
    MSG_TYPE: ClassVar[str] = "bundle_delivery"
    SCHEMA_VERSION: ClassVar[int] = 1

    sha256: str
    bundle: bytes

    @classmethod
    def of(cls, data: bytes) -> "BundleDelivery":
        return cls(hashlib.sha256(data).hexdigest(), data)

    def body(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "bundle": self.bundle}

    @classmethod
    def _from(cls, r: Reader) -> "BundleDelivery":
        sha, data = _sha(r), r.blob("bundle")
        if hashlib.sha256(data).hexdigest() != sha:
            raise r.fail("sha256", "does not match the bundle's bytes", "hash_mismatch")
        return cls(sha, data)


@dataclass(frozen=True)
class BundleImported(Payload):
    """The acknowledgement: the bundle of ``sha256`` is imported (``already_present`` of its lessons were known)."""

    MSG_TYPE: ClassVar[str] = "bundle_imported"
    SCHEMA_VERSION: ClassVar[int] = 1

    sha256: str
    total: int
    added: int
    already_present: int

    def body(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "total": self.total, "added": self.added,
                "already_present": self.already_present}

    @classmethod
    def _from(cls, r: Reader) -> "BundleImported":
        sha, total = _sha(r), r.integer("total", lo=0, hi=MAX_LESSONS)
        added, present = r.integer("added", lo=0, hi=total), r.integer("already_present", lo=0, hi=total)
        return cls(sha, total, added, present)


@dataclass(frozen=True)
class SyncRefusal(Payload):
    """The vehicle refused the request: not a delivery, or a bundle its import refused."""

    MSG_TYPE: ClassVar[str] = "sync_refused"
    SCHEMA_VERSION: ClassVar[int] = 1

    reason: str

    def body(self) -> dict[str, Any]:
        return {"reason": self.reason}

    @classmethod
    def _from(cls, r: Reader) -> "SyncRefusal":
        return cls(r.text("reason")[:MAX_REASON_CHARS])


def deliveries(max_bundle_bytes: int) -> Channel[Any]:
    """The vehicle's reader of deliveries, bounded by the largest bundle it takes."""
    return channel("memory_sync", (BundleDelivery,), max_bundle_bytes + FRAME_SLACK_BYTES)


def answers(max_bytes: int) -> Channel[Any]:
    """The ground's reader of the vehicle's answers."""
    return channel("memory_sync", (BundleImported, SyncRefusal), max_bytes)

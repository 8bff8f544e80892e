"""The lesson bundle: experiences as one msgpack file, the format the ground and the vehicles exchange.

Every experience is named by its content hash (:func:`contract.records.content_uid`),
so the same lesson has the same id on both sides and importing a bundle twice
adds nothing the second time. Vectors are not shipped: the receiver re-embeds
with its own model, so a bundle outlives an embedding-model change. Reading
recomputes each uid from the content and refuses a bundle whose ids do not
match it. Putting the experiences into a store is the vehicle's business
(:mod:`onboard.memory.bundle`); this module only writes and reads the file.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import msgpack

from contract.records import COLLECTIONS, Record, content_uid, image_of, text_fields

BUNDLE_FORMAT = "aerie-memory-bundle"
BUNDLE_VERSION = 1


class BundleError(ValueError):
    """A bundle file is unreadable, of another format or version, or its ids do not match its content."""


@dataclass(frozen=True)
class BundleItem:
    """One experience as it travels: the record and its identity."""

    uid: str
    collection: str
    level: str
    parent_uid: str | None
    source: str
    created_at: float
    record: Record


def write_bundle(path: str | Path, items: Iterable[BundleItem], *, vehicle_id: str, embedding_model: str) -> int:
    """Write ``items`` to ``path`` atomically (fsync, then rename); returns how many."""
    docs = [{"uid": it.uid, "collection": it.collection, "level": it.level, "parent_uid": it.parent_uid,
             "source": it.source, "created_at": it.created_at, "fields": text_fields(it.record),
             "image": image_of(it.record)} for it in items]
    doc = {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "exported_at": time.time(), "vehicle_id": vehicle_id,
           "embedding_model": embedding_model, "experiences": docs}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(msgpack.packb(doc, use_bin_type=True))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return len(docs)


def read_bundle(path: str | Path) -> dict[str, Any]:
    """The bundle's document after its format and version are checked (experiences not yet parsed)."""
    path = Path(path)
    try:
        doc = msgpack.unpackb(path.read_bytes(), raw=False)
    except OSError as exc:
        raise BundleError(f"{path}: cannot read ({exc.strerror})") from exc
    except Exception as exc:  # noqa: BLE001 - msgpack raises several types for bad input
        raise BundleError(f"{path}: not a msgpack bundle ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{path}: not an {BUNDLE_FORMAT} file")
    if doc.get("version") != BUNDLE_VERSION:
        raise BundleError(f"{path}: bundle version {doc.get('version')!r}, this Aerie reads {BUNDLE_VERSION}")
    return doc


def bundle_items(path: str | Path) -> tuple[dict[str, Any], list[BundleItem]]:
    """Read and verify a whole bundle: the document and its experiences, each uid checked against its content."""
    doc = read_bundle(path)
    source = f"bundle:{doc.get('vehicle_id') or Path(path).name}"
    items: list[BundleItem] = []
    experiences = doc.get("experiences", [])
    if not isinstance(experiences, list):
        raise BundleError(f"{path}: experiences is a {type(experiences).__name__}, not a list")
    for n, item in enumerate(experiences):
        try:
            spec = COLLECTIONS[item["collection"]]
            data = dict(item["fields"])
            if "semantic_enhanced_image" in spec.record_type.__dataclass_fields__:
                data["semantic_enhanced_image"] = item.get("image")
            record = spec.record_type(**data)
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"{path}: experience #{n} is malformed ({exc})") from exc
        image = image_of(record)
        sha = hashlib.sha256(image).hexdigest() if image is not None else None
        expected = content_uid(spec.name, spec.level, text_fields(record), sha, item.get("parent_uid"))
        if expected != item.get("uid"):
            raise BundleError(f"{path}: experience #{n} id {item.get('uid')!r} does not match its content")
        created = item.get("created_at")
        items.append(BundleItem(uid=expected, collection=spec.name, level=spec.level, parent_uid=item.get("parent_uid"),
                                source=source, created_at=float(created) if isinstance(created, (int, float)) else time.time(),
                                record=record))
    return doc, items

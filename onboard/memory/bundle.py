"""Export and import experiences as one msgpack bundle file.

The ground station turns flight logs into lessons and syncs them back; the
vehicle exports its own lessons for the ground. Every experience is named by
its content hash (see :func:`records.content_uid`), so the same lesson has the
same id on both sides and importing a bundle twice adds nothing the second
time. Vectors are not shipped: the receiver re-embeds with its own model, so
a bundle outlives an embedding-model change. The importer recomputes each
uid from the content and refuses a bundle whose ids do not match it.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from onboard.memory.experience_store import ExperienceStore
from contract.records import COLLECTIONS, RecordError, content_uid, image_of, text_fields

BUNDLE_FORMAT = "aerie-memory-bundle"
BUNDLE_VERSION = 1
# Records per import transaction (one embedding batch each).
IMPORT_BATCH = 64


class BundleError(ValueError):
    """A bundle file is unreadable, of another format or version, or its ids do not match its content."""


@dataclass(frozen=True)
class ImportReport:
    path: str
    total: int
    added: int
    already_present: int


def export_bundle(store: ExperienceStore, path: str | Path, *, collection: str | None = None,
                  vehicle_id: str = "") -> int:
    """Write all (or one collection's) experiences to ``path``; returns how many."""
    items: list[dict[str, Any]] = []
    for exp in store.iter_experiences(collection):
        items.append({
            "uid": exp.uid, "collection": exp.collection, "level": exp.level, "parent_uid": exp.parent_uid,
            "source": exp.source, "created_at": exp.created_at, "fields": text_fields(exp.record),
            "image": image_of(exp.record),
        })
    doc = {
        "format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "exported_at": time.time(), "vehicle_id": vehicle_id,
        "embedding_model": f"{store.embedder.model_id}/{store.embedder.dim}", "experiences": items,
    }
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(msgpack.packb(doc, use_bin_type=True))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return len(items)


def read_bundle(path: str | Path) -> dict[str, Any]:
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


def import_bundle(store: ExperienceStore, path: str | Path, *, source: str | None = None) -> ImportReport:
    """Add the bundle's experiences that the store does not have yet (idempotent)."""
    doc = read_bundle(path)
    source = source or f"bundle:{doc.get('vehicle_id') or Path(path).name}"
    records, parents, uids, created = [], [], [], []
    for n, item in enumerate(doc.get("experiences", [])):
        try:
            spec = COLLECTIONS[item["collection"]]
            data = dict(item["fields"])
            if "semantic_enhanced_image" in spec.record_type.__dataclass_fields__:
                data["semantic_enhanced_image"] = item.get("image")
            record = spec.record_type(**data)
        except (KeyError, TypeError) as exc:
            raise BundleError(f"{path}: experience #{n} is malformed ({exc})") from exc
        image = image_of(record)
        sha = hashlib.sha256(image).hexdigest() if image is not None else None
        expected = content_uid(spec.name, spec.level, text_fields(record), sha, item.get("parent_uid"))
        if expected != item.get("uid"):
            raise BundleError(f"{path}: experience #{n} id {item.get('uid')!r} does not match its content")
        records.append(record)
        parents.append(item.get("parent_uid"))
        uids.append(expected)
        created.append(float(item.get("created_at") or time.time()))
    first_of: dict[str, int] = {}
    for i, u in enumerate(uids):
        first_of.setdefault(u, i)
    present = sum(1 for u in first_of if store.has(u))
    todo = [i for u, i in first_of.items() if not store.has(u)]
    for start in range(0, len(todo), IMPORT_BATCH):
        chunk = todo[start:start + IMPORT_BATCH]
        try:
            store.add_many([records[i] for i in chunk], parent_uids=[parents[i] for i in chunk], source=source,
                           created_at=[created[i] for i in chunk])
        except RecordError as exc:
            raise BundleError(f"{path}: {exc}") from exc
    return ImportReport(path=str(path), total=len(first_of), added=len(todo), already_present=present)

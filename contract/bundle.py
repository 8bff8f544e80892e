"""The lesson bundle: experiences as one msgpack file, the format the ground and the vehicles exchange.

Every experience is named by its content hash (:func:`contract.records.content_uid`),
so the same lesson has the same id on both sides and importing a bundle twice
adds nothing the second time. Vectors are not shipped: the receiver re-embeds
with its own model, so a bundle outlives an embedding-model change. Reading
recomputes each uid from the content and refuses a bundle whose ids do not
match it. Putting the experiences into a store is the vehicle's business
(:mod:`onboard.memory.bundle`); this module only writes and reads the file.

A bundle is untrusted and judged whole: every experience is checked as the
store would check it (:func:`contract.records.validate`) and every text
field bounded in length before the reader returns one item, so an import
either takes the whole bundle or writes nothing, and one oversized lesson
cannot ride into every later prompt.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import msgpack

from contract.records import COLLECTIONS, Record, RecordError, content_uid, image_of, text_fields, validate

BUNDLE_FORMAT = "aerie-memory-bundle"
BUNDLE_VERSION = 1
# Characters one text field of a lesson may hold unless the reader is told otherwise
# (``memory.lesson_text_max_chars`` on a vehicle).
MAX_TEXT_CHARS = 16384
# A vehicle id longer than this is not used to name the lessons' source.
MAX_VEHICLE_ID_CHARS = 80
# created_at must lie in 0 .. this (seconds since the epoch, well past any real clock).
MAX_CREATED_AT = 2.0 ** 40


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


def bundle_items(path: str | Path, *, max_text_chars: int = MAX_TEXT_CHARS) -> tuple[dict[str, Any], list[BundleItem]]:
    """Read and verify a whole bundle: the document and its experiences, each checked and its uid matched to
    its content. Any bad experience refuses the bundle (:class:`BundleError` naming it)."""
    doc = read_bundle(path)
    vehicle = doc.get("vehicle_id")
    if not (isinstance(vehicle, str) and 0 < len(vehicle) <= MAX_VEHICLE_ID_CHARS):
        vehicle = Path(path).name
    source = f"bundle:{vehicle}"
    items: list[BundleItem] = []
    experiences = doc.get("experiences", [])
    if not isinstance(experiences, list):
        raise BundleError(f"{path}: experiences is a {type(experiences).__name__}, not a list")
    for n, item in enumerate(experiences):
        items.append(_item(path, n, item, source, max_text_chars))
    return doc, items


def _item(path: str | Path, n: int, item: Any, source: str, max_text_chars: int) -> BundleItem:
    """Experience ``n`` of the bundle, checked as the store will check it, so nothing is refused halfway."""
    try:
        if not isinstance(item, dict):
            raise TypeError(f"a {type(item).__name__}, not a map")
        spec = COLLECTIONS[item["collection"]]
        data = dict(item["fields"])
        for name, value in data.items():
            if isinstance(value, str) and len(value) > max_text_chars:
                raise ValueError(f"{spec.name}.{name} holds {len(value)} characters, more than {max_text_chars}")
        if "semantic_enhanced_image" in spec.record_type.__dataclass_fields__:
            image = item.get("image")
            if image is not None and not isinstance(image, bytes):
                raise TypeError(f"image is a {type(image).__name__}, not bytes")
            data["semantic_enhanced_image"] = image
        record = spec.record_type(**data)
        validate(record)
        parent = item.get("parent_uid")
        if parent is not None and not isinstance(parent, str):
            raise TypeError(f"parent_uid is a {type(parent).__name__}")
        created = item.get("created_at")
        if created is not None and not (isinstance(created, (int, float)) and not isinstance(created, bool)
                                        and 0 <= created <= MAX_CREATED_AT):  # NaN fails too
            raise ValueError(f"created_at {created!r} is not a time")
    except (KeyError, TypeError, ValueError, RecordError) as exc:
        raise BundleError(f"{path}: experience #{n} is malformed ({_short(exc)})") from exc
    image = image_of(record)
    sha = hashlib.sha256(image).hexdigest() if image is not None else None
    expected = content_uid(spec.name, spec.level, text_fields(record), sha, parent)
    if expected != item.get("uid"):
        raise BundleError(f"{path}: experience #{n} id {_quote(item.get('uid'))} does not match its content")
    return BundleItem(uid=expected, collection=spec.name, level=spec.level, parent_uid=parent, source=source,
                      created_at=float(created) if created is not None and math.isfinite(created) else time.time(),
                      record=record)


def _short(exc: BaseException, limit: int = 200) -> str:
    """A bounded reason: an error about a field read from the file never carries the file back out."""
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


def _quote(value: Any, limit: int = 80) -> str:
    return repr(value[:limit]) if isinstance(value, str) else f"of type {type(value).__name__}"

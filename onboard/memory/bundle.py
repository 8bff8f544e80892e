"""Lesson bundles in and out of the vehicle's memory file.

The file format is :mod:`contract.bundle` (the ground writes the same files);
here experiences are taken from a store for export and added to one on
import, idempotently: an experience whose content id the store already holds
is skipped.

An import is all or nothing: the reader has checked every experience before
this module embeds one, and all of them are written in one transaction, so a
refused bundle (which the courier never sends again) leaves no part of
itself behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from contract.bundle import BundleError, BundleItem, bundle_items, write_bundle
from contract.records import RecordError
from onboard.memory.experience_store import ExperienceStore

# Records per embedding batch (the embedder's memory); the import itself is one transaction.
IMPORT_BATCH = 64


@dataclass(frozen=True)
class ImportReport:
    path: str
    total: int
    added: int
    already_present: int


def export_bundle(store: ExperienceStore, path: str | Path, *, collection: str | None = None,
                  vehicle_id: str = "") -> int:
    """Write all (or one collection's) experiences to ``path``; returns how many."""
    items = store.iter_experiences(collection)
    return write_bundle(path, items, vehicle_id=vehicle_id,
                        embedding_model=f"{store.embedder.model_id}/{store.embedder.dim}")


def import_bundle(store: ExperienceStore, path: str | Path, *, source: str | None = None) -> ImportReport:
    """Add the bundle's experiences that the store does not have yet (idempotent), all in one transaction."""
    _, items = bundle_items(path, max_text_chars=store.cfg.lesson_text_max_chars)
    first: dict[str, BundleItem] = {}
    for item in items:
        first.setdefault(item.uid, item)
    todo = [item for uid, item in first.items() if not store.has(uid)]
    if todo:
        records = [it.record for it in todo]
        vectors = np.concatenate([store.embed_records(records[start:start + IMPORT_BATCH])
                                  for start in range(0, len(records), IMPORT_BATCH)])
        try:
            store.add_many(records, parent_uids=[it.parent_uid for it in todo], source=source or todo[0].source,
                           embeddings=vectors, created_at=[it.created_at for it in todo])
        except RecordError as exc:
            raise BundleError(f"{path}: {exc}") from exc
    return ImportReport(path=str(path), total=len(first), added=len(todo), already_present=len(first) - len(todo))

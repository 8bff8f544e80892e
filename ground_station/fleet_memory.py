"""Fleet memory on the ground's PostgreSQL server: every lesson bundle and its lessons, searchable by any host.

The post-flight analyser of whichever ground host analysed a flight adds that
flight's bundle here (the bytes, as vehicles receive them) and each lesson with
its embedding, so a post-flight analysis on one host sees what another host's
vehicles learnt, and every host's lesson courier delivers every bundle. Vehicles
keep their own sqlite-vec memory, unchanged.

*Why exact search.* PostgreSQL 15 as the distribution ships it has no pgvector.
Fleet memory is thousands of lessons, not millions: a search reads the vectors of
the rows its filters select (one collection, one embedding model, optionally a
vehicle or an outcome) and ranks them by dot product in NumPy; at 384 float32 a
lesson that is 1.5 kB a row, a few MB for thousands. On a server with pgvector the
``embedding`` column becomes ``vector(384)`` with an HNSW index and the ranking
moves into ``ORDER BY embedding <#> query LIMIT k`` (docs/GROUND_DATABASE.md):
the same answers up to the index's recall, without reading every row.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contract.bundle import bundle_items
from contract.records import COLLECTIONS, text_fields
from ground_station import migrations
from ground_station.log_db import DatabaseError, LogDb, open_postgres

# The migration that made the fleet-memory tables.
FLEET_MEMORY_VERSION = 3


@dataclass(frozen=True)
class FleetHit:
    uid: str
    score: float          # cosine similarity
    collection: str
    vehicle_id: str
    outcome: str
    fields: dict[str, Any]


class FleetMemory:
    """One connection to the fleet memory; safe to share between threads only under the caller's lock."""

    def __init__(self, db: LogDb, embedder: Any = None) -> None:
        self.db = db
        self.embedder = embedder

    @classmethod
    def open(cls, url: str, embedder: Any = None) -> "FleetMemory":
        db = open_postgres(url)
        try:
            migrations.check(db, FLEET_MEMORY_VERSION)
        except BaseException:
            db.close()
            raise
        return cls(db, embedder)

    def close(self) -> None:
        self.db.close()

    def _model(self) -> str:
        return f"{self.embedder.model_id}/{self.embedder.dim}"

    def add_bundle(self, path: str | Path) -> int:
        """Keep a bundle and its lessons (idempotent: a bundle name or lesson uid kept before is skipped);
        returns how many lessons were new. The bundle is verified whole first (contract.bundle)."""
        path = Path(path)
        body = path.read_bytes()
        doc, items = bundle_items(path)
        vehicle = str(doc.get("vehicle_id") or path.name)
        vectors = self.embedder.embed([getattr(it.record, COLLECTIONS[it.collection].vector_field) for it in items]) \
            if items else np.zeros((0, 1), dtype=np.float32)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        db, added = self.db, 0
        try:
            db.begin()
            db.execute("INSERT INTO lesson_bundles (name, sha256, vehicle_id, body, added_at) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT (name) DO NOTHING",
                       (path.name, hashlib.sha256(body).hexdigest(), vehicle, body, time.time()))
            for it, vec in zip(items, vectors):
                spec = COLLECTIONS[it.collection]
                fields = text_fields(it.record)
                row = db.execute(
                    "INSERT INTO lessons (uid, collection, level, parent_uid, vehicle_id, bundle, created_at, outcome, "
                    "fields, embedding_model, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (uid) DO NOTHING RETURNING uid",
                    (it.uid, it.collection, it.level, it.parent_uid, vehicle, path.name, it.created_at,
                     str(fields.get(spec.outcome_field, "")), json.dumps(fields), self._model(),
                     [float(x) for x in vec])).fetchone()
                added += row is not None
            db.commit()
        except db.errors as exc:
            db.rollback()
            raise DatabaseError(f"{db.where}: adding {path.name} failed ({str(exc).strip()})") from exc
        return added

    def bundles(self) -> list[tuple[str, str]]:
        """(name, sha256) of every bundle, by name."""
        return [(str(n), str(s)) for n, s in self.db.execute("SELECT name, sha256 FROM lesson_bundles ORDER BY name")]

    def materialize(self, folder: str | Path) -> list[Path]:
        """Write every bundle the folder lacks (or holds with other bytes) into it; returns those written.

        The post-flight watcher then skips flights another host analysed, and the lesson
        courier delivers every host's bundles, each reading its own folder as before.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, sha in self.bundles():
            if "/" in name or name.startswith(".") or not name.endswith(".bundle"):
                continue   # a name no analyser writes: never a path outside the folder
            path = folder / name
            try:
                if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == sha:
                    continue
            except OSError:
                pass
            body = self.bundle_body(name)
            if body is None:
                continue
            tmp = path.with_name(f".{name}.tmp")
            tmp.write_bytes(body)
            tmp.replace(path)   # atomic: a reader never sees half a bundle
            written.append(path)
        return written

    def bundle_body(self, name: str) -> bytes | None:
        row = self.db.execute("SELECT body FROM lesson_bundles WHERE name = ?", (name,)).fetchone()
        return bytes(row[0]) if row else None

    def search(self, query: str | np.ndarray, collection: str, *, k: int = 5, vehicle_id: str | None = None,
               outcome: str | None = None) -> list[FleetHit]:
        """The ``k`` lessons of ``collection`` most similar to ``query``, exactly, among those the filters select."""
        if collection not in COLLECTIONS:
            raise ValueError(f"unknown collection {collection!r}; one of {sorted(COLLECTIONS)}")
        if not k >= 1:
            raise ValueError(f"k must be at least 1, not {k}")
        q = self.embedder.embed([query])[0] if isinstance(query, str) else np.asarray(query, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        sql = ("SELECT uid, vehicle_id, outcome, fields, embedding FROM lessons WHERE collection = ? "
               "AND embedding_model = ?")
        args: list[Any] = [collection, self._model()]
        if vehicle_id is not None:
            sql += " AND vehicle_id = ?"
            args.append(vehicle_id)
        if outcome is not None:
            sql += " AND outcome = ?"
            args.append(outcome)
        rows = self.db.execute(sql, args).fetchall()
        if not rows:
            return []
        scores = np.asarray([r[4] for r in rows], dtype=np.float32) @ q
        best = np.argsort(-scores, kind="stable")[:k]
        return [FleetHit(rows[i][0], float(scores[i]), collection, rows[i][1], rows[i][2],
                         rows[i][3] if isinstance(rows[i][3], dict) else json.loads(rows[i][3])) for i in best]

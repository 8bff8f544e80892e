"""The store's in-memory copy of its embeddings, one partition per (collection, outcome), for fast KNN.

SQLite stays the only source of truth: a collection's partitions are loaded
from ``experiences.embedding`` on its first search, this process's writes are
applied to them after they commit, and a commit by any other connection
(another process, or another store on the same file) changes SQLite's
``PRAGMA data_version``, which drops every loaded collection so the next
search reloads it. A reload therefore costs one read of the collection
(about a second at 100k rows) and only follows someone else's write.

Partitioning by outcome mirrors the vec0 partition key: a success-only or
failure-only query scans only matching rows, so it returns k rows whenever k
rows match; an unfiltered query merges the partitions' exact scores.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from onboard.memory.partition_vectors import PartitionVectors, load_faiss


@dataclass(frozen=True)
class NewRow:
    """One committed row as the cache needs it."""

    rowid: int
    collection: str
    outcome: str
    vector: np.ndarray


@dataclass
class VectorCache:
    dim: int
    faiss: Any = field(default_factory=load_faiss)
    _parts: dict[str, dict[str, PartitionVectors]] = field(default_factory=dict)
    _data_version: int | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def knn(self, conn: Any, q: np.ndarray, collection: str, k: int, outcome: str | None, *,
            candidates: int, exact_max_rows: int, load_guard: Callable[[], Any]) -> list[tuple[int, float]]:
        """Top ``k`` (experiences id, exact cosine) of ``collection`` (optionally one outcome), best first.

        ``load_guard`` is a context manager that keeps this process's writers
        out while a collection is read, so a half-written transaction on the
        shared connection is never loaded.
        """
        parts = self._loaded(conn, collection, load_guard)
        with self._lock:
            if outcome is None:
                chosen = list(parts.values())
            else:
                chosen = [parts[outcome]] if outcome in parts else []
            ids: list[np.ndarray] = []
            sims: list[np.ndarray] = []
            for part in chosen:
                i, s = part.knn(q, k, candidates, exact_max_rows, self.faiss)
                ids.append(i)
                sims.append(s)
        if not ids:
            return []
        all_ids, all_sims = np.concatenate(ids), np.concatenate(sims)
        order = np.argsort(-all_sims, kind="stable")[:k]
        return [(int(all_ids[i]), float(all_sims[i])) for i in order]

    def warm(self, conn: Any, collection: str, *, candidates: int, exact_max_rows: int,
             load_guard: Callable[[], Any]) -> None:
        """Load ``collection`` and build its PQ indexes now, so the first search does not pay for it."""
        parts = self._loaded(conn, collection, load_guard)
        with self._lock:
            for part in parts.values():
                part.prepare(candidates, exact_max_rows, self.faiss)

    def _loaded(self, conn: Any, collection: str, load_guard: Callable[[], Any]) -> dict[str, PartitionVectors]:
        """The collection's partitions, read from SQLite if not held.

        Lock order is the writers' (thread lock, then cache lock): writers
        update the cache after commit while still holding the thread lock.
        """
        with self._lock:
            self._sync(conn)
            parts = self._parts.get(collection)
        if parts is not None:
            return parts
        with load_guard(), self._lock:
            self._sync(conn)
            parts = self._parts.get(collection)
            if parts is None:
                parts = self._parts[collection] = self._load(conn, collection)
            return parts

    def added(self, rows: Iterable[NewRow]) -> None:
        """Apply committed inserts to the loaded collections (unloaded ones read them on load)."""
        with self._lock:
            grouped: dict[tuple[str, str], list[NewRow]] = {}
            for r in rows:
                if r.collection in self._parts:
                    grouped.setdefault((r.collection, r.outcome), []).append(r)
            for (coll, outcome), group in grouped.items():
                part = self._parts[coll].setdefault(outcome, PartitionVectors(self.dim))
                fresh = [r for r in group if not part.has(r.rowid)]
                if fresh:
                    part.append(np.array([r.rowid for r in fresh], dtype=np.int64),
                                np.stack([r.vector for r in fresh]).astype(np.float32))

    def removed(self, rowid: int, collection: str, outcome: str) -> None:
        with self._lock:
            part = self._parts.get(collection, {}).get(outcome)
            if part is not None:
                part.remove(rowid)

    def loaded_rows(self, collection: str) -> int | None:
        """Rows held for ``collection``, or None when it is not loaded (for tests and stats)."""
        with self._lock:
            parts = self._parts.get(collection)
            return None if parts is None else sum(p.alive for p in parts.values())

    def clear(self) -> None:
        with self._lock:
            self._parts.clear()

    def _sync(self, conn: Any) -> None:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            self._parts.clear()
            self._data_version = version

    def _load(self, conn: Any, collection: str) -> dict[str, PartitionVectors]:
        rows = conn.execute("SELECT id, is_success, embedding FROM experiences WHERE collection = ? ORDER BY id",
                            (collection,)).fetchall()
        parts: dict[str, PartitionVectors] = {}
        if not rows:
            return parts
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        outcomes = np.array([r[1] for r in rows])
        mat = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dim)
        for outcome in np.unique(outcomes).tolist():
            sel = outcomes == outcome
            part = PartitionVectors(self.dim)
            part.append(ids[sel], mat[sel])
            parts[outcome] = part
        return parts

# Over 400 lines: one store: the writer lock, the vec0 table, the vector cache and every query go through one SQLite connection's transactions, which only read together show what is atomic.
"""The vehicle's experience memory: one SQLite file with sqlite-vec, one writer at a time.

Every collection lives in one vec0 table partitioned by collection name, so a
query for navigation lessons only scans navigation lessons, and the
success/failure and level filters are vec0 metadata columns *inside* the KNN
query: a filtered query returns k rows when k rows match, instead of the
"filter after k" shortfall an outer WHERE would give.

Searches run on an in-memory copy of the float32 vectors
(:mod:`onboard.memory.vector_cache`), partitioned by collection and outcome
like the vec0 table, loaded from SQLite on first use, updated by this
store's writes after they commit and dropped when another connection
commits (``PRAGMA data_version``). Partitions larger than
``exact_search_max_rows`` are prefiltered by a 4-bit PQ scan (faiss, when
installed) for ``k * prefilter_oversample`` candidates rescored exactly on
float32; smaller ones are scanned exactly. Returned similarities are always
the exact cosine. sqlite-vec's vec0 tables stay in step on every write: they
are the durable, SQL-queryable index and :meth:`ExperienceStore.search_exact`
(the reference the benchmark and tests compare against).

Writes are single ``BEGIN IMMEDIATE`` transactions; the embedding is computed
before the lock is taken so a slow model never holds other writers up. When
another process holds the write lock past ``writer_timeout_s``, the write
raises :class:`WriterBusy` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from contract.bundle import BundleItem
from onboard.memory.embedder import Embedder
from contract.records import (
    COLLECTIONS,
    STRATEGIC_PLAN,
    NavigateExperience,
    Record,
    RecordError,
    Retrieved,
    SearchLocateExperience,
    StrategicPlan,
    TaskExperience,
    content_uid,
    image_of,
    record_from_row,
    text_fields,
    validate,
)
from onboard.memory.schema import OpenReport, SchemaError, WriterBusy, open_memory_file
from onboard.memory.store_lock import StoreLock, WriteTransaction
from onboard.memory.settings import MemoryConfig
from onboard.memory.sqlite_vec_db import SqliteBackend, find_backend
from onboard.memory.vector_cache import NewRow, VectorCache
from onboard.memory.vector_codes import int8_codes

# sqlite-vec 0.1.9 refuses KNN with k above this.
VEC0_MAX_K = 4096


class ExperienceStoreError(RuntimeError):
    """A misuse of the store (wrong embedder for this file, closed store, bad k)."""


@dataclass(frozen=True)
class StoreStats:
    path: str
    schema_version: int
    sqlite: str
    sqlite_vec: str
    embedding_model: str
    file_bytes: int
    counts: dict[str, dict[str, int]]  # collection -> {"success": n, "failure": n}
    reflections: int
    episodic_sentences: int


class ExperienceStore:
    """Open with :meth:`open`; use as a context manager or call :meth:`close`."""

    def __init__(self, conn: Any, path: Path, embedder: Embedder, cfg: MemoryConfig, backend: SqliteBackend,
                 report: OpenReport, image_dir: Path | None) -> None:
        self._conn = conn
        self.path = path
        self.embedder = embedder
        self.cfg = cfg
        self.backend = backend
        self.open_report = report
        self.image_dir = image_dir
        self._lock = StoreLock(lambda: self.conn, path, cfg.writer_timeout_s)
        self._vectors = VectorCache(embedder.dim)

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, path: str | Path, embedder: Embedder, cfg: MemoryConfig | None = None, *,
             image_dir: str | Path | None = None) -> "ExperienceStore":
        """Open or create the memory file at ``path``.

        Raises :class:`CorruptMemoryFile` for a damaged or foreign file (unless
        ``cfg.move_aside_corrupt``), :class:`SchemaTooNew`, :class:`WriterBusy`,
        and :class:`ExperienceStoreError` if the file's vectors came from
        another embedding model.
        """
        cfg = cfg or MemoryConfig()
        path = Path(path).expanduser()
        backend = find_backend()
        conn, report = open_memory_file(
            path, backend, dim=embedder.dim, timeout_s=cfg.writer_timeout_s,
            full_check=cfg.full_integrity_check_on_open, move_aside_corrupt=cfg.move_aside_corrupt,
        )
        if image_dir is None and cfg.image_dir:
            image_dir = Path(cfg.image_dir).expanduser()
            if not image_dir.is_absolute():
                image_dir = path.parent / image_dir
        store = cls(conn, path, embedder, cfg, backend, report, Path(image_dir) if image_dir else None)
        try:
            store._check_model()
        except Exception:
            conn.close()
            raise
        return store

    def _check_model(self) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        wanted = f"{self.embedder.model_id}/{self.embedder.dim}"
        if row is None:
            with self.write():
                self._conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('embedding_model', ?)", (wanted,))
        elif row[0] != wanted:
            raise ExperienceStoreError(
                f"{self.path}: vectors were made by {row[0]}, this embedder is {wanted}; "
                "re-embed by exporting and importing into a new file"
            )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "ExperienceStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> Any:
        if self._conn is None:
            raise ExperienceStoreError(f"{self.path}: store is closed")
        return self._conn

    # ------------------------------------------------------------------ transactions
    def write(self, on_commit: Callable[[], None] | None = None) -> WriteTransaction:
        """One ``BEGIN IMMEDIATE`` transaction (see :mod:`onboard.memory.store_lock`); a cache update
        that fails after the commit drops the cache so the next search reloads it."""
        return self._lock.write(on_commit, on_commit_failed=self._vectors.clear)

    def add(self, record: Record, *, parent_uid: str | None = None, source: str = "local",
            embedding: np.ndarray | None = None) -> str:
        """Store one experience; returns its content-hash uid (existing uid if already stored)."""
        return self.add_many([record], parent_uids=[parent_uid], source=source,
                             embeddings=None if embedding is None else embedding[None, :])[0]

    def embed_records(self, records: Sequence[Record]) -> np.ndarray:
        """The vectors ``add_many`` would compute for ``records`` (each checked first), without writing."""
        specs = [validate(r) for r in records]
        return self.embedder.embed([getattr(r, s.vector_field) for r, s in zip(records, specs)])

    def add_many(self, records: Sequence[Record], *, parent_uids: Sequence[str | None] | None = None,
                 source: str = "local", embeddings: np.ndarray | None = None,
                 created_at: Sequence[float] | None = None) -> list[str]:
        """Store several experiences in one transaction (one embedding batch)."""
        if not records:
            return []
        parent_uids = list(parent_uids) if parent_uids is not None else [None] * len(records)
        specs = [validate(r) for r in records]
        if embeddings is None:
            embeddings = self.embedder.embed([getattr(r, s.vector_field) for r, s in zip(records, specs)])
        embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        if embeddings.shape != (len(records), self.embedder.dim):
            raise ExperienceStoreError(f"embeddings must have shape ({len(records)}, {self.embedder.dim})")
        codes = int8_codes(embeddings)
        uids = []
        fresh: list[NewRow] = []
        now = time.time()
        with self.write(on_commit=lambda: self._vectors.added(fresh)) as conn:
            for i, (record, spec, parent) in enumerate(zip(records, specs, parent_uids)):
                fields_ = text_fields(record)
                image = image_of(record)
                image_sha = hashlib.sha256(image).hexdigest() if image is not None else None
                uid = content_uid(spec.name, spec.level, fields_, image_sha, parent)
                uids.append(uid)
                if conn.execute("SELECT 1 FROM experiences WHERE uid = ?", (uid,)).fetchone():
                    continue
                blob, ref = self._place_image(image, image_sha)
                outcome = getattr(record, spec.outcome_field)
                cur = conn.execute(
                    """INSERT INTO experiences(uid, collection, level, is_success, query_text, fields, parent_uid,
                       image, image_ref, image_sha256, embedding, source, created_at)
                       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                    (uid, spec.name, spec.level, outcome, getattr(record, spec.vector_field),
                     json.dumps(fields_, ensure_ascii=False, sort_keys=True), parent, blob, ref, image_sha,
                     embeddings[i].tobytes(), source, created_at[i] if created_at else now),
                )
                conn.execute(
                    "INSERT INTO experience_vec(rowid, collection, level, is_success, embedding) VALUES (?,?,?,?,?)",
                    (cur.lastrowid, spec.name, spec.level, outcome, embeddings[i].tobytes()),
                )
                conn.execute(
                    "INSERT INTO experience_vec_i8(rowid, collection, level, is_success, embedding) "
                    "VALUES (?,?,?,?,vec_int8(?))",
                    (cur.lastrowid, spec.name, spec.level, outcome, codes[i].tobytes()),
                )
                fresh.append(NewRow(cur.lastrowid, spec.name, outcome, embeddings[i]))
                conn.execute(
                    "INSERT INTO collection_counts(collection, n) VALUES (?, 1) "
                    "ON CONFLICT(collection) DO UPDATE SET n = n + 1", (spec.name,),
                )
        return uids

    def _place_image(self, image: bytes | None, sha: str | None) -> tuple[bytes | None, str | None]:
        if image is None:
            return None, None
        if self.image_dir is None:
            return bytes(image), None
        self.image_dir.mkdir(parents=True, exist_ok=True)
        name = f"{sha}.png"
        target = self.image_dir / name
        if not target.exists():
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(image)
            tmp.replace(target)
        return None, name

    def add_strategic_plan(self, plan: StrategicPlan) -> str:
        return self.add(plan)

    def add_task_experience(self, task: TaskExperience, *, parent_uid: str | None = None) -> str:
        return self.add(task, parent_uid=parent_uid)

    def add_navigate_experience(self, exp: NavigateExperience, *, parent_uid: str | None = None) -> str:
        return self.add(exp, parent_uid=parent_uid)

    def add_search_experience(self, exp: SearchLocateExperience, *, parent_uid: str | None = None) -> str:
        return self.add(exp, parent_uid=parent_uid)

    def delete(self, uid: str) -> bool:
        """Remove one experience (vec0's INSERT OR REPLACE is broken, so edits are delete + add)."""
        gone: list[tuple[int, str, str]] = []

        def forget() -> None:
            for rowid, collection, outcome in gone:
                self._vectors.removed(rowid, collection, outcome)

        with self.write(on_commit=forget) as conn:
            row = conn.execute("SELECT id, collection, is_success FROM experiences WHERE uid = ?", (uid,)).fetchone()
            if row is None:
                return False
            gone.append(tuple(row))
            conn.execute("DELETE FROM experience_vec WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM experience_vec_i8 WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM experiences WHERE id = ?", (row[0],))
            conn.execute("UPDATE collection_counts SET n = n - 1 WHERE collection = ?", (row[1],))
        return True

    # ------------------------------------------------------------------ retrieval
    def search(self, query: str | np.ndarray, collection: str, *, k: int | None = None,
               outcome: str | None = None, threshold: float | None = None) -> list[Retrieved]:
        """KNN within one collection, best first.

        ``k`` defaults to ``max_retrieval_results`` and ``threshold`` to
        ``similarity_threshold``; ``outcome`` ('success' / 'failure') selects
        one partition, so up to k matching rows always come back. Runs on the
        in-memory vectors (see the module docstring).
        """
        k, threshold, vec = self._search_args(query, collection, k, outcome, threshold)
        hits = self._vectors.knn(self.conn, vec, collection, k, outcome,
                                 candidates=self._candidates(k),
                                 exact_max_rows=self.cfg.exact_search_max_rows, load_guard=self._lock.reading)
        return self._materialise(hits, threshold)

    def warm(self, collections: Sequence[str] | None = None) -> None:
        """Read ``collections`` into memory and train their PQ prefilters now (seconds at 100k rows).

        Otherwise the first search of a collection pays for it; call this
        before take-off so in-flight retrievals stay in the millisecond range.
        """
        for collection in list(COLLECTIONS) if collections is None else collections:
            if collection not in COLLECTIONS:
                raise ExperienceStoreError(f"unknown collection {collection!r} (known: {', '.join(COLLECTIONS)})")
            self._vectors.warm(self.conn, collection, candidates=self._candidates(self.cfg.max_retrieval_results),
                               exact_max_rows=self.cfg.exact_search_max_rows, load_guard=self._lock.reading)

    def _candidates(self, k: int) -> int:
        return max(k * self.cfg.prefilter_oversample, k)

    def search_exact(self, query: str | np.ndarray, collection: str, *, k: int | None = None,
                     outcome: str | None = None, threshold: float | None = None) -> list[Retrieved]:
        """The same query as :meth:`search`, answered by sqlite-vec's exact float32 KNN.

        Slow on large collections (a full vec0 scan); it is the reference that
        :meth:`search` is checked and benchmarked against, and needs no cache.
        """
        k, threshold, vec = self._search_args(query, collection, k, outcome, threshold)
        sql = "SELECT rowid, distance FROM experience_vec WHERE embedding MATCH ? AND k = ? AND collection = ?"
        args: list[Any] = [vec.tobytes(), k, collection]
        if outcome is not None:
            sql += " AND is_success = ?"
            args.append(outcome)
        hits = self.conn.execute(sql + " ORDER BY distance", args).fetchall()
        return self._materialise([(rowid, 1.0 - dist) for rowid, dist in hits], threshold)

    def _search_args(self, query: str | np.ndarray, collection: str, k: int | None, outcome: str | None,
                     threshold: float | None) -> tuple[int, float, np.ndarray]:
        if collection not in COLLECTIONS:
            raise ExperienceStoreError(f"unknown collection {collection!r} (known: {', '.join(COLLECTIONS)})")
        k = self.cfg.max_retrieval_results if k is None else k
        if not 1 <= k <= VEC0_MAX_K:
            raise ExperienceStoreError(f"k must be in 1..{VEC0_MAX_K}, got {k}")
        threshold = self.cfg.similarity_threshold if threshold is None else threshold
        if outcome is not None and outcome not in ("success", "failure"):
            raise RecordError(f"outcome must be 'success' or 'failure', got {outcome!r}")
        return k, threshold, self._query_vector(query)

    def collection_size(self, collection: str) -> int:
        row = self.conn.execute("SELECT n FROM collection_counts WHERE collection = ?", (collection,)).fetchone()
        return row[0] if row else 0

    def _query_vector(self, query: str | np.ndarray) -> np.ndarray:
        if isinstance(query, str):
            return self.embedder.embed([query])[0]
        vec = np.ascontiguousarray(query, dtype=np.float32)
        if vec.shape != (self.embedder.dim,):
            raise ExperienceStoreError(f"query vector must have shape ({self.embedder.dim},)")
        return vec

    def _materialise(self, scored: list[tuple[int, float]], threshold: float) -> list[Retrieved]:
        out = []
        for rowid, sim in scored:
            if sim < threshold:
                continue
            row = self.conn.execute(
                "SELECT uid, collection, level, fields, image, image_ref, parent_uid FROM experiences WHERE id = ?",
                (rowid,),
            ).fetchone()
            if row is None:
                continue
            uid, collection, level, fields_json, image, image_ref, parent = row
            if image is None and image_ref:
                image = self._read_image(image_ref)
            out.append(Retrieved(uid=uid, collection=collection, level=level, similarity=float(sim),
                                 record=record_from_row(collection, fields_json, image), parent_uid=parent))
        return out

    def _read_image(self, ref: str) -> bytes | None:
        if self.image_dir is None:
            return None
        p = self.image_dir / ref
        return p.read_bytes() if p.exists() else None

    def retrieve_plans(self, task_instruction: str, k: int | None = None) -> list[Retrieved[StrategicPlan]]:
        return self.search(task_instruction, STRATEGIC_PLAN, k=k)

    def rank_children(self, query: str | np.ndarray, parent_uids: Sequence[str], *, collections: Sequence[str],
                      k: int, threshold: float | None = None) -> list[Retrieved]:
        """Exact cosine ranking of the experiences whose parent is one of ``parent_uids``.

        The candidate set is small (children of a few hits), so it is scored
        from the stored float32 copies rather than through vec0, whose outer
        filters would apply after k.
        """
        if not parent_uids:
            return []
        threshold = self.cfg.similarity_threshold if threshold is None else threshold
        vec = self._query_vector(query)
        marks = ",".join("?" * len(parent_uids))
        cmarks = ",".join("?" * len(collections))
        rows = self.conn.execute(
            f"SELECT id, embedding FROM experiences WHERE parent_uid IN ({marks}) AND collection IN ({cmarks})",
            [*parent_uids, *collections],
        ).fetchall()
        if not rows:
            return []
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        sims = mat @ vec
        order = np.argsort(-sims)[:k]
        return self._materialise([(rows[i][0], float(sims[i])) for i in order], threshold)

    # ------------------------------------------------------------------ export support and stats
    def iter_experiences(self, collection: str | None = None) -> Iterator[BundleItem]:
        """All experiences, parents before children (in insertion order), as the bundle carries them."""
        sql = "SELECT uid, collection, level, fields, image, image_ref, parent_uid, source, created_at FROM experiences"
        args: list[Any] = []
        if collection:
            sql += " WHERE collection = ?"
            args.append(collection)
        for uid, coll, level, fields_json, image, ref, parent, source, created in self.conn.execute(sql + " ORDER BY id", args).fetchall():
            if image is None and ref:
                image = self._read_image(ref)
            yield BundleItem(uid=uid, collection=coll, level=level, parent_uid=parent, source=source,
                                   created_at=created, record=record_from_row(coll, fields_json, image))

    def has(self, uid: str) -> bool:
        return self.conn.execute("SELECT 1 FROM experiences WHERE uid = ?", (uid,)).fetchone() is not None

    def count(self, collection: str | None = None) -> int:
        if collection is None:
            return self.conn.execute("SELECT count(*) FROM experiences").fetchone()[0]
        return self.conn.execute("SELECT count(*) FROM experiences WHERE collection = ?", (collection,)).fetchone()[0]

    def stats(self) -> StoreStats:
        counts: dict[str, dict[str, int]] = {name: {"success": 0, "failure": 0} for name in COLLECTIONS}
        for coll, outcome, n in self.conn.execute(
                "SELECT collection, is_success, count(*) FROM experiences GROUP BY collection, is_success"):
            counts.setdefault(coll, {})[outcome] = n
        (version,) = self.conn.execute("PRAGMA user_version").fetchone()
        model = self.conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        size = sum(p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists())
        return StoreStats(
            path=str(self.path), schema_version=version,
            sqlite=f"{self.backend.name} {'.'.join(map(str, self.backend.sqlite_version))}",
            sqlite_vec=self.backend.vec_version, embedding_model=model[0] if model else "",
            file_bytes=size, counts=counts,
            reflections=self.conn.execute("SELECT count(*) FROM reflections").fetchone()[0],
            episodic_sentences=self.conn.execute("SELECT count(*) FROM episodic").fetchone()[0],
        )

    def integrity_ok(self) -> bool:
        rows = self.conn.execute("PRAGMA integrity_check").fetchall()
        return [r[0] for r in rows] == ["ok"]


__all__ = ["ExperienceStore", "ExperienceStoreError", "SchemaError", "StoreStats", "WriterBusy"]

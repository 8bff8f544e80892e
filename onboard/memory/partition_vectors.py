"""The float32 vectors of one (collection, outcome) partition held in memory, with an optional PQ prefilter.

Why in memory: a KNN over 100k rows through sqlite-vec costs 80-100 ms (its
scan is not SIMD-tight and every chunk is read through SQLite), while the
same vectors as one contiguous float32 matrix are scanned by BLAS in about a
tenth of that, and a 4-bit product-quantisation code of them (faiss
``PQ<dim/2>x4fs``: 2 dimensions per sub-quantiser, 16 centroids, 96 bytes a
row at 384-d) is scanned with SIMD look-up tables in about 1 ms. The PQ
scores only choose candidates; every returned similarity is the exact float32
cosine of the row, so a threshold means the same as with exact search.

Random or unclustered embeddings defeat graph and cluster indexes (HNSW and
IVF recall collapses on them), which is why a full scan of short codes is
used rather than an index that skips rows.

Rows are appended at the end and deleted by tombstone, so the faiss position
of a row is its position here; once tombstones outnumber the candidates a
query asks for, the partition is compacted (codes re-added, codebooks kept).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

# A 16-centroid k-means wants ~40 points per centroid; below this a partition is always scanned exactly.
PQ_MIN_ROWS = 1024
# At most this many rows (an even stride) train the codebooks: 256 per centroid is faiss's own cap,
# and with 12 k-means iterations training takes about a second at 384-d instead of three.
PQ_TRAIN_ROWS = 4096
PQ_TRAIN_ITERATIONS = 12


def load_faiss() -> Any | None:
    """faiss if installed, else None: without it every partition is scanned exactly (slower, same results)."""
    try:
        import faiss  # type: ignore[import-not-found]
    except ImportError:
        return None
    return faiss


@contextmanager
def one_faiss_thread(faiss: Any) -> Iterator[None]:
    """Run faiss single-threaded in this thread (OpenMP's thread count is a per-thread setting).

    On a small onboard CPU faiss's OpenMP threads and numpy's spinning
    OpenBLAS threads oversubscribe the cores: training PQ right after a
    matrix product took several times longer on 2 cores (docs/BENCHMARKS.md,
    "Why the defaults"), and a one-query search gains nothing from a second thread.
    """
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


@dataclass
class PartitionVectors:
    """Growable matrix of one partition's unit vectors, their SQLite row ids, and tombstones."""

    dim: int
    ids: np.ndarray = field(init=False)          # int64 experiences.id per position, -1 once deleted
    vectors: np.ndarray = field(init=False)      # float32 (capacity, dim); rows [:size] are in use
    size: int = 0
    dead: int = 0
    pq: Any = None                               # faiss fast-scan index over positions [:size], or None
    faiss_module: Any = None                     # the faiss that built ``pq``
    _where: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ids = np.empty(0, dtype=np.int64)
        self.vectors = np.empty((0, self.dim), dtype=np.float32)

    @property
    def alive(self) -> int:
        return self.size - self.dead

    def has(self, rowid: int) -> bool:
        return rowid in self._where

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        n = len(ids)
        if n == 0:
            return
        need = self.size + n
        if need > len(self.ids):
            cap = max(need, 2 * len(self.ids), 64)
            grown_ids = np.full(cap, -1, dtype=np.int64)
            grown_ids[:self.size] = self.ids[:self.size]
            grown = np.empty((cap, self.dim), dtype=np.float32)
            grown[:self.size] = self.vectors[:self.size]
            self.ids, self.vectors = grown_ids, grown
        self.ids[self.size:need] = ids
        self.vectors[self.size:need] = vectors
        for j, rowid in enumerate(ids.tolist()):
            self._where[rowid] = self.size + j
        if self.pq is not None:
            with one_faiss_thread(self.faiss_module):
                self.pq.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self.size = need

    def remove(self, rowid: int) -> bool:
        pos = self._where.pop(rowid, None)
        if pos is None:
            return False
        self.ids[pos] = -1
        self.dead += 1
        return True

    def compact(self) -> None:
        """Drop tombstoned rows; the PQ codebooks are kept, the codes re-added."""
        keep = np.flatnonzero(self.ids[:self.size] >= 0)
        ids, vecs = self.ids[keep].copy(), self.vectors[keep].copy()
        pq = self.pq
        self.ids = np.empty(0, dtype=np.int64)
        self.vectors = np.empty((0, self.dim), dtype=np.float32)
        self.size = self.dead = 0
        self._where = {}
        if pq is not None:
            pq.reset()
        self.pq = None
        self.append(ids, vecs)
        if pq is not None:
            with one_faiss_thread(self.faiss_module):
                pq.add(self.vectors[:self.size])
            self.pq = pq

    def build_pq(self, faiss: Any) -> None:
        """Train 4-bit PQ codebooks on (a stride of) this partition's rows and encode every row."""
        if self.dead:
            self.compact()
        rows = self.vectors[:self.size]
        step = max(1, self.size // PQ_TRAIN_ROWS)
        index = faiss.index_factory(self.dim, f"PQ{self.dim // 2}x4fs", faiss.METRIC_INNER_PRODUCT)
        index.pq.cp.niter = PQ_TRAIN_ITERATIONS
        with one_faiss_thread(faiss):
            index.train(np.ascontiguousarray(rows[::step]))
            index.add(rows)
        self.pq, self.faiss_module = index, faiss

    def prepare(self, candidates: int, exact_max_rows: int, faiss: Any | None) -> bool:
        """Build or compact the PQ index if this partition's queries will use it; True if they will."""
        use_pq = (faiss is not None and self.dim % 2 == 0 and self.alive > exact_max_rows
                  and self.alive >= PQ_MIN_ROWS and candidates < self.alive)
        if use_pq:
            if self.pq is None:
                self.build_pq(faiss)
            elif self.dead > candidates:
                self.compact()
        return use_pq

    def knn(self, q: np.ndarray, k: int, candidates: int, exact_max_rows: int,
            faiss: Any | None) -> tuple[np.ndarray, np.ndarray]:
        """Best ``min(k, alive)`` rows as (experiences ids, exact cosine), best first.

        Partitions above ``exact_max_rows`` (and large enough to train PQ) are
        prefiltered to ``candidates`` rows by PQ and rescored exactly; others
        are scanned exactly.
        """
        if self.alive == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        use_pq = self.prepare(candidates, exact_max_rows, faiss)
        if use_pq:
            with one_faiss_thread(faiss):
                _, found = self.pq.search(q[None, :], min(candidates + self.dead, self.size))
            pos = found[0]
            pos = pos[pos >= 0]
            pos = pos[self.ids[pos] >= 0]
            if len(pos) < min(k, self.alive):  # cannot happen with candidates >= k; kept as a guard
                use_pq = False
        if not use_pq:
            pos = np.flatnonzero(self.ids[:self.size] >= 0) if self.dead else np.arange(self.size)
        sims = self.vectors[pos] @ q if use_pq or self.dead else self.vectors[:self.size] @ q
        top = min(k, len(pos))
        best = np.argpartition(-sims, top - 1)[:top] if top < len(pos) else np.arange(len(pos))
        best = best[np.argsort(-sims[best], kind="stable")]
        return self.ids[pos[best]], sims[best]

"""One partition's in-memory vectors: the PQ prefilter finds what exact search finds; tombstones never return."""

from __future__ import annotations

import numpy as np
import pytest

from onboard.memory.partition_vectors import PQ_MIN_ROWS, PartitionVectors

faiss = pytest.importorskip("faiss")
DIM = 384


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def exact_top(x: np.ndarray, ids: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return ids[np.argsort(-(x @ q))[:k]].tolist()


def test_pq_prefilter_recall_and_exact_similarities() -> None:
    rng = np.random.default_rng(3)
    x = unit(rng, 3000)
    ids = np.arange(100, 3100, dtype=np.int64)
    part = PartitionVectors(DIM)
    part.append(ids, x)
    threads = faiss.omp_get_max_threads()
    recalls = []
    for q in unit(rng, 20):
        got, sims = part.knn(q, 10, candidates=600, exact_max_rows=0, faiss=faiss)
        assert part.pq is not None and part.pq.ntotal == 3000  # the PQ path ran, not the exact scan
        recalls.append(len(set(got.tolist()) & set(exact_top(x, ids, q, 10))) / 10)
        assert np.allclose(sims, x[got - 100] @ q, atol=1e-6)  # returned scores are exact cosines
        assert list(sims) == sorted(sims, reverse=True)
    assert np.mean(recalls) >= 0.98
    assert faiss.omp_get_max_threads() == threads  # single-threaded faiss calls restore the setting


def test_small_partition_is_scanned_exactly() -> None:
    rng = np.random.default_rng(4)
    x = unit(rng, PQ_MIN_ROWS - 1)
    ids = np.arange(1, len(x) + 1, dtype=np.int64)
    part = PartitionVectors(DIM)
    part.append(ids, x)
    q = unit(rng, 1)[0]
    got, _ = part.knn(q, 5, candidates=50, exact_max_rows=0, faiss=faiss)
    assert part.pq is None and got.tolist() == exact_top(x, ids, q, 5)


def test_deleted_rows_never_return_and_compaction_keeps_results_exact() -> None:
    rng = np.random.default_rng(5)
    x = unit(rng, 2500)
    ids = np.arange(1, 2501, dtype=np.int64)
    part = PartitionVectors(DIM)
    part.append(ids, x)
    q = unit(rng, 1)[0]
    first, _ = part.knn(q, 10, candidates=200, exact_max_rows=0, faiss=faiss)
    for rowid in first.tolist():
        assert part.remove(rowid)
    assert not part.remove(int(first[0]))  # already gone
    again, _ = part.knn(q, 10, candidates=200, exact_max_rows=0, faiss=faiss)
    assert not set(again.tolist()) & set(first.tolist())
    # Delete more rows than the query's candidates: the partition compacts and stays consistent.
    gone = set(first.tolist()) | set(range(1, 400))
    for rowid in range(1, 400):
        part.remove(rowid)
    got, _ = part.knn(q, 10, candidates=200, exact_max_rows=0, faiss=faiss)
    assert part.dead == 0 and part.size == part.alive == 2500 - len(gone) and part.pq.ntotal == part.size
    keep = np.array([i for i in range(1, 2501) if i not in gone])
    truth = exact_top(x[keep - 1], keep, q, 10)
    assert not set(got.tolist()) & gone
    assert len(set(got.tolist()) & set(truth)) >= 9
    # Rows appended after compaction are found (and encoded into the same PQ index).
    part.append(np.array([9999], dtype=np.int64), q[None, :])
    top, sims = part.knn(q, 1, candidates=200, exact_max_rows=0, faiss=faiss)
    assert top.tolist() == [9999] and sims[0] == pytest.approx(1.0, abs=1e-5)

"""The store's in-memory vectors stay in step with SQLite, and search agrees with sqlite-vec's exact KNN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from onboard.memory.experience_store import ExperienceStore
from contract.records import NAVIGATE_EXPERIENCE, NavigateExperience
from onboard.memory.settings import MemoryConfig

DIM = 384


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def fill(store: ExperienceStore, vecs: np.ndarray, tag: str = "") -> list[str]:
    recs = [NavigateExperience("g", "failure" if i % 3 == 0 else "success", "r", "{}", f"state {tag}{i}")
            for i in range(len(vecs))]
    return store.add_many(recs, embeddings=vecs)


def uids(hits) -> list[str]:
    return [h.uid for h in hits]


def test_search_agrees_with_exact_sqlite_vec_on_the_pq_path(tmp_path: Path, embedder) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    cfg = MemoryConfig(writer_timeout_s=0.5, exact_search_max_rows=0, prefilter_oversample=30)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as store:
        fill(store, unit(rng, 2400))
        overlaps = []
        for q in unit(rng, 15):
            for outcome in (None, "success", "failure"):
                fast = store.search(q, NAVIGATE_EXPERIENCE, k=10, outcome=outcome, threshold=-1)
                exact = store.search_exact(q, NAVIGATE_EXPERIENCE, k=10, outcome=outcome, threshold=-1)
                assert len(fast) == len(exact) == 10
                if outcome is not None:
                    assert all(h.record.is_success == outcome for h in fast)
                overlaps.append(len(set(uids(fast)) & set(uids(exact))) / 10)
                by_uid = {h.uid: h.similarity for h in exact}
                for h in fast:  # same row, same (exact) similarity
                    if h.uid in by_uid:
                        assert h.similarity == pytest.approx(by_uid[h.uid], abs=1e-5)
        parts = store._vectors._parts[NAVIGATE_EXPERIENCE]
        assert parts["success"].pq is not None  # 1600 rows: the PQ prefilter really ran
        assert np.mean(overlaps) >= 0.95


def test_threshold_and_k_still_apply(tmp_path: Path, embedder) -> None:
    rng = np.random.default_rng(12)
    cfg = MemoryConfig(writer_timeout_s=0.5, max_retrieval_results=4)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as store:
        vecs = unit(rng, 50)
        fill(store, vecs)
        assert len(store.search(vecs[0], NAVIGATE_EXPERIENCE, threshold=-1)) == 4
        hits = store.search(vecs[0], NAVIGATE_EXPERIENCE, k=10, threshold=0.5)
        assert [h.similarity for h in hits] == pytest.approx([1.0], abs=1e-5)  # random others are ~0.05


def test_cache_follows_own_adds_and_deletes(tmp_path: Path, embedder, cfg) -> None:
    rng = np.random.default_rng(13)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as store:
        fill(store, unit(rng, 30))
        q = unit(rng, 1)[0]
        store.search(q, NAVIGATE_EXPERIENCE, threshold=-1)  # loads the collection
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 30
        (new,) = fill(store, q[None, :], tag="new")
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 31
        assert uids(store.search(q, NAVIGATE_EXPERIENCE, k=1, threshold=-1)) == [new]
        assert store.delete(new)
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 30
        assert new not in uids(store.search(q, NAVIGATE_EXPERIENCE, k=30, threshold=-1))
        assert uids(store.search(q, NAVIGATE_EXPERIENCE, k=5, threshold=-1)) == \
            uids(store.search_exact(q, NAVIGATE_EXPERIENCE, k=5, threshold=-1))


def test_cache_follows_writes_by_another_connection(tmp_path: Path, embedder, cfg) -> None:
    rng = np.random.default_rng(14)
    path = tmp_path / "m.sqlite"
    with ExperienceStore.open(path, embedder, cfg) as reader, ExperienceStore.open(path, embedder, cfg) as writer:
        fill(writer, unit(rng, 20))
        q = unit(rng, 1)[0]
        before = uids(reader.search(q, NAVIGATE_EXPERIENCE, k=3, threshold=-1))
        (new,) = fill(writer, q[None, :], tag="other")
        assert uids(reader.search(q, NAVIGATE_EXPERIENCE, k=1, threshold=-1)) == [new]
        assert writer.delete(new)
        assert uids(reader.search(q, NAVIGATE_EXPERIENCE, k=3, threshold=-1)) == before
        assert reader._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 20


def test_rolled_back_write_never_reaches_the_cache(tmp_path: Path, embedder, cfg) -> None:
    rng = np.random.default_rng(15)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as store:
        fill(store, unit(rng, 10))
        q = unit(rng, 1)[0]
        store.search(q, NAVIGATE_EXPERIENCE, threshold=-1)
        # A real SQLite failure on the second row, after the first row was written in the same transaction.
        store.conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON experiences WHEN NEW.query_text = 'boom' "
                           "BEGIN SELECT RAISE(ABORT, 'refused'); END")
        rows = [NavigateExperience("g", "success", "r", "{}", text) for text in ("fine", "boom")]
        with pytest.raises(Exception, match="refused"):
            store.add_many(rows, embeddings=unit(rng, 2))
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 10 == store.count(NAVIGATE_EXPERIENCE)


def test_warm_builds_what_search_then_uses(tmp_path: Path, embedder) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(16)
    cfg = MemoryConfig(writer_timeout_s=0.5, exact_search_max_rows=0)
    path = tmp_path / "m.sqlite"
    with ExperienceStore.open(path, embedder, cfg) as store:
        fill(store, unit(rng, 1700))
    with ExperienceStore.open(path, embedder, cfg) as store:
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) is None
        store.warm([NAVIGATE_EXPERIENCE])
        parts = store._vectors._parts[NAVIGATE_EXPERIENCE]
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == 1700
        built = parts["success"].pq
        assert built is not None and parts["failure"].pq is None  # 567 failures: too few to train PQ
        store.search(unit(rng, 1)[0], NAVIGATE_EXPERIENCE, k=3)
        assert store._vectors._parts[NAVIGATE_EXPERIENCE]["success"].pq is built


def test_threads_writing_and_searching_leave_the_cache_equal_to_the_file(tmp_path: Path, embedder) -> None:
    import threading

    rng = np.random.default_rng(17)
    cfg = MemoryConfig(writer_timeout_s=5.0)
    vecs = unit(rng, 240)
    queries = unit(rng, 5)
    errors: list[BaseException] = []
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as store:
        def writer(w: int) -> None:
            try:
                for b in range(6):
                    chunk = vecs[w * 120 + b * 20: w * 120 + (b + 1) * 20]
                    new = fill(store, chunk, tag=f"w{w}b{b}-")
                    assert store.delete(new[0])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        def searcher() -> None:
            try:
                for _ in range(30):
                    for q in queries:
                        store.search(q, NAVIGATE_EXPERIENCE, k=5, threshold=-1)
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)] + \
            [threading.Thread(target=searcher) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert store._vectors.loaded_rows(NAVIGATE_EXPERIENCE) == store.count(NAVIGATE_EXPERIENCE) == 240 - 12
        for q in queries:
            assert uids(store.search(q, NAVIGATE_EXPERIENCE, k=5, threshold=-1)) == \
                uids(store.search_exact(q, NAVIGATE_EXPERIENCE, k=5, threshold=-1))

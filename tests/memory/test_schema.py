"""Opening the memory file: migrations, integrity, foreign/corrupt files, writer contention."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from onboard.memory import flight_notes
from onboard.memory.experience_store import ExperienceStore, ExperienceStoreError
from contract.records import NavigateExperience
from onboard.memory.schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    CorruptMemoryFile,
    SchemaTooNew,
    WriterBusy,
    open_memory_file,
)
from onboard.memory.settings import MemoryConfig
from onboard.memory.sqlite_vec_db import connect, find_backend


def test_new_file_is_wal_versioned_and_marked(tmp_path: Path, embedder, cfg) -> None:
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, cfg) as s:
        assert s.open_report.from_version == 0 and s.open_report.to_version == SCHEMA_VERSION
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s.conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert s.integrity_ok()


def test_forward_migration_from_v1_keeps_data(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "old.sqlite"
    backend = find_backend()
    conn, rep = open_memory_file(path, backend, dim=embedder.dim, timeout_s=1, target_version=1)
    assert rep.to_version == 1
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'reflections'").fetchone()[0] == 0
    conn.close()
    with ExperienceStore.open(path, embedder, cfg) as s:  # v1 -> v2
        assert (s.open_report.from_version, s.open_report.to_version) == (1, SCHEMA_VERSION)
        s.add(NavigateExperience("g", "success", "r", "{}", "over the river"))
        flight_notes.save_reflection(s, "f1", "keep altitude over water")
    with ExperienceStore.open(path, embedder, cfg) as s:
        assert s.open_report.from_version == SCHEMA_VERSION
        assert s.count() == 1 and flight_notes.recent_reflections(s) == ["keep altitude over water"]


def test_newer_schema_is_refused(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "new.sqlite"
    ExperienceStore.open(path, embedder, cfg).close()
    conn = connect(path, find_backend(), timeout_s=1)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaTooNew, match=str(path)):
        ExperienceStore.open(path, embedder, cfg)


def test_foreign_sqlite_file_is_not_recreated(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "foreign.sqlite"
    conn = connect(path, find_backend(), timeout_s=1)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO photos(name) VALUES ('keep me')")
    conn.close()
    with pytest.raises(CorruptMemoryFile, match="not an Aerie memory file"):
        ExperienceStore.open(path, embedder, cfg)
    conn = connect(path, find_backend(), timeout_s=1)
    assert conn.execute("SELECT name FROM photos").fetchone()[0] == "keep me"
    conn.close()


def test_non_sqlite_file_is_refused_then_moved_aside_on_request(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "memory.sqlite"
    path.write_bytes(b"this is a flight log, not a database" * 100)
    with pytest.raises(CorruptMemoryFile, match=str(path)):
        ExperienceStore.open(path, embedder, cfg)
    assert path.read_bytes().startswith(b"this is a flight log")
    aside_cfg = MemoryConfig(move_aside_corrupt=True, writer_timeout_s=0.5)
    with ExperienceStore.open(path, embedder, aside_cfg) as s:
        moved = s.open_report.moved_aside_to
        assert moved is not None and moved.name.startswith("memory.sqlite.corrupt-")
        assert moved.read_bytes().startswith(b"this is a flight log")
        assert s.count() == 0


def test_damaged_pages_fail_the_integrity_check(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "memory.sqlite"
    with ExperienceStore.open(path, embedder, cfg) as s:
        s.add_many([NavigateExperience(f"g{i}", "success", "r" * 200, "{}", f"state {i} " * 30) for i in range(40)])
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data) - page, 3 * page):  # scribble over b-tree pages, keep the header
        data[offset:offset + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptMemoryFile, match=str(path)):
        ExperienceStore.open(path, embedder, cfg)


def test_second_writer_gets_a_clear_timeout_error(tmp_path: Path, embedder) -> None:
    path = tmp_path / "memory.sqlite"
    cfg = MemoryConfig(writer_timeout_s=0.3)
    with ExperienceStore.open(path, embedder, cfg) as a, ExperienceStore.open(path, embedder, cfg) as b:
        a.conn.execute("BEGIN IMMEDIATE")  # a holds the write lock
        try:
            t0 = time.monotonic()
            with pytest.raises(WriterBusy, match=str(path)):
                b.add(NavigateExperience("g", "success", "r", "{}", "over the harbour"))
            assert time.monotonic() - t0 >= 0.25
            assert b.search("harbour", "navigate_experience_memory", threshold=-1) == []  # readers still read
        finally:
            a.conn.execute("ROLLBACK")
        b.add(NavigateExperience("g", "success", "r", "{}", "over the harbour"))
        assert a.count() == 1


def test_other_embedding_model_is_refused(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "memory.sqlite"
    ExperienceStore.open(path, embedder, cfg).close()

    class Other:
        model_id = "some-other-model"
        dim = embedder.dim

        def embed(self, texts):
            return embedder.embed(texts)

    with pytest.raises(ExperienceStoreError, match="some-other-model"):
        ExperienceStore.open(path, Other(), cfg)


def test_v3_migration_backfills_the_int8_prefilter(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "v2.sqlite"
    conn, _ = open_memory_file(path, find_backend(), dim=embedder.dim, timeout_s=1, target_version=2)
    conn.close()
    # Write v2-era rows the way a v2 store did (no int8 table yet).
    import json

    import numpy as np

    conn = connect(path, find_backend(), timeout_s=1)
    texts = ["over the harbour in strong wind", "a church with a red roof", "low battery far from home"]
    vecs = embedder.embed(texts)
    conn.execute("INSERT INTO meta(key, value) VALUES ('embedding_model', ?)", (f"{embedder.model_id}/{embedder.dim}",))
    for i, (t, v) in enumerate(zip(texts, vecs)):
        fields = {"navigation_goal": "g", "is_success": "success", "reflect_reason": f"r{i}", "refined_action": "{}",
                  "current_state": t}
        cur = conn.execute(
            "INSERT INTO experiences(uid, collection, level, is_success, query_text, fields, embedding, source, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,0)",
            (f"u{i}", "navigate_experience_memory", "atomic", "success", t, json.dumps(fields), v.tobytes(), "local"))
        conn.execute("INSERT INTO experience_vec(rowid, collection, level, is_success, embedding) VALUES (?,?,?,?,?)",
                     (cur.lastrowid, "navigate_experience_memory", "atomic", "success", v.tobytes()))
    conn.close()
    prefilter_cfg = MemoryConfig(exact_search_max_rows=0, writer_timeout_s=0.5)
    with ExperienceStore.open(path, embedder, prefilter_cfg) as s:
        assert (s.open_report.from_version, s.open_report.to_version) == (2, SCHEMA_VERSION)
        assert s.conn.execute("SELECT count(*) FROM experience_vec_i8").fetchone()[0] == 3
        assert s.collection_size("navigate_experience_memory") == 3
        hit = s.search("a red-roofed church", "navigate_experience_memory", k=1)[0]
        assert hit.uid == "u1"
        assert np.isclose(hit.similarity, float(vecs[1] @ embedder.embed(["a red-roofed church"])[0]), atol=1e-5)


def test_threads_sharing_a_store_write_safely(tmp_path, embedder, cfg) -> None:
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from onboard.memory.experience_store import ExperienceStore

    # Four writers queue on one lock: on a loaded machine a writer can wait longer than the fixtures' 0.5 s
    # (meant to make a wedged lock fail fast), so this store waits as long as a vehicle's default allows and more.
    with ExperienceStore.open(tmp_path / "threads.sqlite", embedder, replace(cfg, writer_timeout_s=60.0)) as store:
        def write(i: int) -> str:
            return store.add(NavigateExperience(f"g{i}", "success", f"r{i}", "{}", f"thread {i} over the park"))

        with ThreadPoolExecutor(4) as pool:
            uids = list(pool.map(write, range(24)))
        assert len(set(uids)) == 24 and store.count() == 24 and store.integrity_ok()

"""The memory file's schema, its forward migrations, and the checks made on open.

A vehicle's memory is what it learned over many flights, so a file that is
corrupted or is not ours is never silently recreated: opening it raises an
error that names the file, and only an explicit ``move_aside`` renames it
out of the way (with its -wal/-shm companions) before a new file is made.

Versions: the SQLite header's ``application_id`` marks the file as Aerie
memory and ``user_version`` holds the schema version. Migrations run forward
only, each in its own transaction, so a crash mid-migration leaves the file
at the previous version.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from onboard.memory.sqlite_vec_db import SqliteBackend, connect

# "AERM" as a big-endian int: marks a SQLite file as Aerie memory.
APPLICATION_ID = 0x4145524D
SQLITE_MAGIC = b"SQLite format 3\x00"


class SchemaError(RuntimeError):
    """The memory file cannot be used as it is; the message names the file."""


class CorruptMemoryFile(SchemaError):
    """The file is damaged, or is some other program's file."""


class SchemaTooNew(SchemaError):
    """The file was written by a newer Aerie (a schema version this code does not know)."""


class WriterBusy(SchemaError):
    """Another writer held the memory file past the writer timeout."""


def _v1(conn: Any, dim: int) -> None:
    """Experiences and their vectors (one vec0 table, partitioned by collection)."""
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        """CREATE TABLE experiences (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,          -- content hash: the same lesson has the same uid everywhere
            collection TEXT NOT NULL,
            level TEXT NOT NULL,               -- atomic | task | strategy
            is_success TEXT NOT NULL,          -- success | failure (status for plans)
            query_text TEXT NOT NULL,          -- the vectorised field
            fields TEXT NOT NULL,              -- JSON of the collection's other fields
            parent_uid TEXT,                   -- the experience one level up, if any
            image BLOB,                        -- PNG bytes (semantic_enhanced_image) ...
            image_ref TEXT,                    -- ... or a file name under the image dir
            image_sha256 TEXT,
            embedding BLOB NOT NULL,           -- float32 copy for exact re-scoring within candidates
            source TEXT NOT NULL,              -- 'local' or where an import came from
            created_at REAL NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX experiences_collection ON experiences(collection, level)")
    conn.execute("CREATE INDEX experiences_parent ON experiences(parent_uid)")
    conn.execute(
        f"""CREATE VIRTUAL TABLE experience_vec USING vec0(
            collection text partition key,
            level text,
            is_success text,
            embedding float[{dim}] distance_metric=cosine
        )"""
    )


def _v2(conn: Any, dim: int) -> None:
    """Reflections window, episodic sentences and semantic summaries (per flight)."""
    conn.execute(
        "CREATE TABLE reflections (id INTEGER PRIMARY KEY, flight_id TEXT NOT NULL, text TEXT NOT NULL, created_at REAL NOT NULL)"
    )
    conn.execute(
        """CREATE TABLE episodic (id INTEGER PRIMARY KEY, flight_id TEXT NOT NULL, step INTEGER NOT NULL,
           sentence TEXT NOT NULL, created_at REAL NOT NULL)"""
    )
    conn.execute("CREATE INDEX episodic_flight ON episodic(flight_id, step)")
    conn.execute(
        "CREATE TABLE semantic_summary (flight_id TEXT PRIMARY KEY, text TEXT NOT NULL, updated_at REAL NOT NULL)"
    )


def _v3(conn: Any, dim: int) -> None:
    """int8 prefilter index for large collections, backfilled from the stored float32 copies."""
    import numpy as np

    from onboard.memory.vector_codes import int8_codes

    conn.execute(
        f"""CREATE VIRTUAL TABLE experience_vec_i8 USING vec0(
            collection text partition key,
            level text,
            is_success text,
            embedding int8[{dim}]
        )"""
    )
    conn.execute("CREATE TABLE collection_counts (collection TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    conn.execute("INSERT INTO collection_counts SELECT collection, count(*) FROM experiences GROUP BY collection")
    rows = conn.execute("SELECT id, collection, level, is_success, embedding FROM experiences").fetchall()
    for i in range(0, len(rows), 1000):
        chunk = rows[i:i + 1000]
        codes = int8_codes(np.frombuffer(b"".join(r[4] for r in chunk), dtype=np.float32).reshape(len(chunk), dim))
        conn.executemany(
            "INSERT INTO experience_vec_i8(rowid, collection, level, is_success, embedding) VALUES (?,?,?,?,vec_int8(?))",
            [(r[0], r[1], r[2], r[3], codes[j].tobytes()) for j, r in enumerate(chunk)],
        )


def _v4(conn: Any, dim: int) -> None:
    """Reflections remember the task they were written for, so a later flight loads only related ones."""
    conn.execute("ALTER TABLE reflections ADD COLUMN task TEXT NOT NULL DEFAULT ''")


# MIGRATIONS[i] takes a file from version i to version i + 1.
MIGRATIONS: list[Callable[[Any, int], None]] = [_v1, _v2, _v3, _v4]
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class OpenReport:
    """What happened while opening: versions and whether a bad file was moved aside."""

    path: Path
    from_version: int
    to_version: int
    moved_aside_to: Path | None = None


def move_aside(path: Path) -> Path:
    """Rename ``path`` and its -wal/-shm files to ``<name>.corrupt-<utc>``; return the new path."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def _check_header(path: Path) -> None:
    with open(path, "rb") as fh:
        head = fh.read(100)
    if len(head) == 0:
        return  # an empty file: SQLite treats it as a new database
    if not head.startswith(SQLITE_MAGIC):
        raise CorruptMemoryFile(f"{path}: not a SQLite database (foreign or corrupted file)")


def _integrity(conn: Any, path: Path, full: bool) -> None:
    pragma = "integrity_check" if full else "quick_check"
    try:
        rows = conn.execute(f"PRAGMA {pragma}").fetchall()
    except Exception as exc:  # noqa: BLE001 - the DB-API module's DatabaseError
        raise CorruptMemoryFile(f"{path}: {pragma} failed: {exc}") from exc
    if [r[0] for r in rows] != ["ok"]:
        detail = "; ".join(str(r[0]) for r in rows[:5])
        raise CorruptMemoryFile(f"{path}: {pragma} reports damage: {detail}")


def is_locked_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _migrate(conn: Any, path: Path, dim: int, target: int) -> tuple[int, int]:
    (app_id,) = conn.execute("PRAGMA application_id").fetchone()
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if app_id != APPLICATION_ID:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != 0 or tables != 0:
            raise CorruptMemoryFile(
                f"{path}: not an Aerie memory file (application_id={app_id:#x}, {tables} schema objects)"
            )
    if version > len(MIGRATIONS):
        raise SchemaTooNew(f"{path}: schema version {version} is newer than this Aerie knows ({len(MIGRATIONS)})")
    start = version
    while version < target:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except Exception as exc:  # noqa: BLE001
            if is_locked_error(exc):
                raise WriterBusy(f"{path}: another writer holds the file; cannot migrate") from exc
            raise
        try:
            # Re-read under the lock: another process may have migrated meanwhile.
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < target:
                MIGRATIONS[version](conn, dim)
                version += 1
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
    return start, version


def open_memory_file(path: str | Path, backend: SqliteBackend, *, dim: int, timeout_s: float,
                     full_check: bool = True, move_aside_corrupt: bool = False,
                     target_version: int = SCHEMA_VERSION) -> tuple[Any, OpenReport]:
    """Open (creating if absent) and migrate the memory file; return the connection.

    ``target_version`` below the current one exists so tests can build old
    files and prove the forward migrations.
    """
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    moved: Path | None = None
    for attempt in (1, 2):
        conn = None
        try:
            if path.exists():
                _check_header(path)
            conn = connect(path, backend, timeout_s=timeout_s)
            _integrity(conn, path, full_check)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            start, version = _migrate(conn, path, dim, target_version)
            return conn, OpenReport(path=path, from_version=start, to_version=version, moved_aside_to=moved)
        except CorruptMemoryFile:
            if conn is not None:
                conn.close()
            if not move_aside_corrupt or attempt == 2:
                raise
            moved = move_aside(path)
        except Exception as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, SchemaError):
                raise
            if "not a database" in str(exc) or "malformed" in str(exc) or "corrupt" in str(exc):
                if not move_aside_corrupt or attempt == 2:
                    raise CorruptMemoryFile(f"{path}: {exc}") from exc
                moved = move_aside(path)
                continue
            raise
    raise AssertionError("unreachable")

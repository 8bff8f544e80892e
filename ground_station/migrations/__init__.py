"""Versioned schema migrations of a PostgreSQL ground database: plain numbered SQL files, run by `aerie ground migrate`.

A shared server is upgraded on purpose by whoever operates it, not as a side
effect of an ingest process starting: the ground processes check the version
and refuse, with the command to run, a database that is behind, and refuse one
that is ahead of them (a newer aerie migrated it). Each file runs in its own
transaction under an advisory lock, so two hosts that migrate at once apply each
file once, and a failed file leaves the database at the version before it.

(A SQLite flight log keeps its own ``PRAGMA user_version`` scheme and upgrades on
open, as it always has: one file, one writer.)
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from ground_station.log_db import DatabaseError, LogDb

POSTGRES_DIR = Path(__file__).resolve().parent / "postgresql"

# The lock every migrating process takes (an arbitrary constant: "aerie" in ASCII).
_LOCK_KEY = 0x6165726965

# The migration that made the flight log's tables; a database before it holds no flight log.
FLIGHT_LOG_VERSION = 1


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path


def available(folder: Path = POSTGRES_DIR) -> list[Migration]:
    """The numbered files ``NNNN_name.sql`` in order; a gap or a repeated number is an error."""
    found = []
    for p in sorted(folder.glob("*.sql")):
        m = re.fullmatch(r"(\d{4})_(\w+)\.sql", p.name)
        if m is None:
            raise DatabaseError(f"{p}: a migration is named NNNN_name.sql")
        found.append(Migration(int(m.group(1)), m.group(2), p))
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise DatabaseError(f"{folder}: migrations must be numbered 1, 2, 3 ... without gaps")
    return found


def current_version(db: LogDb) -> int:
    """The highest migration applied (0 for an empty database)."""
    exists = db.execute("SELECT to_regclass('schema_migrations')").fetchone()[0]
    if exists is None:
        return 0
    return int(db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])


def migrate(db: LogDb, folder: Path = POSTGRES_DIR) -> list[Migration]:
    """Apply every migration not yet applied; returns those this call applied."""
    applied: list[Migration] = []
    try:
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                   "applied_at DOUBLE PRECISION NOT NULL)")
        for mig in available(folder):
            db.begin()
            try:
                db.execute(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})")
                done = db.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (mig.version,)).fetchone()
                if done is None:
                    db.execute(mig.path.read_text(encoding="utf-8"))
                    db.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                               (mig.version, mig.name, time.time()))
                    applied.append(mig)
                db.commit()
            except BaseException:
                db.rollback()
                raise
    except db.errors as exc:
        raise DatabaseError(f"{db.where}: migration failed ({str(exc).strip()})") from exc
    return applied


def check(db: LogDb, need: int = FLIGHT_LOG_VERSION) -> int:
    """The database's version, if at least ``need`` and not newer than this aerie's migrations."""
    try:
        version = current_version(db)
    except db.errors as exc:
        raise DatabaseError(f"{db.where}: cannot read the schema version ({str(exc).strip()})") from exc
    latest = len(available())
    if version > latest:
        raise DatabaseError(f"{db.where}: schema version {version} is newer than this ground station's ({latest}); "
                            "use a newer aerie")
    if version < need:
        raise DatabaseError(f"{db.where}: schema version {version}, this ground station needs {need}: "
                            "run `aerie ground migrate --config FILE` first")
    return version

"""One connection to the ground's database, SQLite file or PostgreSQL server, behind one small interface.

The flight log's logic (idempotent storing, flights rebuilt from their markers,
cursors) is the same on both engines, so it is written once against this
interface in the SQL both accept (``INSERT ... ON CONFLICT``, ``?`` placeholders,
which the PostgreSQL side rewrites to ``%s``). What differs lives here: how a
write transaction starts (SQLite's ``BEGIN IMMEDIATE`` takes the file's one write
lock; PostgreSQL runs writers side by side, so a stream's writers serialise on an
advisory lock instead, see :meth:`LogDb.lock_stream`), and which errors mean the
database failed.

A target is a ``postgresql://`` (or ``postgres://``) URL, or else a file path.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any, Iterable

URL_PREFIXES = ("postgresql://", "postgres://")


class DatabaseError(RuntimeError):
    """The database could not be reached, opened or written."""


def is_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^/:@]*):[^@/]*@", r"\1:***@", url)


class LogDb:
    """The common interface; :class:`SqliteDb` and :class:`PostgresDb` implement it."""

    kind = ""
    where = ""               # the file or the redacted URL, for messages
    errors: tuple[type[BaseException], ...] = ()

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        raise NotImplementedError

    def begin(self) -> None:
        raise NotImplementedError

    @property
    def in_transaction(self) -> bool:
        raise NotImplementedError

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self.execute("ROLLBACK")

    def lock_stream(self, vehicle_id: str, stream_id: str) -> None:
        """Serialise this transaction with every other writer of the stream (until it ends)."""

    def close(self) -> None:
        raise NotImplementedError


class SqliteDb(LogDb):
    """A SQLite connection in autocommit mode; ``BEGIN IMMEDIATE`` makes a transaction the file's one writer."""

    kind = "sqlite"
    errors = (sqlite3.DatabaseError,)

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.where = str(path)

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        return self.conn.execute(sql, tuple(args))

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def close(self) -> None:
        self.conn.close()


class PostgresDb(LogDb):
    """A psycopg connection in autocommit mode, so transactions are explicit as on SQLite."""

    kind = "postgresql"

    def __init__(self, conn: Any, url: str) -> None:
        import psycopg

        self.conn = conn
        self.where = redact(url)
        self.errors = (psycopg.Error,)
        self._sql: dict[str, str] = {}

    def _translate(self, sql: str) -> str:
        out = self._sql.get(sql)
        if out is None:   # our statements hold no literal '?' or '%'
            out = self._sql[sql] = sql.replace("%", "%%").replace("?", "%s")
        return out

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        args = tuple(args)
        return self.conn.execute(self._translate(sql) if args else sql, args or None)

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(self._translate(sql), rows)

    def begin(self) -> None:
        self.conn.execute("BEGIN")

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def lock_stream(self, vehicle_id: str, stream_id: str) -> None:
        # The two-int4 key space, apart from the one-bigint key the migrations lock.
        self.execute("SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))", (vehicle_id, stream_id))

    def close(self) -> None:
        self.conn.close()


def open_sqlite(path: str | Path, *, readonly: bool = False, threads: bool = False) -> SqliteDb:
    """A SQLite database file in WAL mode (read-only: opened by URI with ``mode=ro``, never created).

    ``threads``: the connection may be used from several threads (each use under the caller's lock)."""
    path = Path(path)
    try:
        if readonly:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                                   timeout=10.0, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=10.0, check_same_thread=not threads)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"{path}: cannot open ({exc})") from exc
    return SqliteDb(conn, path)


def open_postgres(url: str, *, readonly: bool = False, application: str = "aerie-ground") -> PostgresDb:
    """A connection to the server at ``url``; a missing driver or an unreachable server is a clear error."""
    try:
        import psycopg
    except ImportError as exc:   # pragma: no cover - a dependency of the project
        raise DatabaseError("a postgresql:// database needs the psycopg package (pip install 'psycopg[binary]')") \
            from exc
    try:
        conn = psycopg.connect(url, autocommit=True, application_name=application, connect_timeout=10)
        if readonly:
            conn.execute("SET default_transaction_read_only = on")
    except psycopg.Error as exc:
        raise DatabaseError(f"{redact(url)}: cannot connect ({str(exc).strip()})") from exc
    return PostgresDb(conn, url)


def open_db(target: str | Path, *, readonly: bool = False) -> LogDb:
    return open_postgres(str(target), readonly=readonly) if is_url(target) else open_sqlite(target, readonly=readonly)

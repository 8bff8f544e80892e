"""Open SQLite connections with sqlite-vec loaded.

Some Python builds (this vehicle's pyenv 3.11 among them) ship ``sqlite3``
without loadable-extension support, so the standard library is tried first
and ``pysqlite3`` (which bundles a recent SQLite) is the fallback. Both
modules expose the same DB-API, so callers never need to know which one won;
they only ask :func:`knn_limit_clause` how to spell a KNN bound, because vec0
needs ``AND k = ?`` rather than ``LIMIT`` on SQLite older than 3.41.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SqliteVecUnavailable(RuntimeError):
    """No SQLite module in this Python can load the sqlite-vec extension."""


@dataclass(frozen=True)
class SqliteBackend:
    """The DB-API module that loads sqlite-vec, and facts about it."""

    module: types.ModuleType
    name: str
    sqlite_version: tuple[int, int, int]
    vec_version: str

    @property
    def k_constraint_required(self) -> bool:
        """vec0 KNN queries need ``k = ?`` instead of LIMIT before SQLite 3.41."""
        return self.sqlite_version < (3, 41, 0)


def _candidate_modules() -> list[tuple[str, types.ModuleType]]:
    found: list[tuple[str, types.ModuleType]] = []
    import sqlite3

    found.append(("sqlite3", sqlite3))
    try:
        from pysqlite3 import dbapi2 as pysqlite3  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        found.append(("pysqlite3", pysqlite3))
    return found


def _load_vec(conn: Any) -> None:
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


def find_backend() -> SqliteBackend:
    """Return the first SQLite module that can load sqlite-vec (stdlib first)."""
    reasons = []
    for name, module in _candidate_modules():
        if not hasattr(module.Connection, "enable_load_extension"):
            reasons.append(f"{name} {module.sqlite_version}: built without loadable extensions")
            continue
        conn = module.connect(":memory:")
        try:
            _load_vec(conn)
            (vec_version,) = conn.execute("SELECT vec_version()").fetchone()
        except Exception as exc:  # noqa: BLE001 - any failure means "try the next module"
            reasons.append(f"{name} {module.sqlite_version}: {exc}")
            continue
        finally:
            conn.close()
        version = tuple(int(p) for p in module.sqlite_version.split(".")[:3])
        return SqliteBackend(module=module, name=name, sqlite_version=version, vec_version=vec_version)  # type: ignore[arg-type]
    raise SqliteVecUnavailable("cannot load sqlite-vec: " + "; ".join(reasons))


def connect(path: str | Path, backend: SqliteBackend, *, timeout_s: float) -> Any:
    """Open ``path`` with sqlite-vec loaded; autocommit mode, explicit transactions.

    ``isolation_level=None`` keeps the DB-API module from opening transactions
    behind our back, so ``BEGIN IMMEDIATE`` is the one place a writer takes
    the lock and its timeout is the one place contention shows up.
    """
    conn = backend.module.connect(str(path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
    try:
        _load_vec(conn)
    except Exception:
        conn.close()
        raise
    return conn


"""One writer at a time on a memory file: the thread lock in front of SQLite's own lock.

Threads of one process share one connection, so their transactions are
serialised by a Python lock; other processes are serialised by SQLite's
``BEGIN IMMEDIATE``. Both waits are bounded by ``writer_timeout_s`` and end in
:class:`WriterBusy` naming the file, so a stuck writer elsewhere never hangs
the flight loop. The same lock keeps this process's writers off while the
vector cache reads a collection, so the cache never sees half a write.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from onboard.memory.schema import WriterBusy, is_locked_error


class StoreLock:
    def __init__(self, conn_of: Callable[[], Any], path: Path, timeout_s: float) -> None:
        self._conn_of = conn_of
        self._path = path
        self._timeout_s = timeout_s
        self._lock = threading.Lock()

    def _acquire(self) -> None:
        if not self._lock.acquire(timeout=self._timeout_s):
            raise WriterBusy(f"{self._path}: another thread held the memory file for more than {self._timeout_s:g} s")

    def write(self, on_commit: Callable[[], None] | None = None,
              on_commit_failed: Callable[[], None] | None = None) -> "WriteTransaction":
        """``BEGIN IMMEDIATE`` .. ``COMMIT``; ``on_commit`` runs after a successful commit, still under the
        lock, so the vector cache sees this process's writes in commit order; if it raises,
        ``on_commit_failed`` runs (the row is committed but not cached)."""
        return WriteTransaction(self, on_commit, on_commit_failed)

    def reading(self) -> "ReadGuard":
        return ReadGuard(self)


class WriteTransaction:
    def __init__(self, lock: StoreLock, on_commit: Callable[[], None] | None,
                 on_commit_failed: Callable[[], None] | None) -> None:
        self._lock = lock
        self._on_commit = on_commit
        self._on_commit_failed = on_commit_failed

    def __enter__(self) -> Any:
        conn = self._lock._conn_of()
        self._lock._acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except Exception as exc:  # noqa: BLE001 - OperationalError of whichever sqlite module
            self._lock._lock.release()
            if is_locked_error(exc):
                raise WriterBusy(f"{self._lock._path}: another writer held the memory file for more than "
                                 f"{self._lock._timeout_s:g} s") from exc
            raise
        return conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        conn = self._lock._conn_of()
        try:
            conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
            if exc_type is None and self._on_commit is not None:
                try:
                    self._on_commit()
                except BaseException:
                    if self._on_commit_failed is not None:
                        self._on_commit_failed()
                    raise
        finally:
            self._lock._lock.release()


class ReadGuard:
    """Holds this process's writers off while the vector cache reads a collection."""

    def __init__(self, lock: StoreLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock._acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock._lock.release()

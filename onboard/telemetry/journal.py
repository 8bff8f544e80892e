"""Store-and-forward journal: every sent message, kept in SQLite until the ground acknowledges it.

The journal, not the ZeroMQ queue, is the source of truth: a PUB socket drops
frames when nobody listens or a queue is full, the journal does not. A message
is committed here *before* it goes on the wire, so a sequence number the
ground station has seen is always in the journal (or acknowledged), and a
restarted vehicle continues after the journal's last seq without reusing one.

Each journal has a random stream id, made when the file is created and kept in
its ``meta`` table. It goes in every envelope: a vehicle whose data folder was
reset has a new journal, a new stream and seq 1 again, and the ground station
keeps its new flight apart from the old one instead of taking it for duplicates.

WAL mode lets the replay server read while the publisher writes. One
:class:`Journal` object is one SQLite connection and belongs to one thread.
"""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path
from typing import Iterable, Literal

from contract.envelope import INT_LIMIT, is_stream_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq   INTEGER PRIMARY KEY,
    type  TEXT    NOT NULL,
    t_ns  INTEGER NOT NULL,
    frame BLOB    NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


class JournalError(RuntimeError):
    """The journal file cannot be opened, is not a journal, or is corrupt."""


class Journal:
    """One connection to a journal file; used by one thread at a time (open one per thread)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path, *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
             busy_timeout_s: float = 5.0, auto_checkpoint: bool = True) -> "Journal":
        """Open (creating) a journal. ``auto_checkpoint=False`` leaves WAL checkpoints (and
        their fsync) to :meth:`checkpoint` on another thread, off the publishing path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=busy_timeout_s)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
            if not auto_checkpoint:
                conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.executescript(_SCHEMA)
            # Created once, with the file; INSERT OR IGNORE keeps an existing journal's id.
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('stream_id', ?)", (secrets.token_hex(8),))
            row = conn.execute("PRAGMA quick_check").fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{path}: cannot open telemetry journal ({exc})") from exc
        if row is None or row[0] != "ok":
            conn.close()
            raise JournalError(f"{path}: journal failed its integrity check ({row and row[0]})")
        return cls(conn, path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- cursors ------------------------------------------------------------------------------

    def stream_id(self) -> str:
        """This journal's stream id (16 hex digits), carried in every envelope it numbers."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'stream_id'").fetchone()
        if row is None or not is_stream_id(row[0]):
            raise JournalError(f"{self.path}: journal has no valid stream id ({row and row[0]!r})")
        return str(row[0])

    def acked_seq(self) -> int:
        """Highest seq the ground station has acknowledged (everything up to it is done)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'acked_seq'").fetchone()
        return int(row[0]) if row else 0

    def last_seq(self) -> int:
        """Highest seq ever journaled; acknowledged rows are pruned, so the ack cursor counts too."""
        row = self._conn.execute("SELECT MAX(seq) FROM messages").fetchone()
        return max(int(row[0] or 0), self.acked_seq())

    def first_seq(self) -> int:
        """Lowest seq still held (``acked_seq + 1`` when nothing is pending)."""
        row = self._conn.execute("SELECT MIN(seq) FROM messages").fetchone()
        return int(row[0]) if row[0] is not None else self.acked_seq() + 1

    def pending_count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])

    # -- writes -------------------------------------------------------------------------------

    def append_many(self, rows: Iterable[tuple[int, str, int, bytes]]) -> None:
        """Commit ``(seq, type, t_ns, frame)`` rows in one transaction (group commit)."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO messages (seq, type, t_ns, frame) VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise JournalError(f"{self.path}: journal write failed ({exc})") from exc

    def ack(self, upto: int) -> int:
        """Mark everything up to ``upto`` acknowledged and prune it; returns the new ack cursor."""
        if not (0 <= upto < INT_LIMIT):
            raise JournalError(f"ack of seq {upto} is outside [0, 2^63)")
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            current = self.acked_seq()
            top = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM messages").fetchone()[0])
            new = max(current, min(int(upto), max(top, current)))
            if new > current:
                conn.execute("DELETE FROM messages WHERE seq <= ?", (new,))
                conn.execute("INSERT INTO meta (key, value) VALUES ('acked_seq', ?) "
                             "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(new),))
            conn.execute("COMMIT")
            return new
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise JournalError(f"{self.path}: journal ack failed ({exc})") from exc

    def checkpoint(self) -> None:
        """Copy the WAL into the database file without blocking the writer (PASSIVE)."""
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.path}: checkpoint failed ({exc})") from exc

    # -- reads --------------------------------------------------------------------------------

    def frames(self, from_seq: int, to_seq: int, *, max_count: int, max_bytes: int) -> list[tuple[int, bytes]]:
        """Stored frames with ``from_seq <= seq <= to_seq`` in order, bounded in count and bytes.

        The first frame is always returned even if it alone exceeds ``max_bytes``.
        """
        out: list[tuple[int, bytes]] = []
        if not (0 <= from_seq < INT_LIMIT and 0 <= to_seq < INT_LIMIT and max_count >= 0):
            raise JournalError(f"seq range [{from_seq}, {to_seq}] is outside [0, 2^63)")
        total = 0
        cur = self._conn.execute(
            "SELECT seq, frame FROM messages WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT ?",
            (int(from_seq), int(to_seq), int(max_count)))
        for seq, frame in cur:
            if out and total + len(frame) > max_bytes:
                break
            out.append((int(seq), bytes(frame)))
            total += len(frame)
        return out

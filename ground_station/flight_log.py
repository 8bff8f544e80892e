"""The ground station's flight log: every received envelope, its flights and events, in SQLite.

Storing is idempotent on ``(vehicle_id, seq)``, so a replayed or duplicated
frame changes nothing. ``contiguous_seq`` per vehicle is the highest seq up
to which the log is complete; only that is acknowledged to the vehicle, and
only after it is committed, so a ground station killed at any instant loses
nothing that the vehicle has pruned.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import msgpack

from contract.envelope import Envelope

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vehicles (
    vehicle_id      TEXT PRIMARY KEY,
    contiguous_seq  INTEGER NOT NULL DEFAULT 0,   -- every seq <= this is stored (or unrecoverable)
    max_seen_seq    INTEGER NOT NULL DEFAULT 0,
    unrecoverable   INTEGER NOT NULL DEFAULT 0    -- seqs pruned by the vehicle before we had them
);
CREATE TABLE IF NOT EXISTS messages (
    vehicle_id  TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    t_ns        INTEGER NOT NULL,
    received_ns INTEGER NOT NULL,
    frame       BLOB    NOT NULL,                 -- the envelope exactly as received
    PRIMARY KEY (vehicle_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    vehicle_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    t_ns       INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    detail     BLOB,                              -- msgpack
    PRIMARY KEY (vehicle_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS flights (
    vehicle_id  TEXT    NOT NULL,
    start_seq   INTEGER NOT NULL,
    end_seq     INTEGER,                          -- NULL while open (or its end not yet received)
    start_t_ns  INTEGER NOT NULL,
    end_t_ns    INTEGER,
    info        BLOB,                             -- msgpack of the flight_start payload
    PRIMARY KEY (vehicle_id, start_seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
    vehicle_id TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (vehicle_id, reason)
) WITHOUT ROWID;
"""


class FlightLogError(RuntimeError):
    """The flight log file cannot be opened or written."""


@dataclass(frozen=True)
class Flight:
    vehicle_id: str
    start_seq: int
    end_seq: int | None
    start_t_ns: int
    end_t_ns: int | None
    info: Any


class FlightLog:
    """One connection to a flight log file (thread-confined)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path) -> "FlightLog":
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=10.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise FlightLogError(f"{path}: cannot open flight log ({exc})") from exc
        return cls(conn, path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "FlightLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes -------------------------------------------------------------------------------

    def store(self, items: list[tuple[Envelope, bytes]]) -> int:
        """Store envelopes (idempotent) in one transaction; returns how many were new."""
        if not items:
            return 0
        conn = self._conn
        now = time.time_ns()
        added = 0
        rebuild: set[str] = set()
        try:
            conn.execute("BEGIN IMMEDIATE")
            for env, frame in items:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO messages (vehicle_id, seq, type, t_ns, received_ns, frame) "
                    "VALUES (?, ?, ?, ?, ?, ?)", (env.vehicle_id, env.seq, env.type, env.t_ns, now, frame))
                if cur.rowcount != 1:
                    continue
                added += 1
                if env.type == "event":
                    p = env.payload if isinstance(env.payload, dict) else {}
                    conn.execute("INSERT OR IGNORE INTO events (vehicle_id, seq, t_ns, kind, detail) VALUES (?, ?, ?, ?, ?)",
                                 (env.vehicle_id, env.seq, env.t_ns, str(p.get("kind", "")),
                                  msgpack.packb(p.get("detail"), use_bin_type=True)))
                elif env.type in ("flight_start", "flight_end"):
                    rebuild.add(env.vehicle_id)
            for vid in rebuild:
                self._rebuild_flights(vid)
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise FlightLogError(f"{self.path}: store failed ({exc})") from exc
        return added

    def _rebuild_flights(self, vehicle_id: str) -> None:
        """Flights from the flight_start/flight_end markers in seq order (they may arrive out of order)."""
        conn = self._conn
        conn.execute("DELETE FROM flights WHERE vehicle_id = ?", (vehicle_id,))
        rows = conn.execute("SELECT seq, type, t_ns, frame FROM messages WHERE vehicle_id = ? AND type IN "
                            "('flight_start', 'flight_end') ORDER BY seq", (vehicle_id,)).fetchall()
        open_flight: list[Any] | None = None
        flights: list[list[Any]] = []
        for seq, msg_type, t_ns, frame in rows:
            if msg_type == "flight_start":
                payload = msgpack.unpackb(frame, raw=False).get("payload")
                open_flight = [vehicle_id, seq, None, t_ns, None, msgpack.packb(payload, use_bin_type=True)]
                flights.append(open_flight)
            elif open_flight is not None:
                open_flight[2], open_flight[4] = seq, t_ns
                open_flight = None
        conn.executemany("INSERT INTO flights (vehicle_id, start_seq, end_seq, start_t_ns, end_t_ns, info) "
                         "VALUES (?, ?, ?, ?, ?, ?)", flights)

    def advance(self, vehicle_id: str, *, seen: int = 0, first_available: int | None = None) -> int:
        """Move the vehicle's complete-up-to cursor as far as stored messages allow; returns it.

        ``first_available``: the vehicle no longer holds seqs below it, so a hole there
        can never be filled; it is skipped and counted as unrecoverable.
        """
        conn = self._conn
        conn.execute("INSERT OR IGNORE INTO vehicles (vehicle_id) VALUES (?)", (vehicle_id,))
        contiguous, max_seen, lost = conn.execute(
            "SELECT contiguous_seq, max_seen_seq, unrecoverable FROM vehicles WHERE vehicle_id = ?",
            (vehicle_id,)).fetchone()
        max_seen = max(max_seen, seen)
        if first_available is not None and contiguous < first_available - 1:
            have = conn.execute("SELECT COUNT(*) FROM messages WHERE vehicle_id = ? AND seq > ? AND seq < ?",
                                (vehicle_id, contiguous, first_available)).fetchone()[0]
            lost += (first_available - 1 - contiguous) - have
            contiguous = first_available - 1
        for (seq,) in conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? AND seq > ? ORDER BY seq",
                                   (vehicle_id, contiguous)):
            if seq != contiguous + 1:
                break
            contiguous = seq
        max_seen = max(max_seen, contiguous)
        conn.execute("UPDATE vehicles SET contiguous_seq = ?, max_seen_seq = ?, unrecoverable = ? WHERE vehicle_id = ?",
                     (contiguous, max_seen, lost, vehicle_id))
        return contiguous

    def save_rejects(self, vehicle_id: str, counts: dict[str, int]) -> None:
        """Persist the rejected-frame counters (absolute values, not increments)."""
        self._conn.executemany(
            "INSERT INTO rejects (vehicle_id, reason, count) VALUES (?, ?, ?) "
            "ON CONFLICT(vehicle_id, reason) DO UPDATE SET count = excluded.count",
            [(vehicle_id, r, int(n)) for r, n in counts.items()])

    # -- reads --------------------------------------------------------------------------------

    def cursor(self, vehicle_id: str) -> tuple[int, int]:
        """(contiguous_seq, max_seen_seq) as stored."""
        row = self._conn.execute("SELECT contiguous_seq, max_seen_seq FROM vehicles WHERE vehicle_id = ?",
                                 (vehicle_id,)).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def missing(self, vehicle_id: str, from_seq: int, to_seq: int, *, limit: int = 1000) -> list[tuple[int, int]]:
        """Inclusive ranges of seqs in [from_seq, to_seq] not stored, in order (at most ``limit`` ranges)."""
        out: list[tuple[int, int]] = []
        expect = from_seq
        for (seq,) in self._conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? AND seq BETWEEN ? AND ? "
                                         "ORDER BY seq", (vehicle_id, from_seq, to_seq)):
            if seq > expect:
                out.append((expect, seq - 1))
                if len(out) >= limit:
                    return out
            expect = seq + 1
        if expect <= to_seq:
            out.append((expect, to_seq))
        return out

    def seqs(self, vehicle_id: str) -> list[int]:
        return [r[0] for r in self._conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? ORDER BY seq",
                                                 (vehicle_id,))]

    def messages(self, vehicle_id: str, *, from_seq: int = 0, to_seq: int | None = None,
                 msg_type: str | None = None) -> Iterator[dict[str, Any]]:
        """Stored envelopes as dicts, in seq order."""
        sql = "SELECT frame FROM messages WHERE vehicle_id = ? AND seq >= ? AND seq <= ?"
        args: list[Any] = [vehicle_id, from_seq, to_seq if to_seq is not None else 2 ** 62]
        if msg_type is not None:
            sql += " AND type = ?"
            args.append(msg_type)
        for (frame,) in self._conn.execute(sql + " ORDER BY seq", args).fetchall():
            yield msgpack.unpackb(frame, raw=False)

    def flights(self, vehicle_id: str | None = None) -> list[Flight]:
        sql = "SELECT vehicle_id, start_seq, end_seq, start_t_ns, end_t_ns, info FROM flights"
        rows = (self._conn.execute(sql + " WHERE vehicle_id = ? ORDER BY start_seq", (vehicle_id,)) if vehicle_id
                else self._conn.execute(sql + " ORDER BY vehicle_id, start_seq"))
        return [Flight(r[0], r[1], r[2], r[3], r[4], msgpack.unpackb(r[5], raw=False) if r[5] else None) for r in rows]

    def flight_messages(self, flight: Flight) -> Iterator[dict[str, Any]]:
        return self.messages(flight.vehicle_id, from_seq=flight.start_seq, to_seq=flight.end_seq)

    def events(self, vehicle_id: str) -> list[tuple[int, str, Any]]:
        return [(r[0], r[1], msgpack.unpackb(r[2], raw=False) if r[2] is not None else None) for r in
                self._conn.execute("SELECT seq, kind, detail FROM events WHERE vehicle_id = ? ORDER BY seq",
                                   (vehicle_id,))]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per vehicle: cursors, message and event counts, flights and rejected-frame counters."""
        out: dict[str, dict[str, Any]] = {}
        for vid, contiguous, max_seen, lost in self._conn.execute(
                "SELECT vehicle_id, contiguous_seq, max_seen_seq, unrecoverable FROM vehicles ORDER BY vehicle_id"):
            out[vid] = {
                "contiguous_seq": contiguous, "max_seen_seq": max_seen, "unrecoverable": lost,
                "messages": self._conn.execute("SELECT COUNT(*) FROM messages WHERE vehicle_id = ?", (vid,)).fetchone()[0],
                "events": self._conn.execute("SELECT COUNT(*) FROM events WHERE vehicle_id = ?", (vid,)).fetchone()[0],
                "flights": [{"start_seq": f.start_seq, "end_seq": f.end_seq, "start_t_ns": f.start_t_ns,
                             "end_t_ns": f.end_t_ns, "info": f.info} for f in self.flights(vid)],
                "rejects": self.rejects(vid),
            }
        return out

    def rejects(self, vehicle_id: str) -> dict[str, int]:
        return {r: int(n) for r, n in self._conn.execute("SELECT reason, count FROM rejects WHERE vehicle_id = ?",
                                                         (vehicle_id,))}

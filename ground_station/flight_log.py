# Over 400 lines: one database: storing, the flights, acknowledgement cursors and the schema's migration all run in the same transactions over the same tables.
"""The ground station's flight log: every received envelope, its flights and events, in SQLite or PostgreSQL.

Messages are keyed by ``(vehicle_id, stream_id, seq)``: the stream is the random
id of the vehicle journal that numbered them (envelope v2), so a vehicle whose
data folder was reset, which counts from seq 1 again, fills a new stream instead
of colliding with its old flights. Storing is idempotent on that key, so a
replayed or duplicated frame changes nothing. ``contiguous_seq`` per stream is
the highest seq up to which the log is complete; only that is acknowledged to
the vehicle, and only after it is committed, so a ground station killed at any
instant loses nothing that the vehicle has pruned.

A flight is opened by ``flight_start`` and closed by ``flight_end`` (status
``ended``), or closed as ``aborted`` with a reason when the vehicle starts a new
flight or a new stream first, or when the ground station gives up waiting for
its stream (:meth:`FlightLog.abort_flight`). A ``flight_end`` that arrives after
all turns an aborted flight back into an ended one.

Schema version 2 (``PRAGMA user_version``). A version-1 file (no streams) is
migrated when opened for writing: its messages become the stream ``"v1"``.
A file of a newer version is refused.

On PostgreSQL (a ``postgresql://`` target) the same tables are made by the numbered
migrations of :mod:`ground_station.migrations`, and several ingest processes may
write at once: inserts are idempotent (``ON CONFLICT DO NOTHING``), so two that both
hear a message store it once, and each stream's writers take its advisory lock so
flights are rebuilt and cursors moved by one at a time (:mod:`ground_station.log_db`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import msgpack

from contract.envelope import Envelope
from contract.messages import Event, FlightStart, PayloadError
from ground_station import migrations
from ground_station.log_db import DatabaseError, LogDb, SqliteDb, is_url, open_db

log = logging.getLogger("aerie.ground.flight_log")

SCHEMA_VERSION = 2

# Rows in one INSERT on a server (7 parameters each, far below PostgreSQL's 65535).
_ROWS_PER_INSERT = 500

# The stream id given to the messages of a version-1 flight log (they carry none).
LEGACY_STREAM = "v1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS streams (
    vehicle_id      TEXT    NOT NULL,
    stream_id       TEXT    NOT NULL,
    ordinal         INTEGER NOT NULL,             -- 1, 2, ... in the order the vehicle's streams were first heard
    contiguous_seq  INTEGER NOT NULL DEFAULT 0,   -- every seq <= this is stored (or unrecoverable)
    max_seen_seq    INTEGER NOT NULL DEFAULT 0,
    unrecoverable   INTEGER NOT NULL DEFAULT 0,   -- seqs pruned by the vehicle before we had them
    PRIMARY KEY (vehicle_id, stream_id)
) WITHOUT ROWID;
-- Each vehicle's current stream (the one heard last), as readers such as the dashboard use it.
CREATE VIEW IF NOT EXISTS vehicles AS
    SELECT vehicle_id, stream_id, contiguous_seq, max_seen_seq, unrecoverable FROM streams s
    WHERE ordinal = (SELECT MAX(ordinal) FROM streams t WHERE t.vehicle_id = s.vehicle_id);
CREATE TABLE IF NOT EXISTS messages (
    vehicle_id  TEXT    NOT NULL,
    stream_id   TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    t_ns        INTEGER NOT NULL,
    received_ns INTEGER NOT NULL,
    frame       BLOB    NOT NULL,                 -- the envelope exactly as received
    PRIMARY KEY (vehicle_id, stream_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    vehicle_id TEXT    NOT NULL,
    stream_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    t_ns       INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    detail     BLOB,                              -- msgpack
    PRIMARY KEY (vehicle_id, stream_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS flights (
    vehicle_id  TEXT    NOT NULL,
    stream_id   TEXT    NOT NULL,
    start_seq   INTEGER NOT NULL,
    end_seq     INTEGER,                          -- NULL while open (or its end not yet received)
    start_t_ns  INTEGER NOT NULL,
    end_t_ns    INTEGER,
    info        BLOB,                             -- msgpack of the flight_start payload
    status      TEXT    NOT NULL,                 -- open | ended | aborted
    end_reason  TEXT,                             -- why an aborted flight was closed
    PRIMARY KEY (vehicle_id, stream_id, start_seq)
) WITHOUT ROWID;
-- The ground station's decisions to close a flight whose end never came (new stream, silence).
CREATE TABLE IF NOT EXISTS aborts (
    vehicle_id TEXT    NOT NULL,
    stream_id  TEXT    NOT NULL,
    start_seq  INTEGER NOT NULL,
    end_seq    INTEGER NOT NULL,
    end_t_ns   INTEGER NOT NULL,
    reason     TEXT    NOT NULL,
    PRIMARY KEY (vehicle_id, stream_id, start_seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
    vehicle_id TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (vehicle_id, reason)
) WITHOUT ROWID;
"""

# Version 1 -> 2: the old tables are renamed, the new ones made, the rows copied into stream "v1".
_MIGRATE_V1 = f"""
ALTER TABLE vehicles RENAME TO vehicles_v1;
ALTER TABLE messages RENAME TO messages_v1;
ALTER TABLE events RENAME TO events_v1;
DROP TABLE flights;
{_SCHEMA}
INSERT INTO streams (vehicle_id, stream_id, ordinal, contiguous_seq, max_seen_seq, unrecoverable)
    SELECT vehicle_id, '{LEGACY_STREAM}', 1, contiguous_seq, max_seen_seq, unrecoverable FROM vehicles_v1;
INSERT OR IGNORE INTO streams (vehicle_id, stream_id, ordinal)
    SELECT DISTINCT vehicle_id, '{LEGACY_STREAM}', 1 FROM messages_v1;
INSERT INTO messages (vehicle_id, stream_id, seq, type, t_ns, received_ns, frame)
    SELECT vehicle_id, '{LEGACY_STREAM}', seq, type, t_ns, received_ns, frame FROM messages_v1;
INSERT INTO events (vehicle_id, stream_id, seq, t_ns, kind, detail)
    SELECT vehicle_id, '{LEGACY_STREAM}', seq, t_ns, kind, detail FROM events_v1;
DROP TABLE vehicles_v1;
DROP TABLE messages_v1;
DROP TABLE events_v1;
"""


class FlightLogError(RuntimeError):
    """The flight log cannot be opened or written."""



def _flight_info(frame: bytes) -> bytes:
    """The flight's ``info`` column: its decoded ``flight_start`` fields, or {} when they do not decode."""
    try:
        info = FlightStart.decode(msgpack.unpackb(frame, raw=False).get("payload")).body()
    except PayloadError as exc:
        log.warning("flight_start payload refused: %s", exc)
        info = {}
    return msgpack.packb(info, use_bin_type=True)

@dataclass(frozen=True)
class Flight:
    vehicle_id: str
    start_seq: int
    end_seq: int | None
    start_t_ns: int
    end_t_ns: int | None
    info: Any
    stream_id: str = LEGACY_STREAM
    status: str = "open"              # open | ended | aborted
    end_reason: str | None = None     # why an aborted flight was closed


class FlightLog:
    """One connection to a flight log, file or server (thread-confined)."""

    def __init__(self, db: LogDb) -> None:
        self._conn = db
        self.path = db.where
        self.unindexed_events = 0   # stored events whose payload does not decode (logged sparsely)

    @property
    def db(self) -> LogDb:
        """The connection, for what shares the flight log's transactions' thread (the ingest's leases)."""
        return self._conn

    @classmethod
    def open(cls, target: str | Path) -> "FlightLog":
        """The flight log at a file path (created or upgraded) or a ``postgresql://`` URL (migrated beforehand)."""
        try:
            db = open_db(target if is_url(target) else Path(target))
        except DatabaseError as exc:
            raise FlightLogError(f"cannot open flight log: {exc}") from exc
        try:
            if isinstance(db, SqliteDb):
                _upgrade(db)
            else:
                migrations.check(db)
        except DatabaseError as exc:
            db.close()
            raise FlightLogError(str(exc)) from exc
        except BaseException:
            db.close()
            raise
        return cls(db)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "FlightLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes -------------------------------------------------------------------------------

    def store(self, items: list[tuple[Envelope, bytes]]) -> int:
        """Store envelopes (idempotent) in one transaction; returns how many were new."""
        return sum(self.store_counted(items).values())

    def store_counted(self, items: list[tuple[Envelope, bytes]]) -> Counter[str]:
        """Store envelopes of any vehicles (idempotent) in one transaction; returns how many were new, per vehicle."""
        added: Counter[str] = Counter()
        if not items:
            return added
        conn = self._conn
        now = time.time_ns()
        rebuild: set[tuple[str, str]] = set()
        try:
            conn.begin()
            for vid, stream in sorted({(env.vehicle_id, env.stream) for env, _ in items}):
                conn.lock_stream(vid, stream)   # in one order everywhere: two writers never deadlock
            new = self._insert_messages(items, now)
            noted: set[tuple[str, str]] = set()
            events: list[tuple[Any, ...]] = []
            for env, _ in items:
                key = (env.vehicle_id, env.stream, env.seq)
                if key not in new:
                    continue
                new.discard(key)   # a frame twice in one batch counts once
                added[env.vehicle_id] += 1
                if key[:2] not in noted:
                    noted.add(key[:2])
                    self._note_stream(env.vehicle_id, env.stream)
                if env.type == "event":
                    try:   # the message is stored whatever; only a decodable event is indexed
                        ev = Event.decode(env.payload)
                    except PayloadError as exc:
                        self.unindexed_events += 1
                        if self.unindexed_events in (1, 10, 100) or self.unindexed_events % 1000 == 0:
                            log.warning("event not indexed (%d so far): %s", self.unindexed_events, exc,
                                        extra={"fields": {"seq": env.seq}})
                    else:
                        events.append((env.vehicle_id, env.stream, env.seq, env.t_ns, ev.kind,
                                       msgpack.packb(ev.detail, use_bin_type=True)))
                elif env.type in ("flight_start", "flight_end"):
                    rebuild.add((env.vehicle_id, env.stream))
            conn.executemany("INSERT INTO events (vehicle_id, stream_id, seq, t_ns, kind, detail) "
                             "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", events)
            for vid, stream in rebuild:
                self._rebuild_flights(vid, stream)
            conn.commit()
        except conn.errors as exc:
            conn.rollback()
            raise FlightLogError(f"{self.path}: store failed ({exc})") from exc
        except BaseException:
            conn.rollback()
            raise
        return added

    def _insert_messages(self, items: list[tuple[Envelope, bytes]], now: int) -> set[tuple[str, str, int]]:
        """Insert what is not stored yet; returns the keys this call inserted.

        SQLite is in this process, so a statement per message costs nothing; a server is a round
        trip away, so there a few hundred rows go in one statement that returns the keys it added.
        """
        conn = self._conn
        sql = "INSERT INTO messages (vehicle_id, stream_id, seq, type, t_ns, received_ns, frame) VALUES "
        new: set[tuple[str, str, int]] = set()
        if conn.kind == "sqlite":
            for env, frame in items:
                cur = conn.execute(sql + "(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                                   (env.vehicle_id, env.stream, env.seq, env.type, env.t_ns, now, frame))
                if cur.rowcount == 1:
                    new.add((env.vehicle_id, env.stream, env.seq))
            return new
        for i in range(0, len(items), _ROWS_PER_INSERT):
            chunk = items[i:i + _ROWS_PER_INSERT]
            args = [x for env, frame in chunk for x in (env.vehicle_id, env.stream, env.seq, env.type, env.t_ns, now,
                                                        frame)]
            found = conn.execute(sql + ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
                                 + " ON CONFLICT DO NOTHING RETURNING vehicle_id, stream_id, seq", args)
            new.update((str(v), str(st), int(q)) for v, st, q in found.fetchall())
        return new

    def note_stream(self, vehicle_id: str, stream_id: str) -> None:
        """Record that ``stream_id`` exists; a stream not heard before becomes the vehicle's current one."""
        self._note_stream(vehicle_id, stream_id)

    def _note_stream(self, vehicle_id: str, stream_id: str) -> None:
        self._conn.execute(
            "INSERT INTO streams (vehicle_id, stream_id, ordinal) VALUES "
            "(?, ?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM streams WHERE vehicle_id = ?)) ON CONFLICT DO NOTHING",
            (vehicle_id, stream_id, vehicle_id))

    def abort_flight(self, flight: Flight, reason: str) -> Flight:
        """Close an open flight as ``aborted`` at its last stored message; returns it as now stored.

        Kept as a decision of its own: rebuilding the flights from their markers keeps it,
        and only a ``flight_end`` of that flight (arriving late) overrides it.
        """
        conn = self._conn
        try:
            conn.begin()
            conn.lock_stream(flight.vehicle_id, flight.stream_id)
            row = conn.execute("SELECT seq, t_ns FROM messages WHERE vehicle_id = ? AND stream_id = ? AND seq >= ? "
                               "ORDER BY seq DESC LIMIT 1", (flight.vehicle_id, flight.stream_id, flight.start_seq)
                               ).fetchone()
            end_seq, end_t_ns = (int(row[0]), int(row[1])) if row else (flight.start_seq, flight.start_t_ns)
            conn.execute("INSERT INTO aborts (vehicle_id, stream_id, start_seq, end_seq, end_t_ns, reason) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (vehicle_id, stream_id, start_seq) DO UPDATE SET "
                         "end_seq = excluded.end_seq, end_t_ns = excluded.end_t_ns, reason = excluded.reason",
                         (flight.vehicle_id, flight.stream_id, flight.start_seq, end_seq, end_t_ns, reason))
            self._rebuild_flights(flight.vehicle_id, flight.stream_id)
            conn.commit()
        except conn.errors as exc:
            conn.rollback()
            raise FlightLogError(f"{self.path}: abort failed ({exc})") from exc
        return next(f for f in self.flights(flight.vehicle_id)
                    if (f.stream_id, f.start_seq) == (flight.stream_id, flight.start_seq))

    def _rebuild_flights(self, vehicle_id: str, stream_id: str) -> None:
        """A stream's flights from its flight_start/flight_end markers in seq order (they may
        arrive out of order), with the ground's abort decisions for flights whose end never came."""
        conn = self._conn
        conn.execute("DELETE FROM flights WHERE vehicle_id = ? AND stream_id = ?", (vehicle_id, stream_id))
        rows = conn.execute("SELECT seq, type, t_ns, frame FROM messages WHERE vehicle_id = ? AND stream_id = ? "
                            "AND type IN ('flight_start', 'flight_end') ORDER BY seq", (vehicle_id, stream_id)).fetchall()
        aborts = {r[0]: r[1:] for r in conn.execute(
            "SELECT start_seq, end_seq, end_t_ns, reason FROM aborts WHERE vehicle_id = ? AND stream_id = ?",
            (vehicle_id, stream_id))}
        open_flight: list[Any] | None = None
        flights: list[list[Any]] = []
        for seq, msg_type, t_ns, frame in rows:
            if msg_type == "flight_start":
                if open_flight is not None:
                    open_flight[3], open_flight[5] = seq - 1, t_ns
                    open_flight[7:9] = ["aborted", f"the vehicle started a new flight (seq {seq}) before this one ended"]
                open_flight = [vehicle_id, stream_id, seq, None, t_ns, None, _flight_info(frame),
                               "open", None]
                flights.append(open_flight)
            elif open_flight is not None:
                open_flight[3], open_flight[5], open_flight[7] = seq, t_ns, "ended"
                open_flight = None
        if open_flight is not None and open_flight[2] in aborts:
            end_seq, end_t_ns, reason = aborts[open_flight[2]]
            open_flight[3], open_flight[5], open_flight[7], open_flight[8] = end_seq, end_t_ns, "aborted", reason
        conn.executemany("INSERT INTO flights (vehicle_id, stream_id, start_seq, end_seq, start_t_ns, end_t_ns, info, "
                         "status, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", flights)

    def advance(self, vehicle_id: str, stream_id: str, *, seen: int = 0, first_available: int | None = None) -> int:
        """Move the stream's complete-up-to cursor as far as stored messages allow; returns it.

        ``first_available``: the vehicle no longer holds seqs below it, so a hole there
        can never be filled; it is skipped and counted as unrecoverable.
        """
        return self.advance_many([(vehicle_id, stream_id, seen, first_available)])[(vehicle_id, stream_id)]

    def advance_many(self, moves: list[tuple[str, str, int, int | None]]) -> dict[tuple[str, str], int]:
        """:meth:`advance` for several streams, ``(vehicle_id, stream_id, seen, first_available)`` each, in one
        transaction; returns each stream's cursor."""
        conn = self._conn
        out: dict[tuple[str, str], int] = {}
        if not moves:
            return out
        try:
            conn.begin()
            for vid, stream, seen, first_available in sorted(moves, key=lambda m: (m[0], m[1])):
                conn.lock_stream(vid, stream)   # a second ingest process moves it after us, never under us
                out[(vid, stream)] = self._advance(vid, stream, seen, first_available)
            conn.commit()
        except conn.errors as exc:
            conn.rollback()
            raise FlightLogError(f"{self.path}: advance failed ({exc})") from exc
        except BaseException:
            conn.rollback()
            raise
        return out

    def _advance(self, vehicle_id: str, stream_id: str, seen: int, first_available: int | None) -> int:
        conn = self._conn
        self._note_stream(vehicle_id, stream_id)
        key = (vehicle_id, stream_id)
        contiguous, max_seen, lost = conn.execute(
            "SELECT contiguous_seq, max_seen_seq, unrecoverable FROM streams WHERE vehicle_id = ? AND stream_id = ?",
            key).fetchone()
        max_seen = max(max_seen, seen)
        if first_available is not None and contiguous < first_available - 1:
            have = conn.execute("SELECT COUNT(*) FROM messages WHERE vehicle_id = ? AND stream_id = ? AND seq > ? "
                                "AND seq < ?", (*key, contiguous, first_available)).fetchone()[0]
            lost += (first_available - 1 - contiguous) - have
            contiguous = first_available - 1
        for (seq,) in conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? AND stream_id = ? AND seq > ? "
                                   "ORDER BY seq", (*key, contiguous)):
            if seq != contiguous + 1:
                break
            contiguous = seq
        max_seen = max(max_seen, contiguous)
        conn.execute("UPDATE streams SET contiguous_seq = ?, max_seen_seq = ?, unrecoverable = ? "
                     "WHERE vehicle_id = ? AND stream_id = ?", (contiguous, max_seen, lost, *key))
        return contiguous

    def save_rejects(self, vehicle_id: str, counts: dict[str, int]) -> None:
        """Persist the rejected-frame counters (absolute values, not increments)."""
        self._conn.executemany(
            "INSERT INTO rejects (vehicle_id, reason, count) VALUES (?, ?, ?) "
            "ON CONFLICT(vehicle_id, reason) DO UPDATE SET count = excluded.count",
            [(vehicle_id, r, int(n)) for r, n in counts.items()])

    # -- reads --------------------------------------------------------------------------------

    def current_stream(self, vehicle_id: str) -> str | None:
        """The stream heard last from the vehicle, or None before any."""
        row = self._conn.execute("SELECT stream_id FROM vehicles WHERE vehicle_id = ?", (vehicle_id,)).fetchone()
        return str(row[0]) if row else None

    def cursor(self, vehicle_id: str, stream_id: str) -> tuple[int, int]:
        """(contiguous_seq, max_seen_seq) of one stream as stored."""
        row = self._conn.execute("SELECT contiguous_seq, max_seen_seq FROM streams WHERE vehicle_id = ? "
                                 "AND stream_id = ?", (vehicle_id, stream_id)).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def count(self, vehicle_id: str) -> int:
        """Messages stored for the vehicle, all streams."""
        return int(self._conn.execute("SELECT COUNT(*) FROM messages WHERE vehicle_id = ?", (vehicle_id,)).fetchone()[0])

    def missing(self, vehicle_id: str, stream_id: str, from_seq: int, to_seq: int, *,
                limit: int = 1000) -> list[tuple[int, int]]:
        """Inclusive ranges of seqs in [from_seq, to_seq] of a stream not stored, in order (at most ``limit``)."""
        out: list[tuple[int, int]] = []
        expect = from_seq
        for (seq,) in self._conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? AND stream_id = ? "
                                         "AND seq BETWEEN ? AND ? ORDER BY seq",
                                         (vehicle_id, stream_id, from_seq, to_seq)):
            if seq > expect:
                out.append((expect, seq - 1))
                if len(out) >= limit:
                    return out
            expect = seq + 1
        if expect <= to_seq:
            out.append((expect, to_seq))
        return out

    def _stream_or_current(self, vehicle_id: str, stream_id: str | None) -> str:
        return stream_id if stream_id is not None else (self.current_stream(vehicle_id) or "")

    def seqs(self, vehicle_id: str, stream_id: str | None = None) -> list[int]:
        """Stored seqs of one stream (default: the vehicle's current one)."""
        stream = self._stream_or_current(vehicle_id, stream_id)
        return [r[0] for r in self._conn.execute("SELECT seq FROM messages WHERE vehicle_id = ? AND stream_id = ? "
                                                 "ORDER BY seq", (vehicle_id, stream))]

    def messages(self, vehicle_id: str, *, from_seq: int = 0, to_seq: int | None = None,
                 msg_type: str | None = None, stream_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Stored envelopes of one stream (default: the vehicle's current one) as dicts, in seq order."""
        sql = "SELECT frame FROM messages WHERE vehicle_id = ? AND stream_id = ? AND seq >= ? AND seq <= ?"
        args: list[Any] = [vehicle_id, self._stream_or_current(vehicle_id, stream_id), from_seq,
                           to_seq if to_seq is not None else 2 ** 63 - 1]
        if msg_type is not None:
            sql += " AND type = ?"
            args.append(msg_type)
        for (frame,) in self._conn.execute(sql + " ORDER BY seq", args).fetchall():
            yield msgpack.unpackb(frame, raw=False)

    def flights(self, vehicle_id: str | None = None) -> list[Flight]:
        """Flights in the order they were flown: by vehicle, by stream as first heard, by start seq."""
        sql = ("SELECT f.vehicle_id, f.start_seq, f.end_seq, f.start_t_ns, f.end_t_ns, f.info, f.stream_id, f.status, "
               "f.end_reason FROM flights f LEFT JOIN streams s USING (vehicle_id, stream_id)")
        order = " ORDER BY f.vehicle_id, s.ordinal, f.start_seq"
        rows = (self._conn.execute(sql + " WHERE f.vehicle_id = ?" + order, (vehicle_id,)) if vehicle_id
                else self._conn.execute(sql + order))
        return [Flight(r[0], r[1], r[2], r[3], r[4], msgpack.unpackb(r[5], raw=False) if r[5] else None,
                       r[6], r[7], r[8]) for r in rows]

    def open_flights(self, vehicle_id: str) -> list[Flight]:
        return [f for f in self.flights(vehicle_id) if f.status == "open"]

    def flight_messages(self, flight: Flight) -> Iterator[dict[str, Any]]:
        return self.messages(flight.vehicle_id, from_seq=flight.start_seq, to_seq=flight.end_seq,
                             stream_id=flight.stream_id)

    def events(self, vehicle_id: str, stream_id: str | None = None) -> list[tuple[int, str, Any]]:
        """Events of one stream (default: the vehicle's current one) as (seq, kind, detail)."""
        stream = self._stream_or_current(vehicle_id, stream_id)
        return [(r[0], r[1], msgpack.unpackb(r[2], raw=False) if r[2] is not None else None) for r in
                self._conn.execute("SELECT seq, kind, detail FROM events WHERE vehicle_id = ? AND stream_id = ? "
                                   "ORDER BY seq", (vehicle_id, stream))]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per vehicle: its current stream's cursors, message and event counts (all streams), its
        streams, flights and rejected-frame counters."""
        out: dict[str, dict[str, Any]] = {}
        for vid, stream, contiguous, max_seen, lost in self._conn.execute(
                "SELECT vehicle_id, stream_id, contiguous_seq, max_seen_seq, unrecoverable FROM vehicles "
                "ORDER BY vehicle_id"):
            out[vid] = {
                "stream_id": stream, "contiguous_seq": contiguous, "max_seen_seq": max_seen, "unrecoverable": lost,
                "streams": [r[0] for r in self._conn.execute(
                    "SELECT stream_id FROM streams WHERE vehicle_id = ? ORDER BY ordinal", (vid,))],
                "messages": self.count(vid),
                "events": self._conn.execute("SELECT COUNT(*) FROM events WHERE vehicle_id = ?", (vid,)).fetchone()[0],
                "flights": [{"stream_id": f.stream_id, "start_seq": f.start_seq, "end_seq": f.end_seq,
                             "start_t_ns": f.start_t_ns, "end_t_ns": f.end_t_ns, "status": f.status,
                             "end_reason": f.end_reason, "info": f.info} for f in self.flights(vid)],
                "rejects": self.rejects(vid),
            }
        return out

    def rejects(self, vehicle_id: str) -> dict[str, int]:
        return {r: int(n) for r, n in self._conn.execute("SELECT reason, count FROM rejects WHERE vehicle_id = ?",
                                                         (vehicle_id,))}


def _upgrade(db: SqliteDb) -> None:
    """Create a new log file, migrate a version-1 one, accept version 2, refuse anything newer."""
    conn, path = db.conn, db.path
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise FlightLogError(f"{path}: flight log schema version {version} is newer than this ground station's "
                                 f"({SCHEMA_VERSION}); use a newer aerie or another db_path")
        if version == SCHEMA_VERSION:
            conn.executescript(_SCHEMA)
            return
        old = conn.execute("SELECT type FROM sqlite_master WHERE name = 'vehicles'").fetchone()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if old is not None and old[0] == "table":
                # Statement by statement: executescript would commit half a migration.
                for stmt in _statements(_MIGRATE_V1):
                    conn.execute(stmt)
                vehicles = [r[0] for r in conn.execute("SELECT DISTINCT vehicle_id FROM messages")]
                fl = FlightLog(db)
                for vid in vehicles:
                    fl._rebuild_flights(vid, LEGACY_STREAM)
            elif old is None:
                for stmt in _statements(_SCHEMA):
                    conn.execute(stmt)
            else:
                raise FlightLogError(f"{path}: not a flight log (its 'vehicles' is a {old[0]})")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except db.errors as exc:
        raise FlightLogError(f"{path}: cannot open flight log ({exc})") from exc


def _statements(script: str) -> list[str]:
    """The statements of a schema script (no ';' inside our statements' text)."""
    return [s.strip() for s in script.split(";") if s.strip() and not all(
        line.strip().startswith("--") for line in s.strip().splitlines())]

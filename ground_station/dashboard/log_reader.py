"""Read-only access to the flight log for the dashboard: flight lists, whole flights, and a live tail.

The dashboard never talks to the ingest thread: it reads the same SQLite file
(WAL lets readers run beside the writer) or PostgreSQL database, so it works the same inside
``aerie ground`` and from ``aerie ground dashboard`` on a copied log, and a slow
browser can never hold up ingest. Messages may be stored out of seq order
(replay fills holes later), so the tail remembers what it delivered above the
point where the log is complete instead of assuming seqs only grow.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import msgpack

from contract.messages import Event, MapImage, PayloadError, State, VlmAnswerReport
from ground_station.flight_log import Flight, FlightLog
from ground_station.log_db import LogDb, is_url, open_db

# A vehicle without any flight_start yet shows at most this many of its latest messages.
_NO_FLIGHT_BACKLOG = 5000
# Seqs are stored as SQLite integers (64-bit signed); none is this large.
SEQ_LIMIT = 2 ** 63


T = TypeVar("T")


@dataclass
class LogReader:
    """A read-only connection to a flight log and the :class:`FlightLog` queries over it.

    The dashboard calls it from worker threads (``asyncio.to_thread``), one call at a
    time; :meth:`locked` and :meth:`close` share a lock so closing a viewer's reader
    never races a read still running for it.
    """

    conn: LogDb
    log: FlightLog
    lock: threading.Lock = field(default_factory=threading.Lock)

    def locked(self, fn: Callable[..., T], *args: Any) -> T:
        with self.lock:
            return fn(*args)

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def open_reader(target: str | Path) -> LogReader | None:
    """A read-only reader of the flight log at a file path or ``postgresql://`` URL; None if there is none yet."""
    if not is_url(target):
        target = Path(target)
        if not target.exists():
            return None
    db = open_db(target, readonly=True)
    if db.kind == "postgresql":
        from ground_station.migrations import FLIGHT_LOG_VERSION, current_version

        if current_version(db) < FLIGHT_LOG_VERSION:   # not migrated yet: no flight log, as for a missing file
            db.close()
            return None
    return LogReader(db, FlightLog(db))


def flight_dict(f: Flight) -> dict[str, Any]:
    from ground_station.dashboard.items import json_safe

    return {"vehicle_id": f.vehicle_id, "start_seq": f.start_seq, "end_seq": f.end_seq,
            "start_t_ns": f.start_t_ns, "end_t_ns": f.end_t_ns, "info": json_safe(f.info)}


def vehicle_ids(reader: LogReader) -> list[str]:
    return [r[0] for r in reader.conn.execute(
        "SELECT vehicle_id FROM vehicles UNION SELECT DISTINCT vehicle_id FROM flights ORDER BY 1")]


def latest_flight_start(reader: LogReader, vehicle_id: str) -> int:
    """Seq the live view starts from: the latest flight's start, else a bounded backlog."""
    flights = reader.log.flights(vehicle_id)
    if flights:
        return flights[-1].start_seq
    row = reader.conn.execute("SELECT MAX(seq) FROM messages WHERE vehicle_id = ?", (vehicle_id,)).fetchone()
    return max(0, int(row[0] or 0) - _NO_FLIGHT_BACKLOG + 1)


def latest_of(reader: LogReader, vehicle_id: str, now_ns: int) -> dict[str, Any]:
    """The vehicle's last message and last ``state`` as of ``now_ns``: what it was, not what it is.

    ``age_s`` counts from when the ground received the message (the ground's clock, so a
    vehicle clock that is off does not make old news look fresh).
    """
    out: dict[str, Any] = {"last_message": None, "state": None}
    row = reader.conn.execute("SELECT seq, type, t_ns, received_ns FROM messages WHERE vehicle_id = ? "
                              "ORDER BY seq DESC LIMIT 1", (vehicle_id,)).fetchone()
    if row:
        out["last_message"] = {"seq": row[0], "type": row[1], "t_ns": row[2],
                               "age_s": round((now_ns - row[3]) / 1e9, 3)}
    row = reader.conn.execute("SELECT seq, t_ns, received_ns, frame FROM messages WHERE vehicle_id = ? "
                              "AND type = 'state' ORDER BY seq DESC LIMIT 1", (vehicle_id,)).fetchone()
    if row:
        env = msgpack.unpackb(row[3], raw=False)
        try:
            state: dict[str, Any] | None = State.decode(env.get("payload") if isinstance(env, dict) else None).body()
        except PayloadError:
            state = None   # a state that does not decode says nothing about the vehicle
        out["state"] = {"seq": row[0], "t_ns": row[1], "age_s": round((now_ns - row[2]) / 1e9, 3), "payload": state}
    return out


def vlm_answers(reader: LogReader, vehicle_id: str) -> dict[str, Any] | None:
    """The vision-language model's answers in the vehicle's latest flight: how many, how many fell back, the latest.

    Read from the stored ``vlm_answer`` events through their typed detail; one that does not decode is
    counted apart (``refused``) rather than shown half-read. None when the flight has none.
    """
    reports: list[VlmAnswerReport] = []
    refused = 0
    for env in reader.log.messages(vehicle_id, from_seq=latest_flight_start(reader, vehicle_id), msg_type="event"):
        payload = env.get("payload")
        if not isinstance(payload, dict) or payload.get("kind") != VlmAnswerReport.EVENT_KIND:
            continue
        try:
            reports.append(VlmAnswerReport.from_event(Event.decode(payload)))
        except PayloadError:
            refused += 1
    if not reports and not refused:
        return None
    return {"count": len(reports), "fallbacks": sum(r.used_fallback for r in reports), "refused": refused,
            "latest": reports[-1].body() if reports else None}


def map_png(reader: LogReader, vehicle_id: str, seq: int) -> bytes | None:
    """The PNG of a stored ``map`` message, or None."""
    for env in reader.log.messages(vehicle_id, from_seq=seq, to_seq=seq, msg_type="map"):
        try:
            return MapImage.decode(env.get("payload")).png
        except PayloadError:
            return None
    return None


@dataclass
class Tail:
    """What one viewer has been sent of one vehicle's messages."""

    vehicle_id: str
    low: int                                     # every stored seq <= low has been delivered
    delivered_above: set[int] = field(default_factory=set)

    def read(self, reader: LogReader) -> list[dict[str, Any]]:
        """Envelopes stored since the last call (including late holes), in seq order."""
        conn = reader.conn
        conn.execute("BEGIN")   # one snapshot: the cursor and the messages agree
        try:
            row = conn.execute("SELECT contiguous_seq FROM vehicles WHERE vehicle_id = ?",
                               (self.vehicle_id,)).fetchone()
            contiguous = int(row[0]) if row else 0
            rows = conn.execute("SELECT seq, frame FROM messages WHERE vehicle_id = ? AND seq > ? ORDER BY seq",
                                (self.vehicle_id, self.low)).fetchall()
        finally:
            conn.execute("COMMIT")
        out = []
        for seq, frame in rows:
            if seq in self.delivered_above:
                continue
            self.delivered_above.add(seq)
            out.append(msgpack.unpackb(frame, raw=False))
        # Everything stored up to the log's complete point was in this snapshot; holes that the
        # vehicle can no longer fill are skipped by that cursor, so the query range stays small.
        self.low = max(self.low, contiguous)
        while self.low + 1 in self.delivered_above:
            self.low += 1
        self.delivered_above = {s for s in self.delivered_above if s > self.low}
        return out

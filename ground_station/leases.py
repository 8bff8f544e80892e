"""Vehicle leases in the ground database: several ingest processes share the fleet, a dead one's vehicles move on.

Every ingest process of a PostgreSQL ground lists the whole fleet; which vehicles it
actually subscribes to is decided by leases in the database. A process heartbeats,
renews the leases it holds, and claims free vehicles (never held, released, or whose
holder stopped renewing for ``lease_s``) up to its fair share: the fleet divided by
the processes that heartbeat, rounded up. A process that holds more than its share
(a second process has just started) releases the excess, which the newcomer then
claims, so two processes end with half the fleet each. A process killed with -9
renews nothing: its vehicles are free ``lease_s`` later and taken by the others at
their next turn, so a takeover takes about ``lease_s`` plus one renewal interval.

Correctness never rests on a lease: storing is idempotent and the cursors live in the
database, so a vehicle briefly served by two processes (an old holder that has not
yet noticed its lease was taken) is stored once and resumed where the log is complete.
All times are the database server's clock.
"""

from __future__ import annotations

import math
import os
import socket
import uuid
from dataclasses import dataclass

from ground_station.log_db import LogDb

_NOW = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"


def new_holder() -> str:
    """A name for this process that no other process, here or on another host, shares."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class LeaseTurn:
    """What one :meth:`LeaseBook.turn` changed."""

    claimed: list[str]
    lost: list[str]      # taken by another process while this one did not renew in time
    excess: list[str]    # over this process's share: to commit, close and then :meth:`LeaseBook.release`


class LeaseBook:
    """This process's leases; used from the ingest thread only, on its flight-log connection."""

    def __init__(self, db: LogDb, vehicles: list[str], lease_s: float, holder: str | None = None) -> None:
        self.db = db
        self.vehicles = list(vehicles)
        self.lease_s = lease_s
        self.holder = holder or new_holder()
        self.held: set[str] = set()

    def share(self) -> int:
        """The most vehicles this process should hold: the fleet over the live processes, rounded up."""
        live = self.db.execute(f"SELECT COUNT(*) FROM ingest_processes WHERE seen_at > {_NOW} - ?",
                               (self.lease_s,)).fetchone()[0]
        return math.ceil(len(self.vehicles) / max(1, int(live)))

    def turn(self) -> LeaseTurn:
        """Heartbeat, renew, name what is over the share, claim what is free up to it."""
        db = self.db
        db.execute(f"INSERT INTO ingest_processes (holder, seen_at) VALUES (?, {_NOW}) "
                   f"ON CONFLICT (holder) DO UPDATE SET seen_at = excluded.seen_at", (self.holder,))
        renewed = {r[0] for r in db.execute(
            f"UPDATE vehicle_leases SET expires_at = {_NOW} + ? WHERE holder = ? RETURNING vehicle_id",
            (self.lease_s, self.holder))}
        lost = sorted(self.held - renewed)
        self.held &= renewed
        share = self.share()
        excess = sorted(self.held)[share:]
        claimed: list[str] = []
        for vid in self.vehicles:
            if len(self.held) >= share:
                break
            if vid in self.held:
                continue
            row = db.execute(
                f"INSERT INTO vehicle_leases (vehicle_id, holder, expires_at, acquired_at) "
                f"VALUES (?, ?, {_NOW} + ?, {_NOW}) ON CONFLICT (vehicle_id) DO UPDATE SET "
                f"holder = excluded.holder, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at "
                f"WHERE vehicle_leases.expires_at < {_NOW} RETURNING holder",
                (vid, self.holder, self.lease_s)).fetchone()
            if row is not None:
                self.held.add(vid)
                claimed.append(vid)
        return LeaseTurn(claimed, lost, excess)

    def release(self, vehicle_id: str) -> None:
        """Give a vehicle up now (it was committed first), so another process need not wait out the lease."""
        self.db.execute(f"UPDATE vehicle_leases SET expires_at = {_NOW} - 1 WHERE vehicle_id = ? AND holder = ?",
                        (vehicle_id, self.holder))
        self.held.discard(vehicle_id)

    def close(self) -> None:
        """Release everything and leave (a clean stop hands the vehicles over at once)."""
        for vid in sorted(self.held):
            self.release(vid)
        self.db.execute("DELETE FROM ingest_processes WHERE holder = ?", (self.holder,))

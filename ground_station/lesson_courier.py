"""The lesson courier: every post-flight bundle to every vehicle, once in effect, late to one that was off.

The post-flight watcher writes one bundle per ended flight into ``post_flight_dir``;
a lesson learnt by one vehicle is worth as much to the others, so the courier
pushes each bundle to every configured vehicle link (:func:`push_bundle`, one
attempt of ``lesson_delivery_timeout_s``). What each vehicle has settled is kept
in a ledger keyed by (bundle file name, sha256, vehicle id): the vehicle's
acknowledgement (added / already_present) or its refusal with the reason. A
bundle rewritten with other bytes is a new key and goes out again; a refused one
is not sent again (the same bytes get the same answer).

*Exactly once in effect, not exactly once on the wire.* The ledger is written
after the acknowledgement, so a crash in between, a lost acknowledgement or a
lost ledger sends the bundle again; the vehicle's import is idempotent (content
ids) and answers already_present.

On a PostgreSQL ground (``database``) the ledger is the server's ``deliveries``
table and the bundles are fleet memory's (:mod:`ground_station.fleet_memory`,
copied into ``post_flight_dir`` before each listing), so every host delivers
every host's lessons and a vehicle settles each bundle once, whichever ingest
process serves it; with ``ingest_lease_s`` each process delivers only to the
vehicles it holds the lease of.

*Why a ledger file of its own* (``deliveries.sqlite``, WAL) rather than a table
in the flight log: the flight log's writer is the ingest thread, which batches
its commits; the courier must neither wait on that write lock nor hold it while
a vehicle is slow, and the ledger is disposable (deleting it costs re-sends, no
data), which a table inside the flight log would not make obvious.

*Why one thread per vehicle*: a vehicle that is off costs a whole timeout per
attempt. Each vehicle has its own loop and its own back-off (the interval,
doubling while it stays silent, up to ``lesson_delivery_max_backoff_s``), so a
dead vehicle never delays a live one. A thread never dies of an exception: it
logs and goes on at its next turn.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ground_station.log_db import LogDb, is_url, open_db
from ground_station.settings import GroundConfig, VehicleLinkConfig, resolve

log = logging.getLogger("aerie.ground.lesson_courier")

# Outcomes of a delivery in the ledger.
DELIVERED = "delivered"   # the vehicle acknowledged the bundle (added or already present)
REFUSED = "refused"       # the vehicle, or the ground before sending, refused these bytes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    bundle TEXT NOT NULL,              -- file name in post_flight_dir
    sha256 TEXT NOT NULL,              -- of the bytes settled
    vehicle_id TEXT NOT NULL,
    outcome TEXT NOT NULL,             -- 'delivered' or 'refused'
    at REAL NOT NULL,                  -- unix time of the acknowledgement or refusal
    added INTEGER,                     -- the acknowledgement: experiences new to the vehicle ...
    already_present INTEGER,           -- ... and those it already held
    reason TEXT NOT NULL DEFAULT '',   -- why refused
    PRIMARY KEY (bundle, sha256, vehicle_id)
)
"""


@dataclass(frozen=True)
class BundleFile:
    name: str
    sha256: str
    path: Path


@dataclass(frozen=True)
class Delivery:
    """One settled (bundle, vehicle) pair, as the ledger keeps it."""

    bundle: str
    sha256: str
    vehicle_id: str
    outcome: str
    at: float
    added: int | None = None
    already_present: int | None = None
    reason: str = ""


class DeliveryLedger:
    """The table of settled deliveries (a SQLite file, or the ground's PostgreSQL server); one connection
    shared by the vehicles' threads under a lock."""

    def __init__(self, conn: LogDb) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, target: str | Path) -> "DeliveryLedger":
        """The ledger file at a path, or the ``deliveries`` table of a migrated ``postgresql://`` database."""
        if is_url(target):
            from ground_station import migrations

            conn = open_db(target)
            try:
                migrations.check(conn)
            except BaseException:
                conn.close()
                raise
            return cls(conn)
        from ground_station.log_db import open_sqlite

        conn = open_sqlite(target, threads=True)
        conn.execute(_SCHEMA)
        return cls(conn)

    def settled(self, vehicle_id: str) -> set[tuple[str, str]]:
        """(bundle, sha256) pairs this vehicle acknowledged or refused."""
        with self._lock:
            rows = self._conn.execute("SELECT bundle, sha256 FROM deliveries WHERE vehicle_id = ?",
                                      (vehicle_id,)).fetchall()
        return {(b, s) for b, s in rows}

    def record(self, d: Delivery) -> None:
        """Keep the first settlement of a pair (a re-send after a lost row changes nothing)."""
        with self._lock:   # one statement: atomic by itself
            self._conn.execute("INSERT INTO deliveries VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                               (d.bundle, d.sha256, d.vehicle_id, d.outcome, d.at, d.added, d.already_present,
                                d.reason))

    def rows(self, vehicle_id: str | None = None) -> list[Delivery]:
        sql = "SELECT * FROM deliveries" + (" WHERE vehicle_id = ?" if vehicle_id is not None else "")
        with self._lock:
            found = self._conn.execute(sql + " ORDER BY at, bundle", () if vehicle_id is None else (vehicle_id,))
            return [Delivery(*row) for row in found.fetchall()]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


@dataclass
class _Vehicle:
    """One link's delivery state in this process: its back-off and its counters of this run."""

    link: VehicleLinkConfig
    silent: int = 0             # consecutive attempts without an answer
    next_try: float = 0.0       # time.monotonic() before which it is left alone
    counts: Counter[str] = field(default_factory=Counter)


class LessonCourier:
    """Delivers ``post_flight_dir``'s bundles to every vehicle of ``cfg``: one-shot passes or a thread per vehicle."""

    def __init__(self, cfg: GroundConfig, base_dir: str | Path = ".", *,
                 serving: Callable[[], set[str]] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """``serving``: the vehicles this process delivers to now (its leased ones); None: every configured one.
        ``clock``: what back-offs are timed by (tests pass a synthetic one)."""
        self.cfg = cfg
        self._clock = clock
        self.base_dir = Path(base_dir)
        self.bundle_dir = resolve(base_dir, cfg.post_flight_dir)
        self.ledger_path: str | Path = cfg.database or resolve(base_dir, cfg.lesson_delivery_ledger)
        self._serving = serving
        self._fleet: Any = None              # fleet memory, on a PostgreSQL ground
        self._fleet_lock = threading.Lock()
        self._fleet_synced_at = float("-inf")
        # One attempt per push: the courier's next turn is the retry, after the vehicle's back-off.
        self._push_cfg = dataclasses.replace(cfg, sync_timeout_s=cfg.lesson_delivery_timeout_s, sync_attempts=1)
        self._vehicles = {link.vehicle_id: _Vehicle(link) for link in cfg.vehicles}
        self._ledger: DeliveryLedger | None = None
        self._ledger_lock = threading.Lock()
        self._hashes: dict[str, tuple[int, int, str]] = {}   # name -> (size, mtime_ns, sha256)
        self._hash_lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ files and ledger
    def _sync_fleet_bundles(self) -> None:
        """On a PostgreSQL ground, copy every host's bundles into the folder (at most once per interval)."""
        if not self.cfg.database:
            return
        with self._fleet_lock:
            now = self._clock()
            if now - self._fleet_synced_at < self.cfg.lesson_delivery_interval_s:
                return
            self._fleet_synced_at = now
            try:
                if self._fleet is None:
                    from ground_station.fleet_memory import FleetMemory

                    self._fleet = FleetMemory.open(self.cfg.database)
                self._fleet.materialize(self.bundle_dir)
            except Exception:  # noqa: BLE001 - the folder's bundles still go out; tried again next interval
                log.exception("reading the fleet's lesson bundles failed")

    def bundles(self) -> list[BundleFile]:
        """The bundles in the directory, by name, each hashed once per (size, mtime)."""
        self._sync_fleet_bundles()
        try:
            paths = sorted(p for p in self.bundle_dir.glob("*.bundle") if p.is_file())
        except OSError:
            return []
        out = []
        with self._hash_lock:
            for p in paths:
                try:
                    st = p.stat()
                    known = self._hashes.get(p.name)
                    if known is None or known[:2] != (st.st_size, st.st_mtime_ns):
                        known = (st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
                        self._hashes[p.name] = known
                except OSError:
                    continue   # removed while listed
                out.append(BundleFile(p.name, known[2], p))
        return out

    def ledger(self) -> DeliveryLedger:
        """The ledger, opened on first use (a ground station with no bundles never creates the file)."""
        with self._ledger_lock:
            if self._ledger is None:
                self._ledger = DeliveryLedger.open(self.ledger_path)
            return self._ledger

    def pending(self, vehicle_id: str) -> list[BundleFile]:
        bundles = self.bundles()
        if not bundles:
            return []
        settled = self.ledger().settled(vehicle_id)
        return [b for b in bundles if (b.name, b.sha256) not in settled]

    # ------------------------------------------------------------------ delivery
    def deliver_to(self, vehicle_id: str) -> int:
        """One turn for one vehicle: push what it has pending unless it is backing off; how many it settled.

        A vehicle that does not answer ends its turn at once (its other bundles wait with it)
        and is left alone for its back-off.
        """
        from contract.bundle import BundleError
        from ground_station.memory_sync import SyncError, SyncRefused, push_bundle

        v = self._vehicles[vehicle_id]
        if self._clock() < v.next_try:
            return 0
        if self._serving is not None and vehicle_id not in self._serving():
            return 0   # another ingest process holds this vehicle's lease: its courier delivers
        settled = 0
        for b in self.pending(vehicle_id):
            if self._stop.is_set():
                break
            v.counts["attempts"] += 1
            try:
                reply = push_bundle(b.path, v.link, self._push_cfg, base_dir=self.base_dir, cancel=self._stop)
            except (SyncRefused, BundleError) as exc:
                self._settle(v, Delivery(b.name, b.sha256, vehicle_id, REFUSED, time.time(), reason=str(exc)[:500]))
                settled += 1
                continue
            except SyncError as exc:
                if not self._stop.is_set():
                    self._silence(v, str(exc))
                break
            except Exception as exc:  # noqa: BLE001 - e.g. a key file missing: back off, never die
                log.exception("lesson delivery to %s failed", vehicle_id)
                self._silence(v, f"{type(exc).__name__}: {exc}")
                break
            self._settle(v, Delivery(b.name, reply.sha256, vehicle_id, DELIVERED, time.time(), added=reply.added,
                                     already_present=reply.already_present))
            settled += 1
        return settled

    def run_pass(self) -> int:
        """Every vehicle's turn at once, each on its own thread (a silent one delays none other); how many settled."""
        results: dict[str, int] = {}

        def turn(vid: str) -> None:
            try:
                results[vid] = self.deliver_to(vid)
            except Exception:  # noqa: BLE001 - one vehicle's failure is not the others'
                log.exception("lesson delivery pass for %s failed", vid)

        threads = [threading.Thread(target=turn, args=(vid,), name=f"courier-{vid}", daemon=True)
                   for vid in self._vehicles]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(results.values())

    def _settle(self, v: _Vehicle, d: Delivery) -> None:
        self.ledger().record(d)
        v.silent, v.next_try = 0, 0.0
        fields = {"vehicle_id": d.vehicle_id, "bundle": d.bundle, "sha256": d.sha256[:16]}
        if d.outcome == REFUSED:
            v.counts["refused"] += 1
            log.warning("lesson bundle refused", extra={"fields": {**fields, "reason": d.reason}})
        else:
            v.counts["delivered"] += 1
            v.counts["already_present" if not d.added else "added"] += 1
            log.info("lessons delivered", extra={"fields": {**fields, "added": d.added,
                                                            "already_present": d.already_present}})

    def _silence(self, v: _Vehicle, why: str) -> None:
        v.silent += 1
        v.counts["no_answer"] += 1
        delay = min(self.cfg.lesson_delivery_max_backoff_s, self.cfg.lesson_delivery_interval_s * 2 ** min(v.silent, 30))
        v.next_try = self._clock() + delay
        (log.warning if v.silent == 1 else log.info)(
            "vehicle did not take its lessons; trying again later", extra={"fields": {
                "vehicle_id": v.link.vehicle_id, "why": why[:300], "silent": v.silent, "retry_in_s": round(delay, 1)}})

    # ------------------------------------------------------------------ the threads
    def start(self) -> "LessonCourier":
        for vid in self._vehicles:
            t = threading.Thread(target=self._run, args=(vid,), name=f"courier-{vid}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _run(self, vehicle_id: str) -> None:
        v = self._vehicles[vehicle_id]
        while not self._stop.is_set():
            try:
                self.deliver_to(vehicle_id)
            except Exception:  # noqa: BLE001 - the courier outlives any one failure
                log.exception("lesson delivery to %s failed", vehicle_id)
            wait = max(self.cfg.lesson_delivery_interval_s, v.next_try - self._clock())
            self._stop.wait(wait)

    def stop(self, timeout: float | None = None) -> None:
        """Stop the threads and close the ledger."""
        self._stop.set()   # also ends a push waiting for an answer
        limit = 10.0 if timeout is None else timeout
        for t in self._threads:
            t.join(limit)
        if any(t.is_alive() for t in self._threads):
            return   # a thread still holds the ledger; the process exit closes it
        with self._ledger_lock:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None
        with self._fleet_lock:
            if self._fleet is not None:
                self._fleet.close()
                self._fleet = None

    # ------------------------------------------------------------------ what it did
    def counters(self) -> dict[str, dict[str, Any]]:
        """Per vehicle: delivered and refused (ledger, all runs), pending now, and this run's attempts.

        ``delivered_now``/``added``/``already_present``/``refused_now``/``attempts``/``no_answer``
        count this process's turns; ``backing_off_s`` is how long a silent vehicle is still left alone.
        """
        bundles = self.bundles()
        out: dict[str, dict[str, Any]] = {}
        with self._ledger_lock:
            ledger = self._ledger
        temporary = None
        if ledger is None and (is_url(self.ledger_path) or Path(self.ledger_path).exists()):   # after stop(): once more
            ledger = temporary = DeliveryLedger.open(self.ledger_path)
        try:
            rows_of = {vid: ledger.rows(vid) if ledger is not None else [] for vid in self._vehicles}
        finally:
            if temporary is not None:
                temporary.close()
        for vid, v in self._vehicles.items():
            rows = rows_of[vid]
            settled = {(d.bundle, d.sha256) for d in rows}
            out[vid] = {"delivered": sum(d.outcome == DELIVERED for d in rows),
                        "refused": sum(d.outcome == REFUSED for d in rows),
                        "pending": sum((b.name, b.sha256) not in settled for b in bundles),
                        "delivered_now": v.counts["delivered"], "added": v.counts["added"],
                        "already_present": v.counts["already_present"], "refused_now": v.counts["refused"],
                        "attempts": v.counts["attempts"], "no_answer": v.counts["no_answer"],
                        "backing_off_s": round(max(0.0, v.next_try - self._clock()), 1)}
        return out

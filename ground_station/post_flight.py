"""The post-flight watcher: when a flight has ended, analyse it and write its lessons as a bundle.

The analysis itself (:mod:`ground_station.flight_analysis`) is pure: messages
in, records out. This module is what runs it inside ``aerie ground``: it finds
ended flights without a bundle, adds their records to the ground station's
memory file and writes them with :func:`onboard.memory.bundle.export_bundle`,
ready for ``aerie ground sync``, from a thread that a failed analysis never
stops.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Iterable

from ground_station.log_db import is_url
from ground_station.flight_analysis import SUCCESS_RADIUS_M, FlightAnalysis, analyse

__all__ = ["FlightAnalysis", "PostFlightWatcher", "analyse", "analyse_log", "bundle_name", "export_analysis", "pending_flights"]

log = logging.getLogger("aerie.ground.post_flight")

# Seconds before trying again after an analysis failed.
_RETRY_S = 60.0


def bundle_name(vehicle_id: str, start_seq: int, stream_id: str = "") -> str:
    """One flight's bundle file; the stream keeps a reset vehicle's flights apart (none: a v1 log)."""
    return f"{vehicle_id}-{stream_id}-{start_seq}.bundle" if stream_id and stream_id != "v1" else \
        f"{vehicle_id}-{start_seq}.bundle"


def export_analysis(analysis: FlightAnalysis, store: Any, path: str | Path) -> list[str]:
    """Add the records to ``store`` (an :class:`ExperienceStore`) with parent links and export only them.

    Returns the records' uids. Adding is idempotent (content uids), so analysing a flight
    twice changes nothing.
    """
    from onboard.memory.bundle import export_bundle

    uids: list[str] = []
    for record, parent in analysis.records():
        uids.append(store.add(record, parent_uid=uids[parent] if parent is not None else None,
                              source=f"post_flight:{analysis.vehicle_id}#{analysis.start_seq}"))
    export_bundle(_OnlyThese(store, set(uids)), path, vehicle_id=analysis.vehicle_id)
    return uids


class _OnlyThese:
    """A view of a store whose iteration yields only the given uids (one flight's bundle)."""

    def __init__(self, store: Any, uids: set[str]) -> None:
        self._store = store
        self._uids = uids
        self.embedder = store.embedder

    def iter_experiences(self, collection: str | None = None) -> Iterable[Any]:
        return (e for e in self._store.iter_experiences(collection) if e.uid in self._uids)


def pending_flights(fl: Any, out_dir: Path) -> list[Any]:
    """Ended (or aborted) flights of the flight log (a :class:`FlightLog`) without a bundle in ``out_dir``."""
    return [f for f in fl.flights() if f.end_seq is not None
            and not (out_dir / bundle_name(f.vehicle_id, f.start_seq, f.stream_id)).exists()]


def analyse_log(fl: Any, out_dir: str | Path, store: Any, *,
                success_radius_m: float = SUCCESS_RADIUS_M) -> list[Path]:
    """Analyse every ended flight in ``fl`` that has no bundle in ``out_dir`` yet; returns the new bundles.

    A flight without agent steps gets no bundle (and is looked at again next time: cheap).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for flight in pending_flights(fl, out_dir):
        analysis = analyse(fl.flight_messages(flight), vehicle_id=flight.vehicle_id, start_seq=flight.start_seq,
                           success_radius_m=success_radius_m)
        if analysis is None:
            continue
        target = out_dir / bundle_name(flight.vehicle_id, flight.start_seq, flight.stream_id)
        export_analysis(analysis, store, target)
        log.info("post-flight lessons written", extra={"fields": {
            "bundle": str(target), "status": analysis.status, "key_step": analysis.key.step.step,
            "refused": analysis.refused}})
        written.append(target)
    return written


class PostFlightWatcher:
    """Runs :func:`analyse_log` in a thread of ``aerie ground`` whenever a flight has ended.

    It reads the flight log read-only beside the ingest thread and opens the ground's
    memory file (and its embedder) only once there is a flight to analyse.
    """

    def __init__(self, db_path: str | Path, out_dir: str | Path, memory_path: str | Path, *,
                 success_radius_m: float = SUCCESS_RADIUS_M, interval_s: float = 2.0) -> None:
        self.db_path = db_path if is_url(db_path) else Path(db_path)
        self.out_dir = Path(out_dir)
        self.memory_path = Path(memory_path)
        self.success_radius_m = success_radius_m
        self.interval_s = interval_s
        self.written: list[Path] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Any = None
        self._fleet: Any = None   # on a PostgreSQL ground: its fleet memory (ground_station.fleet_memory)

    def start(self) -> "PostFlightWatcher":
        self._thread = threading.Thread(target=self._run, name="post-flight", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (if started) and close the memory file (if opened)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._thread is None:
            self._close_store()   # one-shot use: poll() ran on this thread

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._fleet is not None:
            self._fleet.close()
            self._fleet = None

    def poll(self) -> list[Path]:
        """One pass: analyse what ended since the last pass."""
        from ground_station.dashboard.log_reader import open_reader

        reader = open_reader(self.db_path)
        if reader is None:
            return []
        fl = reader.log
        try:
            if is_url(self.db_path):   # another host's analyses count as done here
                if self._fleet is None:
                    from ground_station.fleet_memory import FleetMemory

                    self._fleet = FleetMemory.open(str(self.db_path))
                self._fleet.materialize(self.out_dir)
            if not pending_flights(fl, self.out_dir):
                return []
            if self._store is None:
                from onboard.memory.embedder import MiniLMEmbedder
                from onboard.memory.experience_store import ExperienceStore

                self._store = ExperienceStore.open(self.memory_path, MiniLMEmbedder.load())
            written = analyse_log(fl, self.out_dir, self._store, success_radius_m=self.success_radius_m)
            if self._fleet is not None:
                self._fleet.embedder = self._store.embedder
                for path in written:
                    self._fleet.add_bundle(path)
        finally:
            reader.close()
        self.written.extend(written)
        return written

    def _run(self) -> None:
        delay = self.interval_s
        try:
            while True:
                stopping = self._stop.wait(delay)
                try:
                    self.poll()   # once more after stop: a flight that ended just before it
                    delay = self.interval_s
                except Exception:  # noqa: BLE001 - analysis must never stop ingest
                    log.exception("post-flight analysis failed; retrying in %.0f s", _RETRY_S)
                    delay = _RETRY_S   # e.g. no embedding model: do not fill the log every 2 s
                if stopping:
                    break
        finally:
            self._close_store()   # the memory file's connection belongs to this thread

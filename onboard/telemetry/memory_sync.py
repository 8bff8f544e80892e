"""The vehicle's end of memory sync: a ROUTER socket that receives an export bundle and imports it.

The ground station sends a ``bundle_delivery`` (:mod:`contract.memory_sync`,
its hash checked against its bytes on decode); the vehicle keeps the file under
``sync_incoming_dir/<sha256>.msgpack``, imports it with the injected
``import_fn`` (normally ``lambda p: onboard.memory.bundle.import_bundle(store, p)``)
and answers ``bundle_imported`` — the acknowledgement. Import is idempotent
(content-hash ids), so a ground station that timed out and sends the same
bundle again changes nothing. Any failure is answered ``sync_refused`` with the
reason; the server keeps running.

A bundle the import refuses does not stay among the received ones: it is moved
to ``sync_incoming_dir/refused/`` (kept as evidence, never imported again), and
``on_result`` hears ``lessons_refused`` with the reason instead of
``lessons_imported`` (the supervisor publishes both as events).

``import_fn`` and ``on_result`` run on this server's thread.

A request that is not a bundle delivery (junk of any shape, not msgpack, a
hash that does not match) is answered and counted as ``junk``, never
journaled: only a real bundle's fate is an event. Every request is answered,
but what the server logs and hands to ``on_result`` passes a rate limit
(``sync_report_rate_hz``): a peer flooding the socket costs the journal and
the log a bounded rate, and the next line or event carries ``held_back``,
how many were not written before it (``counters["held_back"]`` in all).

Received bundles are kept as evidence, bounded: at most
``sync_incoming_max_files`` each in the incoming directory and in
``refused/``, none older than ``sync_incoming_max_age_s``; the server prunes
at start and after every bundle it stores.

The socket is a ROUTER speaking the REQ envelope (``[identity, b"", body]``), not a
REP: a REP socket's state machine breaks on a multipart junk message (EFSM), and
one such message once hung or aborted the whole vehicle process. A ROUTER sees
every message as it came, so junk of any shape gets ``sync_refused`` and the next
real sync works.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from contract.bounded_socket import bounded_socket
from contract.memory_sync import BundleImported, SyncRefusal, answers, deliveries
from contract.payloads.base import Payload, PayloadError
from contract.rate_limit import TokenBucket
from onboard.telemetry.publisher import zmq_endpoint
from onboard.telemetry.settings import TelemetryConfig, resolve_path

log = logging.getLogger("aerie.telemetry.sync")


# Where refused bundles go, under the incoming directory.
REFUSED_DIR = "refused"
# Log lines (or events) that pass at once before the rate limit holds them back.
REPORT_BURST = 10


class MemorySyncError(RuntimeError):
    """The sync server could not start, or a bundle could not be delivered."""


class NotADelivery(MemorySyncError):
    """A request that is no bundle delivery at all: answered and counted as junk, never journaled."""


class BundleRefused(MemorySyncError):
    """The import refused a received bundle; it was moved out of the incoming directory."""

    def __init__(self, reason: str, sha256: str, moved_to: Path | None) -> None:
        super().__init__(reason)
        self.sha256 = sha256
        self.moved_to = moved_to


# What this side answers is checked as the ground reads it (the answers are small maps).
_ANSWERS = answers(1 << 20)


def decode_delivery(body: bytes, max_bundle_bytes: int = 1 << 32) -> tuple[str, bytes]:
    """A request's bundle and its sha256 (hex), checked against its bytes; NotADelivery for anything else."""
    try:
        delivery = deliveries(max_bundle_bytes).unpack(body)
    except PayloadError as exc:
        raise NotADelivery(f"not a bundle delivery: {exc}") from exc
    return delivery.sha256, delivery.bundle


class MemorySyncServer:
    def __init__(self, cfg: TelemetryConfig, *, data_dir: str | Path, import_fn: Callable[[Path], Any],
                 on_result: Callable[[str, dict[str, Any]], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time) -> None:
        self.cfg = cfg
        self._data_dir = Path(data_dir)
        self._import_fn = import_fn
        self._on_result = on_result
        self.incoming_dir = resolve_path(data_dir, cfg.sync_incoming_dir)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ctx: Any = None
        self._auth: Any = None
        self._rep: Any = None
        self.endpoint = ""
        self.counters: dict[str, int] = {"received": 0, "imported": 0, "errors": 0, "junk": 0, "held_back": 0,
                                         "pruned": 0}
        # One limit for junk, one for real bundles' fates: a junk flood does not silence an import.
        self._junk_reports = TokenBucket(cfg.sync_report_rate_hz, REPORT_BURST, clock)
        self._bundle_reports = TokenBucket(cfg.sync_report_rate_hz, REPORT_BURST, clock)
        self._wall_clock = wall_clock  # file ages are judged by modification times

    def start(self) -> "MemorySyncServer":
        import zmq

        from contract import curve_keys

        self.incoming_dir.mkdir(parents=True, exist_ok=True)
        self.prune()
        self._ctx = zmq.Context()
        try:
            if self.cfg.curve:
                self._auth = curve_keys.start_authenticator(
                    self._ctx, resolve_path(self._data_dir, self.cfg.authorized_keys_dir))
            self._rep = bounded_socket(self._ctx, zmq.ROUTER, self.cfg.sync_max_bundle_bytes + 4096)
            self._rep.sndhwm = 100   # replies to a peer that does not read are dropped, not queued forever
            if self.cfg.curve:
                curve_keys.make_server(self._rep, resolve_path(self._data_dir, self.cfg.server_secret_key))
            self._rep.bind(zmq_endpoint(self.cfg.sync_endpoint))
            self.endpoint = self._rep.getsockopt_string(zmq.LAST_ENDPOINT)
        except BaseException:
            self._teardown()
            raise
        self._thread = threading.Thread(target=self._run, name="memory-sync", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._teardown()

    def __enter__(self) -> "MemorySyncServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _teardown(self) -> None:
        if self._rep is not None:
            self._rep.close(0)
        if self._auth is not None:
            self._auth.stop()
        if self._ctx is not None:
            self._ctx.term()
        self._rep = self._auth = self._ctx = None

    def _run(self) -> None:
        import zmq

        while not self._stop.is_set():
            try:
                if not self._rep.poll(100):
                    continue
                parts = self._rep.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                continue
            try:
                self._serve(parts)
            except Exception:  # noqa: BLE001 - nothing a peer sends ends the server
                self.counters["errors"] += 1
                if self._junk_reports.allow():
                    log.exception("memory sync: request not served")
                else:
                    self.counters["held_back"] += 1

    def _serve(self, parts: list[bytes]) -> None:
        self.counters["received"] += 1
        if len(parts) != 3 or parts[1] != b"":
            # Not a REQ request: answer (a DEALER peer may read it), never import.
            self._junk({"parts": len(parts)})
            self._reply(parts[0], SyncRefusal(f"expected one request frame, got {len(parts) - 1}"))
            return
        ident, _, body = parts
        reply: Payload
        try:
            reply = self._handle(body)
            event = reply.body()
            kind = "lessons_imported"
            self.counters["imported"] += 1
        except NotADelivery as exc:
            self._junk({"reason": str(exc)})
            self._reply(ident, SyncRefusal(str(exc)[:500]))
            return
        except Exception as exc:  # noqa: BLE001 - any failure is answered, never fatal
            self.counters["errors"] += 1
            reply = SyncRefusal(str(exc)[:500])
            event = {"reason": reply.reason}
            if isinstance(exc, BundleRefused):
                event.update(sha256=exc.sha256, moved_to=str(exc.moved_to) if exc.moved_to else None)
            kind = "lessons_refused"
        self._reply(ident, reply)
        if not self._bundle_reports.allow():
            self.counters["held_back"] += 1
            return
        event = {**event, "held_back": self._bundle_reports.held_back()}
        if kind == "lessons_refused":
            log.warning("memory bundle refused", extra={"fields": event})
        else:
            log.info("memory bundle imported", extra={"fields": event})
        if self._on_result is not None:
            try:
                self._on_result(kind, event)
            except Exception:  # noqa: BLE001 - a listener's failure must not end the server
                log.exception("memory sync listener failed on %s", kind)

    def _junk(self, fields: dict[str, Any]) -> None:
        """Count a request that is no delivery; log it when the rate limit lets it through."""
        self.counters["junk"] += 1
        self.counters["errors"] += 1
        if self._junk_reports.allow():
            log.warning("memory sync: junk message refused",
                        extra={"fields": {**fields, "held_back": self._junk_reports.held_back()}})
        else:
            self.counters["held_back"] += 1

    def _reply(self, ident: bytes, reply: Payload) -> None:
        import zmq

        try:
            self._rep.send_multipart([ident, b"", _ANSWERS.pack(reply)], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass   # the peer is gone or not reading; a REQ peer that wants the answer asks again

    def _handle(self, body: bytes) -> BundleImported:
        sha, data = decode_delivery(body, self.cfg.sync_max_bundle_bytes)
        path = self.incoming_dir / f"{sha}.msgpack"
        if not path.exists():
            tmp = path.with_name(path.name + ".tmp")
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            self.prune()
        try:
            report = self._import_fn(path)
        except Exception as exc:  # noqa: BLE001 - whatever the import refuses is refused, never kept
            raise BundleRefused(str(exc), sha, self._move_refused(path)) from exc
        return BundleImported(sha, int(getattr(report, "total", 0)), int(getattr(report, "added", 0)),
                              int(getattr(report, "already_present", 0)))

    def prune(self) -> int:
        """Delete received bundles beyond the configured count and age (each directory on its own); how many."""
        oldest = self._wall_clock() - self.cfg.sync_incoming_max_age_s
        gone = 0
        for directory in (self.incoming_dir, self.incoming_dir / REFUSED_DIR):
            try:
                files = sorted(((f.stat().st_mtime, f) for f in directory.glob("*.msgpack")), reverse=True)
            except OSError:
                continue
            for n, (mtime, f) in enumerate(files):
                if n >= self.cfg.sync_incoming_max_files or not mtime >= oldest:
                    try:
                        f.unlink()
                        gone += 1
                    except OSError:
                        log.warning("cannot delete the old bundle %s", f)
        self.counters["pruned"] += gone
        return gone

    def _move_refused(self, path: Path) -> Path | None:
        """Move a refused bundle to the refused directory (delete it if that fails); where it went."""
        target = path.parent / REFUSED_DIR / path.name
        try:
            target.parent.mkdir(exist_ok=True)
            os.replace(path, target)
            self.prune()
            return target
        except OSError:
            log.exception("cannot move refused bundle %s; deleting it", path)
            path.unlink(missing_ok=True)
            return None

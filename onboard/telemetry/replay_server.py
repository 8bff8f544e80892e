"""The vehicle's ROUTER socket: status, replay of a seq range from the journal, and acks.

Protocol: the typed messages of :mod:`contract.replay` (the ground uses a DEALER
socket). ``status`` is answered with the journal's cursors, ``replay`` with
stored envelopes in order (bounded per answer; seqs below ``first_seq`` were
acknowledged and pruned), ``ack`` of this journal's stream with ``ack_reply``
and of any other with ``ack_refused``. Anything else, and a request that still
fails in the journal, is answered ``replay_error`` (counted, never fatal):
this thread is the only way gaps get filled, so nothing a peer sends may end it.

It runs in its own thread with its own read connection to the journal; acks
are handed to the publisher's writer thread so the journal has one writer.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from typing import Any, Callable

from contract.payloads.base import PayloadError
from contract.replay import (AckRefused, AckReply, AckRequest, ReplayError, ReplayReply, ReplayRequest, Reply,
                             StatusReply, StatusRequest, replies, requests)
from onboard.telemetry.journal import Journal, JournalError

log = logging.getLogger("aerie.telemetry.replay")

# Seconds between WAL checkpoints of the journal, done here rather than on the publishing path.
CHECKPOINT_INTERVAL_S = 1.0


class ReplayServerError(RuntimeError):
    """The replay server could not start."""


class ReplayServer:
    """Serves one ROUTER socket until :meth:`stop`; created and started by the publisher."""

    def __init__(self, socket: Any, journal_path: str, vehicle_id: str, *, on_ack: Callable[[int], None],
                 batch_max: int, batch_max_bytes: int, stream_id: str, max_request_bytes: int = 4096,
                 monitors: list[Any] | None = None, synchronous: str = "NORMAL") -> None:
        self._socket = socket
        self._journal_path = journal_path
        self._vehicle_id = vehicle_id
        self._stream_id = stream_id
        self._requests = requests(max_request_bytes)
        # What this side sends is checked as the ground will read it (the ground bounds the size).
        self._replies = replies(1 << 31)
        self._on_ack = on_ack
        self._batch_max = batch_max
        self._batch_max_bytes = batch_max_bytes
        self._monitors = monitors or []
        self._synchronous = synchronous
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.counters: dict[str, int] = {"status": 0, "replay": 0, "replayed_frames": 0, "ack": 0,
                                         "stale_ack": 0, "bad_request": 0, "failed_request": 0, "auth_failed": 0,
                                         "handshake_failed": 0}
        self._last_good_request = float("-inf")   # time.monotonic() of the last well-formed request

    def heard_within(self, seconds: float) -> bool:
        """Whether a ground station asked anything sensible in the last ``seconds``."""
        return time.monotonic() - self._last_good_request <= seconds

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="telemetry-replay", daemon=True)
        self._thread.start()
        self._ready.wait(10.0)
        if self._error is not None:
            raise ReplayServerError(f"replay server failed to start: {self._error}") from self._error

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        import zmq
        from zmq.utils.monitor import recv_monitor_message

        try:
            journal = Journal.open(self._journal_path, synchronous=self._synchronous)  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        for mon in self._monitors:
            poller.register(mon, zmq.POLLIN)
        auth_events = getattr(zmq, "EVENT_HANDSHAKE_FAILED_AUTH", 0)
        next_checkpoint = time.monotonic() + CHECKPOINT_INTERVAL_S
        try:
            while not self._stop.is_set():
                if time.monotonic() >= next_checkpoint:
                    # The publisher's writer does not checkpoint (its fsync would stall publishing).
                    try:
                        journal.checkpoint()
                    except JournalError:
                        log.warning("journal checkpoint failed; trying again", exc_info=True)
                    next_checkpoint = time.monotonic() + CHECKPOINT_INTERVAL_S
                for sock, _ in poller.poll(100):
                    if sock is self._socket:
                        self._serve_one(journal)
                    else:
                        ev = recv_monitor_message(sock)
                        if ev["event"] == auth_events:
                            self.counters["auth_failed"] += 1
                        else:
                            self.counters["handshake_failed"] += 1
                        log.warning("telemetry peer refused", extra={"fields": {"event": int(ev["event"])}})
        finally:
            journal.close()

    def _serve_one(self, journal: Journal) -> None:
        import zmq

        try:
            parts = self._socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return
        if len(parts) != 2:
            self.counters["bad_request"] += 1
            return
        ident, body = parts
        try:
            reply = self._answer(journal, body)
        except (JournalError, sqlite3.Error, ValueError, OverflowError, TypeError) as exc:
            # The request passed the checks and the journal still refused it: answer, keep serving.
            self.counters["failed_request"] += 1
            log.warning("replay request failed", extra={"fields": {"error": str(exc)[:200]}})
            reply = ReplayError("request failed")
        if not isinstance(reply, ReplayError):
            self._last_good_request = time.monotonic()
        try:
            self._socket.send_multipart([ident, self._replies.pack(reply)], zmq.NOBLOCK)
        except zmq.Again:
            pass  # the peer is gone or not reading; it will ask again

    def _answer(self, journal: Journal, body: bytes) -> Reply:
        try:
            req = self._requests.unpack(body)
        except PayloadError as exc:
            self.counters["bad_request"] += 1
            return ReplayError(f"bad request: {str(exc)[:200]}")
        if isinstance(req, StatusRequest):
            self.counters["status"] += 1
            return StatusReply(self._vehicle_id, self._stream_id, journal.first_seq(), journal.last_seq(),
                               journal.acked_seq())
        if isinstance(req, ReplayRequest):
            self.counters["replay"] += 1
            frames = journal.frames(req.first, req.last, max_count=self._batch_max, max_bytes=self._batch_max_bytes)
            self.counters["replayed_frames"] += len(frames)
            return ReplayReply(self._vehicle_id, self._stream_id, journal.first_seq(), journal.last_seq(),
                               tuple(f for _, f in frames))
        assert isinstance(req, AckRequest)
        if req.stream != self._stream_id:
            self.counters["stale_ack"] += 1
            return AckRefused(self._stream_id, f"ack for stream {req.stream!r}, this journal is {self._stream_id}")
        self.counters["ack"] += 1
        self._on_ack(req.upto)
        return AckReply(req.upto)

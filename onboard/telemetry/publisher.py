"""The vehicle's telemetry publisher: seq numbering, journal group commit, PUB socket.

``publish(type, payload)`` assigns the next seq and queues the encoded
envelope; a writer thread commits queued messages to the journal in one
transaction and only then sends them on the PUB socket, so no seq is ever on
the wire without being in the journal. Under load batches grow by themselves
(group commit); at 200 Hz each message is its own small batch.

Usage (the supervisor)::

    pub = TelemetryPublisher(cfg.telemetry, cfg.vehicle_id, data_dir=cfg.data_dir)
    pub.start()
    bridge.events.add_listener(bridge_event_listener(pub.publish))
    pub.flight_start(FlightStart(mission="survey-3"))
    pub.publish("state", State.from_state(bridge.state))   # throttled to state_rate_hz
    pub.event("place_created", {"place_id": 4})
    pub.flight_end(FlightEnd(reason="landed"))

Payloads are the dataclasses of :mod:`contract.messages`. A raw map is sent as it
is (the transport tests and benchmarks send arbitrary maps); the ground's readers
refuse it if it does not decode as its type.
    pub.close()
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from contract.bounded_socket import bounded_socket
from contract.envelope import MESSAGE_TYPES, encode
from onboard.telemetry.journal import Journal
from contract.messages import Event, FlightEnd, FlightStart, Payload
from contract.payloads.event import check_kind
from onboard.telemetry.replay_server import ReplayServer
from onboard.telemetry.settings import TelemetryConfig, resolve_path

log = logging.getLogger("aerie.telemetry")

# Decides per (seq, type) whether a frame goes on the wire; a fault injector for tests.
SendFilter = Callable[[int, str], bool]


class PublisherError(RuntimeError):
    """The publisher is not running, or its sockets or journal failed."""


def zmq_endpoint(endpoint: str) -> str:
    """``tcp://host:0`` means any free port (ZeroMQ spells it ``*``)."""
    return endpoint[:-2] + ":*" if endpoint.startswith("tcp://") and endpoint.endswith(":0") else endpoint


def _lock_journal(journal_path: Path) -> Any:
    """Hold an exclusive lock beside the journal: two publishers on one journal would reuse seqs.

    The kernel drops the lock when the process dies, SIGKILL included.
    """
    import fcntl

    journal_path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(journal_path.with_name(journal_path.name + ".lock"), "a+b")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        fh.close()
        raise PublisherError(f"{journal_path}: journal is in use by another publisher") from exc
    return fh


class TelemetryPublisher:
    def __init__(self, cfg: TelemetryConfig, vehicle_id: str, *, data_dir: str | Path = ".",
                 send_filter: SendFilter | None = None) -> None:
        if not vehicle_id:
            raise ValueError("vehicle_id must not be empty")
        self.cfg = cfg
        self.vehicle_id = vehicle_id
        self.journal_path = resolve_path(data_dir, cfg.journal_path)
        self._data_dir = Path(data_dir)
        self._send_filter = send_filter
        self._lock = threading.Lock()                 # seq assignment and the pending queue
        self._cond = threading.Condition(self._lock)
        self._pending: deque[tuple[int, str, int, bytes]] = deque()
        self._io_lock = threading.Lock()              # the journal connection and the PUB socket
        self._journal: Journal | None = None
        self._stopping = False
        self._prev_publish = 0.0
        self._acks: deque[int] = deque()
        self._next_seq = 0
        self._last_sent: dict[str, float] = {}
        self._min_interval = {"state": 1.0 / cfg.state_rate_hz if cfg.state_rate_hz > 0 else 0.0,
                              "map": max(0.0, cfg.map_min_interval_s)}
        self._sent_seq = 0
        self._sent_cond = threading.Condition()
        self._ctx: Any = None
        self._auth: Any = None
        self._pub: Any = None
        self._router: Any = None
        self._monitors: list[Any] = []
        self._writer: threading.Thread | None = None
        self._replay: ReplayServer | None = None
        self._writer_error: BaseException | None = None
        self._lock_file: Any = None
        self._running = False
        self.pub_endpoint = ""
        self.replay_endpoint = ""
        self.stream_id = ""     # the journal's, known after start()
        self.counters: dict[str, int] = {"published": 0, "sent": 0, "filtered": 0, "dropped_hwm": 0,
                                         "throttled": 0, "refused_oversize": 0, "acked_seq": 0}

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> "TelemetryPublisher":
        """Open the journal, bind both sockets (CURVE unless disabled) and start the threads."""
        import zmq

        from contract import curve_keys

        self._lock_file = _lock_journal(self.journal_path)
        try:
            journal = Journal.open(self.journal_path, synchronous=self.cfg.journal_synchronous, auto_checkpoint=False)
        except BaseException:
            self._lock_file.close()
            raise
        self.stream_id = journal.stream_id()
        self._next_seq = journal.last_seq() + 1
        self._sent_seq = self._next_seq - 1
        self.counters["acked_seq"] = journal.acked_seq()
        self._ctx = zmq.Context()
        try:
            if self.cfg.curve:
                self._auth = curve_keys.start_authenticator(
                    self._ctx, resolve_path(self._data_dir, self.cfg.authorized_keys_dir))
            # A PUB socket reads subscription messages; a huge one is dropped unread.
            self._pub = bounded_socket(self._ctx, zmq.PUB, self.cfg.pub_max_inbound_bytes)
            self._router = bounded_socket(self._ctx, zmq.ROUTER, self.cfg.replay_max_request_bytes)
            for sock in (self._pub, self._router):
                if self.cfg.curve:
                    curve_keys.make_server(sock, resolve_path(self._data_dir, self.cfg.server_secret_key))
            self._pub.sndhwm = self.cfg.send_hwm
            self._pub.bind(zmq_endpoint(self.cfg.pub_endpoint))
            self._router.bind(zmq_endpoint(self.cfg.replay_endpoint))
            self.pub_endpoint = self._pub.getsockopt_string(zmq.LAST_ENDPOINT)
            self.replay_endpoint = self._router.getsockopt_string(zmq.LAST_ENDPOINT)
            mask = (getattr(zmq, "EVENT_HANDSHAKE_FAILED_AUTH", 0) | getattr(zmq, "EVENT_HANDSHAKE_FAILED_PROTOCOL", 0)
                    | getattr(zmq, "EVENT_HANDSHAKE_FAILED_NO_DETAIL", 0))
            if self.cfg.curve and mask:
                self._monitors = [self._pub.get_monitor_socket(mask), self._router.get_monitor_socket(mask)]
            self._replay = ReplayServer(self._router, str(self.journal_path), self.vehicle_id, on_ack=self._acks.append,
                                        stream_id=self.stream_id, max_request_bytes=self.cfg.replay_max_request_bytes,
                                        batch_max=self.cfg.replay_batch_max,
                                        batch_max_bytes=self.cfg.replay_batch_max_bytes, monitors=self._monitors,
                                        synchronous=self.cfg.journal_synchronous)
            self._replay.start()
        except BaseException:
            journal.close()
            self._teardown()
            raise
        self._running = True
        self._stopping = False
        self._journal = journal
        self._writer = threading.Thread(target=self._write_loop, name="telemetry-writer", daemon=True)
        self._writer.start()
        log.info("telemetry publishing", extra={"fields": {"pub": self.pub_endpoint, "replay": self.replay_endpoint,
                                                            "next_seq": self._next_seq, "stream": self.stream_id, "curve": self.cfg.curve}})
        return self

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued, stop the threads and close the sockets; the journal keeps the rest."""
        if not self._running:
            return
        self._await_final_ack()
        self._running = False
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._writer is not None:
            self._writer.join(timeout)
        if self._journal is not None and not (self._writer and self._writer.is_alive()):
            self._journal.close()
            self._journal = None
        self._teardown()

    def _await_final_ack(self) -> None:
        """Give a listening ground station the chance to fetch the end of the stream.

        A PUB socket closed right after its last send loses what is still queued on the wire; the
        journal has it, but the ground would only get it when this vehicle next starts. The ground
        asks for status every fraction of a second, sees the last seq and replays the tail.
        """
        wait = self.cfg.close_ack_wait_s
        if wait <= 0 or self._replay is None or not self._replay.heard_within(10.0):
            return
        deadline = time.monotonic() + wait
        self.flush(wait)
        target = self.last_seq
        while self.counters["acked_seq"] < target and time.monotonic() < deadline and self._writer_error is None:
            time.sleep(0.02)

    def __enter__(self) -> "TelemetryPublisher":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _teardown(self) -> None:
        if self._replay is not None:
            self._replay.stop()
        for sock in (self._pub, self._router):
            if sock is not None:
                if sock is not None and self._monitors:
                    try:
                        sock.disable_monitor()
                    except Exception:  # noqa: BLE001 - closing anyway
                        pass
        for mon in self._monitors:
            mon.close(0)
        for sock in (self._pub, self._router):
            if sock is not None:
                sock.close(0)
        if self._auth is not None:
            self._auth.stop()
        if self._lock_file is not None:
            self._lock_file.close()   # releases the journal lock
            self._lock_file = None
        if self._ctx is not None:
            self._ctx.term()
        self._pub = self._router = self._auth = self._ctx = None
        self._monitors = []

    # -- publishing ---------------------------------------------------------------------------

    def publish(self, msg_type: str, payload: Any, *, t_ns: int | None = None) -> int | None:
        """Queue one message; returns its seq, or None when throttled or refused as oversized.

        Blocks while the queue is full (bounded memory). Thread-safe.
        """
        if not self._running:
            raise PublisherError("publisher is not running")
        if self._writer_error is not None:
            raise PublisherError(f"telemetry writer failed: {self._writer_error}")
        if msg_type not in MESSAGE_TYPES:
            raise ValueError(f"unknown telemetry message type {msg_type!r}")
        if isinstance(payload, Event):
            check_kind(payload.kind)   # one registry of kinds; an unknown one is a bug, refused here
        if isinstance(payload, Payload):
            if payload.MSG_TYPE != msg_type:
                raise ValueError(f"a {type(payload).__name__} payload is not a {msg_type!r} message")
            payload = payload.encode()
        now = time.monotonic()
        t_ns = time.time_ns() if t_ns is None else t_ns
        with self._cond:
            interval = self._min_interval.get(msg_type, 0.0)
            if interval:
                last = self._last_sent.get(msg_type)
                if last is not None and now - last < interval:
                    self.counters["throttled"] += 1
                    return None
            seq = self._next_seq
            frame = encode(self.vehicle_id, seq, msg_type, payload, t_ns, stream=self.stream_id)
            if len(frame) > self.cfg.max_message_bytes:
                self.counters["refused_oversize"] += 1
                refused = {"type": msg_type, "bytes": len(frame), "limit": self.cfg.max_message_bytes}
                log.warning("telemetry payload refused: too large", extra={"fields": refused})
                frame = encode(self.vehicle_id, seq, "event", Event.of("payload_refused", refused).encode(), t_ns,
                               stream=self.stream_id)
                msg_type = "event"
                result = None
            else:
                result = seq
                if interval:
                    self._last_sent[msg_type] = now
            # A full queue waits for the writer (bounded memory), never forever on a dead one.
            while len(self._pending) >= self.cfg.queue_max_messages:
                if self._writer_error is not None or not self._running:
                    raise PublisherError("telemetry writer is not draining the queue") from self._writer_error
                self._cond.wait(0.5)
            self._pending.append((seq, msg_type, t_ns, frame))
            self._next_seq = seq + 1
            self.counters["published"] += 1
            sparse = now - self._prev_publish >= self.cfg.inline_commit_min_gap_s
            self._prev_publish = now
            self._cond.notify_all()
        # A sparse stream (10 Hz state, events, 200 Hz) is committed and sent by the caller, saving
        # a thread hand-off; a dense one is left to the writer thread, which batches it.
        if self.cfg.inline_commit and sparse and self._io_lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._io_lock.release()
        return result

    def event(self, kind: str, detail: Any = None) -> int | None:
        return self.publish("event", Event.of(kind, detail))

    def flight_start(self, info: FlightStart | dict[str, Any] | None = None) -> int | None:
        """Open a flight; a map is taken as :class:`FlightStart` fields (an unknown one is a TypeError)."""
        return self.publish("flight_start", info if isinstance(info, FlightStart) else FlightStart(**(info or {})))

    def flight_end(self, info: FlightEnd | dict[str, Any] | None = None) -> int | None:
        return self.publish("flight_end", info if isinstance(info, FlightEnd) else FlightEnd(**(info or {})))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every message queued so far is journaled and sent."""
        with self._lock:
            target = self._next_seq - 1
        deadline = time.monotonic() + timeout
        with self._sent_cond:
            while self._sent_seq < target:
                left = deadline - time.monotonic()
                if left <= 0 or self._writer_error is not None:
                    return False
                self._sent_cond.wait(min(left, 0.1))
        return True

    @property
    def last_seq(self) -> int:
        """Seq of the last message queued."""
        return self._next_seq - 1

    @property
    def replay_counters(self) -> dict[str, int]:
        return dict(self._replay.counters) if self._replay is not None else {}

    # -- writer thread ------------------------------------------------------------------------

    def _drain(self) -> None:
        """Commit and send everything pending, in seq order; the caller holds ``_io_lock``."""
        import zmq

        send_filter, batch_max, journal = self._send_filter, self.cfg.commit_batch_max, self._journal
        if journal is None or self._writer_error is not None:
            return
        try:
            while True:
                with self._cond:
                    batch = [self._pending.popleft() for _ in range(min(batch_max, len(self._pending)))]
                    if batch:
                        self._cond.notify_all()   # room for publishers waiting on a full queue
                if not batch:
                    break
                journal.append_many(batch)
                for seq, msg_type, _, frame in batch:
                    if send_filter is not None and not send_filter(seq, msg_type):
                        self.counters["filtered"] += 1
                        continue
                    try:
                        self._pub.send(frame, zmq.NOBLOCK)
                        self.counters["sent"] += 1
                    except zmq.Again:
                        self.counters["dropped_hwm"] += 1
                with self._sent_cond:
                    self._sent_seq = batch[-1][0]
                    self._sent_cond.notify_all()
            while self._acks:
                self.counters["acked_seq"] = journal.ack(self._acks.popleft())
        except BaseException as exc:
            # Popped but not journaled: those seqs are lost, so the publisher stops rather than
            # go on with a hole nobody can fill.
            self._writer_error = exc
            log.error("telemetry journal write failed; publisher stopped", exc_info=True)
            raise PublisherError(f"telemetry journal write failed: {exc}") from exc

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(0.05)
                stop = self._stopping and not self._pending
            try:
                with self._io_lock:
                    self._drain()
            except PublisherError:
                return
            if stop:
                return

# Over 400 lines: one thread's ingest: each vehicle's link and the station loop that owns every socket share the flight log and the counters, and a gap filled or a flight aborted crosses both; the vehicle leases open and close those links inside the same loop.
"""Ground-station ingest: subscribe to vehicles, fill gaps by replay, log everything, acknowledge.

One thread runs :meth:`GroundStation.run`; it owns every socket and the flight
log connection. Per vehicle there is a SUB socket (live telemetry) and a
DEALER socket (status, replay, ack, see :mod:`onboard.telemetry.replay_server`).

Every frame is untrusted: it is size-checked, decoded and validated before
anything is stored, and each rejection increments a counter named for its
reason (``malformed``, ``wrong_version``, ``oversized``, ``bad_envelope``,
``unknown_type``, ``wrong_vehicle``, ``unauthenticated`` ...); the loop never
raises on bad input. Counters are persisted in the flight log's ``rejects``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from contract.bounded_socket import bounded_socket
from contract.envelope import Envelope, EnvelopeError, decode
from contract.payloads.base import PayloadError
from contract.replay import (AckRefused, AckReply, AckRequest, ReplayReply, ReplayRequest, Request, StatusReply,
                             StatusRequest, replies, requests)
from ground_station.flight_log import Flight, FlightLog, FlightLogError
from ground_station.leases import LeaseBook
from ground_station.log_db import is_url, redact
from ground_station.settings import GroundConfig, VehicleLinkConfig, log_target, resolve

log = logging.getLogger("aerie.ground")

# Replies on the DEALER socket are small except replay batches; cap them generously.
_REPLY_LIMIT_SLACK = 1 << 20
# The socket bounds a reply's size (hard_frame_limit_bytes and the slack); the reader need not again.
_REPLIES = replies(1 << 31)
_REQUESTS = requests(1 << 20)

# A socket that ZeroMQ dropped is re-created at once, but not more often than this (a peer
# failing every handshake must not turn the loop into a reconnect storm).
_REOPEN_MIN_INTERVAL_S = 0.5

_HANDSHAKE_FAILURES = ("EVENT_HANDSHAKE_FAILED_AUTH", "EVENT_HANDSHAKE_FAILED_PROTOCOL",
                       "EVENT_HANDSHAKE_FAILED_NO_DETAIL")


def abort_flight(flight_log: FlightLog, flight: Flight, reason: str, counters: Counter[str]) -> None:
    """Close an open flight as aborted; post-flight analysis picks it up like an ended one."""
    closed = flight_log.abort_flight(flight, reason)
    counters["flights_aborted"] += 1
    log.warning("flight aborted", extra={"fields": {"vehicle": flight.vehicle_id, "stream": flight.stream_id,
                                                    "start_seq": flight.start_seq, "end_seq": closed.end_seq,
                                                    "reason": reason}})


class IngestError(RuntimeError):
    """The ground station could not set up its sockets or flight log."""


class VehicleLink:
    """Sockets and cursors of one vehicle; used only by the ground station's thread.

    The cursors (``contiguous``, ``max_seen``) are those of the vehicle's current stream
    (its journal's id, in every envelope and status reply). A vehicle that comes back with
    another stream was reset: the link switches to the new stream and the flight the old
    stream left open is closed as aborted.
    """

    def __init__(self, cfg: VehicleLinkConfig, ground: GroundConfig, base_dir: Path, ctx: Any,
                 flight_log: FlightLog) -> None:
        self.cfg = cfg
        self.vehicle_id = cfg.vehicle_id
        self._ground = ground
        self._base_dir = base_dir
        self._ctx = ctx
        # "stored" is derived from the log itself, so it always agrees with the log's count.
        self.counters: Counter[str] = Counter({k: v for k, v in flight_log.rejects(cfg.vehicle_id).items()
                                               if k != "stored"})
        stored = flight_log.count(cfg.vehicle_id)
        if stored:
            self.counters["stored"] = stored
        self.sub: Any = None
        self.dealer: Any = None
        self.monitors: dict[str, Any] = {}
        self.reopen: set[str] = set()          # roles whose socket ZeroMQ dropped
        self.reopened_at = {"sub": float("-inf"), "dealer": float("-inf")}
        self.stream: str | None = flight_log.current_stream(cfg.vehicle_id)
        self.contiguous, self.max_seen = flight_log.cursor(cfg.vehicle_id, self.stream) if self.stream else (0, 0)
        self.first_available: int | None = None   # the vehicle holds no seq below this
        self.first_applied: int | None = None
        self.pending: list[tuple[Envelope, bytes]] = []
        self.replay_out: tuple[int, int, float] | None = None   # (from, to, sent_at)
        self.status_sent_at = 0.0
        # Our cursor when each unanswered status request went out, oldest first: a reply says
        # where the vehicle was when it read that request, which frames that arrived meanwhile
        # may already have passed. Only a reply behind the cursor *at its request* is a fault.
        self.status_cursors: deque[int] = deque(maxlen=64)
        self.ack_confirmed = 0
        self.ack_sent_at = 0.0
        self.last_message_at = time.monotonic()   # a flight left open before a restart times out too
        self.abort_checked_at = 0.0
        self.stream_switch: str | None = None     # a new stream heard, applied at the next commit
        try:
            self.open_socket("sub")
            self.open_socket("dealer")
        except BaseException:
            self.close()   # an unclosed socket would make the context's term() wait forever
            raise

    def open_socket(self, role: str) -> None:
        """(Re)create the SUB or DEALER socket with its limit, keys and monitor, and connect it.

        A message over ZeroMQ's ``MAXMSGSIZE`` is a protocol error: ZeroMQ drops that
        connection and never reconnects it by itself, so the owner must make a new socket.
        """
        import zmq

        from contract import curve_keys

        ground, cfg = self._ground, self.cfg
        self.close_socket(role)
        if role == "sub":
            sock = bounded_socket(self._ctx, zmq.SUB, ground.hard_frame_limit_bytes)
        else:
            sock = bounded_socket(self._ctx, zmq.DEALER, ground.hard_frame_limit_bytes + _REPLY_LIMIT_SLACK
                                  + ground.replay_request_max * 64)
        setattr(self, role, sock)
        if ground.curve:
            curve_keys.make_client(sock, resolve(self._base_dir, ground.client_secret_key),
                                   resolve(self._base_dir, cfg.server_public_key))
        if role == "sub":
            sock.rcvhwm = 100000
            sock.setsockopt(zmq.SUBSCRIBE, b"")
        else:
            sock.sndhwm = 100
            self.replay_out = None   # its answer, if any, went with the old socket
        mask = zmq.EVENT_DISCONNECTED
        for name in _HANDSHAKE_FAILURES:
            mask |= getattr(zmq, name, 0)
        self.monitors[role] = sock.get_monitor_socket(mask)
        sock.connect(cfg.pub_endpoint if role == "sub" else cfg.replay_endpoint)

    def close_socket(self, role: str) -> None:
        sock, mon = getattr(self, role), self.monitors.pop(role, None)
        if sock is not None:
            try:
                sock.disable_monitor()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
        for s in (mon, sock):
            if s is not None:
                s.close(0)
        setattr(self, role, None)

    def close(self) -> None:
        for role in ("sub", "dealer"):
            self.close_socket(role)

    def on_monitor(self, role: str, event: int) -> None:
        """A dropped connection is re-created (see :meth:`open_socket`); a refused handshake counted."""
        import zmq

        if event == zmq.EVENT_DISCONNECTED:
            self.counters[f"{role}_dropped"] += 1
            self.reopen.add(role)
        elif self._ground.curve:   # a vehicle that cannot prove the pinned key (ZeroMQ's event varies)
            self.counters["unauthenticated"] += 1
        else:   # without CURVE there is nothing to authenticate: a peer that died mid-handshake
            self.counters["handshake_failed"] += 1

    # -- frames -------------------------------------------------------------------------------

    def accept(self, frame: bytes, *, source: str) -> Envelope | None:
        """Validate one frame; queue it for the next commit or count why it was rejected."""
        try:
            env = decode(frame, max_bytes=self._ground.max_frame_bytes)
        except EnvelopeError as exc:
            self.counters[exc.reason] += 1
            return None
        if env.vehicle_id != self.vehicle_id:
            self.counters["wrong_vehicle"] += 1
            return None
        self.counters[f"received_{source}"] += 1
        self.last_message_at = time.monotonic()
        self.pending.append((env, frame))
        if env.stream != self.stream:
            # Frames of another stream are stored under it; a live one means the vehicle now
            # numbers from that journal (a replay answer's stream is checked by on_reply).
            if source == "live":
                self.stream_switch = env.stream
        elif env.seq > self.max_seen:
            self.max_seen = env.seq
        return env

    def send(self, request: Request) -> bool:
        import zmq

        if self.dealer is None:
            return False
        try:
            self.dealer.send(_REQUESTS.pack(request), zmq.NOBLOCK)
            return True
        except zmq.Again:
            return False

    def on_reply(self, body: bytes, flight_log: FlightLog) -> None:
        try:
            reply = _REPLIES.unpack(body)   # every number a vehicle claims is range-checked here
        except PayloadError:
            reply = None
        if reply is None or getattr(reply, "vehicle_id", self.vehicle_id) != self.vehicle_id:
            self.counters["bad_reply"] += 1
            return
        if isinstance(reply, (StatusReply, ReplayReply)):
            if reply.stream != self.stream:
                self.stream_switch = reply.stream
                return   # its cursors are not ours yet; the next status reply is read after the switch
            if reply.last_seq > self.max_seen:
                self.max_seen = reply.last_seq
            self.first_available = reply.first_seq
        if isinstance(reply, StatusReply):
            asked_at = self.status_cursors.popleft() if self.status_cursors else 0
            if reply.last_seq < asked_at:
                # Same stream, yet behind our log: the journal was replaced by a copy of itself.
                # Stored messages are never overwritten.
                self.counters["vehicle_seq_behind_log"] += 1
                log.error("vehicle seq is behind the flight log (journal restored from a copy?)",
                          extra={"fields": {"vehicle": self.vehicle_id, "vehicle_last": reply.last_seq,
                                            "log_contiguous": self.contiguous}})
        elif isinstance(reply, ReplayReply):
            accepted = 0
            for frame in reply.frames:
                accepted += self.accept(frame, source="replay") is not None
            if accepted:
                self.replay_out = None
            else:
                # Nothing usable (the vehicle does not hold what it claimed): ask again only after
                # the timeout, so a false claim costs one request per replay_timeout_s, not a flood.
                self.counters["replay_empty"] += 1
        elif isinstance(reply, AckReply):
            self.ack_confirmed = max(self.ack_confirmed, reply.upto)
        elif isinstance(reply, AckRefused):
            # An ack of the stream we knew reached a vehicle that has since started a new one
            # (data reset): it kept its messages; the new stream is followed once heard.
            self.counters["ack_refused"] += 1
        else:
            self.counters["bad_reply"] += 1

    def switch_stream(self, flight_log: FlightLog) -> None:
        """Follow the vehicle to its new stream; close the flights the old streams left open."""
        new, self.stream_switch = self.stream_switch, None
        if new is None or new == self.stream:
            return
        if self.stream is not None:
            self.counters["stream_changed"] += 1
            log.warning("vehicle started a new stream (journal reset?)",
                        extra={"fields": {"vehicle": self.vehicle_id, "old": self.stream, "new": new}})
        flight_log.note_stream(self.vehicle_id, new)
        self.stream = new
        self.contiguous, self.max_seen = flight_log.cursor(self.vehicle_id, new)
        self.first_available = self.first_applied = None
        self.replay_out = None
        self.ack_confirmed = 0
        self.status_cursors.clear()
        for flight in flight_log.open_flights(self.vehicle_id):
            if flight.stream_id != new:
                abort_flight(flight_log, flight, f"the vehicle started a new stream {new} (data reset?) "
                                                 "before this flight ended", self.counters)


class GroundStation:
    """Ingests every configured vehicle into one flight log until stopped."""

    def __init__(self, cfg: GroundConfig, *, base_dir: str | Path = ".") -> None:
        self.cfg = cfg
        self.base_dir = Path(base_dir)
        self.db_path = log_target(cfg, self.base_dir)   # a file path or a postgresql:// URL
        self.links: dict[str, VehicleLink] = {}
        # With ingest_lease_s: leases claimed, lost (taken while we stalled) and handed on (over our share).
        self.lease_counters: Counter[str] = Counter()
        self._stop = threading.Event()
        self.started = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def counters(self) -> dict[str, dict[str, int]]:
        """Per-vehicle counters (a snapshot; safe to call from another thread)."""
        return {vid: dict(link.counters) for vid, link in list(self.links.items())}

    def cursors(self) -> dict[str, int]:
        return {vid: link.contiguous for vid, link in list(self.links.items())}

    def run(self, *, duration_s: float | None = None) -> dict[str, dict[str, int]]:
        """Run the ingest loop until :meth:`stop` or ``duration_s``; returns the final counters."""
        import zmq
        from zmq.utils.monitor import recv_monitor_message

        try:
            flight_log = FlightLog.open(self.db_path)
        except FlightLogError as exc:
            raise IngestError(str(exc)) from exc
        ctx = zmq.Context()
        poller = zmq.Poller()
        owner: dict[Any, tuple[VehicleLink, str]] = {}
        leases = (LeaseBook(flight_log.db, [v.vehicle_id for v in self.cfg.vehicles], self.cfg.ingest_lease_s)
                  if self.cfg.ingest_lease_s > 0 else None)
        try:
            if leases is None:
                for vcfg in self.cfg.vehicles:
                    self._add_link(vcfg, ctx, flight_log, poller, owner)
            else:
                self._lease_turn(leases, ctx, flight_log, poller, owner)
        except Exception as exc:
            for link in self.links.values():
                link.close()
            flight_log.close()
            ctx.term()
            raise IngestError(f"ground station setup failed: {exc}") from exc
        lease_turn_at = time.monotonic()
        deadline = time.monotonic() + duration_s if duration_s is not None else None
        last_stats = time.monotonic()
        log.info("ground station running", extra={"fields": {"db": redact(self.db_path) if is_url(self.db_path) else str(self.db_path), "vehicles": list(self.links)}})
        self.started.set()
        try:
            while not self._stop.is_set() and (deadline is None or time.monotonic() < deadline):
                budget = self.cfg.commit_batch_max
                events = poller.poll(20)
                while events and budget > 0:
                    for sock, _ in events:
                        if sock not in owner:
                            continue   # closed by a re-creation earlier in this round
                        link, role = owner[sock]
                        if role.startswith("monitor:"):
                            link.on_monitor(role[8:], int(recv_monitor_message(sock)["event"]))
                            continue
                        for _ in range(min(budget, 256)):
                            try:
                                frame = sock.recv(zmq.NOBLOCK)
                            except zmq.Again:
                                break
                            budget -= 1
                            if role == "sub":
                                link.accept(frame, source="live")
                            else:
                                link.on_reply(frame, flight_log)
                    events = poller.poll(0) if budget > 0 else []
                now = time.monotonic()
                for link in self.links.values():
                    for role in sorted(link.reopen):
                        if now - link.reopened_at[role] >= _REOPEN_MIN_INTERVAL_S:
                            self._reopen(poller, owner, link, role, now)
                self._commit(list(self.links.values()), flight_log)
                for link in self.links.values():
                    self._tend(link, flight_log, now)
                if leases is not None and now - lease_turn_at >= self.cfg.ingest_lease_s / 3:
                    lease_turn_at = now
                    self._lease_turn(leases, ctx, flight_log, poller, owner)
                if self.cfg.stats_interval_s and now - last_stats >= self.cfg.stats_interval_s:
                    last_stats = now
                    for link in self.links.values():
                        flight_log.save_rejects(link.vehicle_id, link.counters)
                        log.info("ground station counters", extra={"fields": {"vehicle": link.vehicle_id,
                                                                              "contiguous": link.contiguous,
                                                                              **link.counters}})
        except (FlightLogError, *flight_log.db.errors) as exc:
            # The database is gone (a server restarted, a file's disk failed): stop, so whatever supervises
            # this process starts it again; the vehicles' journals keep everything until it acknowledges.
            raise IngestError(f"flight log failed: {str(exc).strip()}") from exc
        finally:
            for link in self.links.values():
                try:
                    self._commit([link], flight_log)
                    flight_log.save_rejects(link.vehicle_id, link.counters)
                except Exception:  # noqa: BLE001 - closing anyway
                    log.exception("final commit failed")
                link.close()
            if leases is not None:
                try:
                    leases.close()   # everything committed: the others may take the vehicles at once
                except Exception:  # noqa: BLE001 - the leases run out by themselves
                    log.exception("releasing the leases failed")
            flight_log.close()
            ctx.term()
        return self.counters()

    def _add_link(self, vcfg: VehicleLinkConfig, ctx: Any, flight_log: FlightLog, poller: Any,
                  owner: dict[Any, tuple[VehicleLink, str]]) -> None:
        link = VehicleLink(vcfg, self.cfg, self.base_dir, ctx, flight_log)   # resumes from the log's cursor
        self.links[vcfg.vehicle_id] = link
        self._register(poller, owner, link, "sub")
        self._register(poller, owner, link, "dealer")

    def _drop_link(self, vehicle_id: str, flight_log: FlightLog, poller: Any,
                   owner: dict[Any, tuple[VehicleLink, str]]) -> None:
        """Commit what the vehicle's link holds, then close it (its lease is another process's now)."""
        link = self.links.pop(vehicle_id)
        try:
            self._commit([link], flight_log)
            flight_log.save_rejects(vehicle_id, link.counters)
        finally:
            for role in ("sub", "dealer"):
                for sock in (getattr(link, role), link.monitors.get(role)):
                    if sock is not None:
                        poller.unregister(sock)
                        owner.pop(sock, None)
            link.close()

    def _lease_turn(self, leases: LeaseBook, ctx: Any, flight_log: FlightLog, poller: Any,
                    owner: dict[Any, tuple[VehicleLink, str]]) -> None:
        """Follow the leases: drop the vehicles lost or over our share, open those claimed."""
        turn = leases.turn()
        for vid in turn.lost:
            if vid in self.links:
                self._drop_link(vid, flight_log, poller, owner)
        for vid in turn.excess:
            if vid in self.links:
                self._drop_link(vid, flight_log, poller, owner)
            leases.release(vid)
        by_id = {v.vehicle_id: v for v in self.cfg.vehicles}
        for vid in turn.claimed:
            self._add_link(by_id[vid], ctx, flight_log, poller, owner)
        self.lease_counters.update(claimed=len(turn.claimed), lost=len(turn.lost), handed_on=len(turn.excess))
        if turn.claimed or turn.lost or turn.excess:
            log.info("vehicle leases changed", extra={"fields": {
                "holder": leases.holder, "claimed": turn.claimed, "lost": turn.lost, "handed_on": turn.excess,
                "serving": sorted(self.links)}})

    @staticmethod
    def _register(poller: Any, owner: dict[Any, tuple[VehicleLink, str]], link: VehicleLink, role: str) -> None:
        import zmq

        for sock, name in ((getattr(link, role), role), (link.monitors[role], f"monitor:{role}")):
            poller.register(sock, zmq.POLLIN)
            owner[sock] = (link, name)

    def _reopen(self, poller: Any, owner: dict[Any, tuple[VehicleLink, str]], link: VehicleLink, role: str,
                now: float) -> None:
        """Replace a socket ZeroMQ dropped (an oversized frame ends its connection for good)."""
        for sock in (getattr(link, role), link.monitors.get(role)):
            if sock is not None:
                poller.unregister(sock)
                owner.pop(sock, None)
        link.open_socket(role)
        self._register(poller, owner, link, role)
        link.reopen.discard(role)
        link.reopened_at[role] = now
        link.counters[f"{role}_reopened"] += 1
        log.warning("telemetry socket re-created", extra={"fields": {"vehicle": link.vehicle_id, "socket": role}})

    def _commit(self, links: list[VehicleLink], flight_log: FlightLog) -> None:
        """Store what the links hold, follow new streams, move the cursors: one transaction for all
        the vehicles' frames and one for all their cursors (on a server, round trips are the cost)."""
        batches = {link.vehicle_id: link.pending for link in links if link.pending}
        for link in links:
            link.pending = []
        if batches:
            added = flight_log.store_counted([item for batch in batches.values() for item in batch])
            for link in links:
                if link.vehicle_id in batches:
                    link.counters["stored"] += added[link.vehicle_id]
        moves: dict[tuple[str, str], VehicleLink] = {}
        for link in links:
            if link.stream_switch is not None:
                link.switch_stream(flight_log)
            if link.stream is not None and (link.vehicle_id in batches or link.first_available != link.first_applied):
                link.first_applied = link.first_available
                moves[(link.vehicle_id, link.stream)] = link
        if moves:
            cursors = flight_log.advance_many([(vid, stream, link.max_seen, link.first_available)
                                               for (vid, stream), link in moves.items()])
            for key, link in moves.items():
                link.contiguous = cursors[key]

    def _tend(self, link: VehicleLink, flight_log: FlightLog, now: float) -> None:
        """After the commit: ask for status, missing ranges and acknowledge what is committed."""
        cfg = self.cfg
        if now - link.status_sent_at >= cfg.status_interval_s:
            if link.send(StatusRequest()):
                link.status_cursors.append(link.contiguous)
            link.status_sent_at = now
        if link.stream is not None and link.max_seen > link.contiguous:
            stale = link.replay_out is not None and now - link.replay_out[2] >= cfg.replay_timeout_s
            if link.replay_out is None or stale:
                if stale:
                    link.counters["replay_timeouts"] += 1
                # A claimed last seq is chased one window at a time: a false claim of 2^62 costs
                # one bounded request per timeout, and live frames keep flowing meanwhile.
                target = min(link.max_seen, link.contiguous + cfg.replay_window_max)
                gaps = flight_log.missing(link.vehicle_id, link.stream, link.contiguous + 1, target, limit=1)
                if gaps:
                    lo, hi = gaps[0]
                    hi = min(hi, lo + cfg.replay_request_max - 1)
                    if link.send(ReplayRequest(lo, hi)):
                        link.replay_out = (lo, hi, now)
                        link.counters["replay_requests"] += 1
        if link.contiguous > link.ack_confirmed and now - link.ack_sent_at >= cfg.ack_interval_s:
            if link.send(AckRequest(link.contiguous, link.stream)):
                link.ack_sent_at = now
        self._abort_silent(link, flight_log, now)

    def _abort_silent(self, link: VehicleLink, flight_log: FlightLog, now: float) -> None:
        """Close the vehicle's open flights once nothing has come from it for flight_abort_timeout_s.

        A vehicle killed mid-flight never sends flight_end; without this its flight stayed open
        for ever and post-flight reflection never ran. Checked once per status interval.
        """
        timeout = self.cfg.flight_abort_timeout_s
        if not timeout > 0 or now - link.last_message_at < timeout:
            return
        if now - link.abort_checked_at < self.cfg.status_interval_s:
            return
        link.abort_checked_at = now
        for flight in flight_log.open_flights(link.vehicle_id):
            abort_flight(flight_log, flight, f"no message from the vehicle for {timeout:g} s", link.counters)

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
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack

from ground_station.flight_log import FlightLog
from ground_station.settings import GroundConfig, VehicleLinkConfig, resolve
from contract.envelope import Envelope, EnvelopeError, decode

log = logging.getLogger("aerie.ground")

# Replies on the DEALER socket are small except replay batches; cap them generously.
_REPLY_LIMIT_SLACK = 1 << 20


class IngestError(RuntimeError):
    """The ground station could not set up its sockets or flight log."""


class VehicleLink:
    """Sockets and cursors of one vehicle; used only by the ground station's thread."""

    def __init__(self, cfg: VehicleLinkConfig, ground: GroundConfig, base_dir: Path, ctx: Any,
                 flight_log: FlightLog) -> None:
        import zmq

        self.cfg = cfg
        self.vehicle_id = cfg.vehicle_id
        self._ground = ground
        self.counters: Counter[str] = Counter(flight_log.rejects(cfg.vehicle_id))
        self.sub = ctx.socket(zmq.SUB)
        self.dealer = ctx.socket(zmq.DEALER)
        self.monitors: list[Any] = []
        try:
            self._setup(cfg, ground, base_dir, flight_log)
        except BaseException:
            self.close()   # an unclosed socket would make the context's term() wait forever
            raise

    def _setup(self, cfg: VehicleLinkConfig, ground: GroundConfig, base_dir: Path, flight_log: FlightLog) -> None:
        import zmq

        from contract import curve_keys

        for sock in (self.sub, self.dealer):
            sock.linger = 0
            if ground.curve:
                curve_keys.make_client(sock, resolve(base_dir, ground.client_secret_key),
                                       resolve(base_dir, cfg.server_public_key))
        self.sub.setsockopt(zmq.MAXMSGSIZE, ground.hard_frame_limit_bytes)
        self.sub.rcvhwm = 100000
        self.dealer.setsockopt(zmq.MAXMSGSIZE, ground.hard_frame_limit_bytes + _REPLY_LIMIT_SLACK
                               + ground.replay_request_max * 64)
        self.dealer.sndhwm = 100
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        mask = 0
        for name in ("EVENT_HANDSHAKE_FAILED_AUTH", "EVENT_HANDSHAKE_FAILED_PROTOCOL",
                     "EVENT_HANDSHAKE_FAILED_NO_DETAIL"):
            mask |= getattr(zmq, name, 0)
        if mask:
            self.monitors = [self.sub.get_monitor_socket(mask), self.dealer.get_monitor_socket(mask)]
        self.sub.connect(cfg.pub_endpoint)
        self.dealer.connect(cfg.replay_endpoint)
        self.contiguous, self.max_seen = flight_log.cursor(cfg.vehicle_id)
        self.first_available: int | None = None   # the vehicle holds no seq below this
        self.first_applied: int | None = None
        self.pending: list[tuple[Envelope, bytes]] = []
        self.replay_out: tuple[int, int, float] | None = None   # (from, to, sent_at)
        self.status_sent_at = 0.0
        self.ack_confirmed = 0
        self.ack_sent_at = 0.0

    def close(self) -> None:
        for sock in (self.sub, self.dealer):
            try:
                sock.disable_monitor()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
        for sock in (*self.monitors, self.sub, self.dealer):
            sock.close(0)

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
        self.pending.append((env, frame))
        if env.seq > self.max_seen:
            self.max_seen = env.seq
        return env

    def send(self, body: dict[str, Any]) -> bool:
        import zmq

        try:
            self.dealer.send(msgpack.packb(body, use_bin_type=True), zmq.NOBLOCK)
            return True
        except zmq.Again:
            return False

    def on_reply(self, body: bytes, flight_log: FlightLog) -> None:
        try:
            reply = msgpack.unpackb(body, raw=False)
        except Exception:  # noqa: BLE001 - untrusted input
            reply = None
        if not isinstance(reply, dict) or reply.get("vehicle_id", self.vehicle_id) != self.vehicle_id:
            self.counters["bad_reply"] += 1
            return
        op = reply.get("op")
        last, first = reply.get("last_seq"), reply.get("first_seq")
        if isinstance(last, int) and not isinstance(last, bool) and last > self.max_seen:
            self.max_seen = last
        if isinstance(first, int) and not isinstance(first, bool):
            self.first_available = first
        if op == "status":
            if isinstance(last, int) and last < self.contiguous:
                # The vehicle's journal is behind our log: it was wiped or replaced, and its
                # seqs now collide with stored ones. Stored messages are never overwritten.
                self.counters["vehicle_seq_behind_log"] += 1
                log.error("vehicle seq is behind the flight log (journal reset?)",
                          extra={"fields": {"vehicle": self.vehicle_id, "vehicle_last": last,
                                            "log_contiguous": self.contiguous}})
        elif op == "replay":
            frames = reply.get("frames")
            accepted = 0
            for frame in frames if isinstance(frames, list) else []:
                if isinstance(frame, bytes):
                    accepted += self.accept(frame, source="replay") is not None
                else:
                    self.counters["malformed"] += 1
            if accepted or not frames:
                # An answer with nothing usable waits for the timeout before asking again.
                self.replay_out = None
        elif op == "ack":
            upto = reply.get("upto")
            if isinstance(upto, int) and not isinstance(upto, bool):
                self.ack_confirmed = max(self.ack_confirmed, upto)
        else:
            self.counters["bad_reply"] += 1


class GroundStation:
    """Ingests every configured vehicle into one flight log until stopped."""

    def __init__(self, cfg: GroundConfig, *, base_dir: str | Path = ".") -> None:
        self.cfg = cfg
        self.base_dir = Path(base_dir)
        self.db_path = resolve(self.base_dir, cfg.db_path)
        self.links: dict[str, VehicleLink] = {}
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

        ctx = zmq.Context()
        flight_log = FlightLog.open(self.db_path)
        try:
            for vcfg in self.cfg.vehicles:
                self.links[vcfg.vehicle_id] = VehicleLink(vcfg, self.cfg, self.base_dir, ctx, flight_log)
        except Exception as exc:
            for link in self.links.values():
                link.close()
            flight_log.close()
            ctx.term()
            raise IngestError(f"ground station setup failed: {exc}") from exc
        poller = zmq.Poller()
        owner: dict[Any, tuple[VehicleLink, str]] = {}
        for link in self.links.values():
            for sock, role in ((link.sub, "sub"), (link.dealer, "dealer"), *((m, "monitor") for m in link.monitors)):
                poller.register(sock, zmq.POLLIN)
                owner[sock] = (link, role)
        deadline = time.monotonic() + duration_s if duration_s is not None else None
        last_stats = time.monotonic()
        log.info("ground station running", extra={"fields": {"db": str(self.db_path), "vehicles": list(self.links)}})
        self.started.set()
        try:
            while not self._stop.is_set() and (deadline is None or time.monotonic() < deadline):
                budget = self.cfg.commit_batch_max
                events = poller.poll(20)
                while events and budget > 0:
                    for sock, _ in events:
                        link, role = owner[sock]
                        if role == "monitor":
                            recv_monitor_message(sock)
                            link.counters["unauthenticated"] += 1
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
                    self._tend(link, flight_log, now)
                if self.cfg.stats_interval_s and now - last_stats >= self.cfg.stats_interval_s:
                    last_stats = now
                    for link in self.links.values():
                        flight_log.save_rejects(link.vehicle_id, link.counters)
                        log.info("ground station counters", extra={"fields": {"vehicle": link.vehicle_id,
                                                                              "contiguous": link.contiguous,
                                                                              **link.counters}})
        finally:
            for link in self.links.values():
                try:
                    self._commit(link, flight_log)
                    flight_log.save_rejects(link.vehicle_id, link.counters)
                except Exception:  # noqa: BLE001 - closing anyway
                    log.exception("final commit failed")
                link.close()
            flight_log.close()
            ctx.term()
        return self.counters()

    def _commit(self, link: VehicleLink, flight_log: FlightLog) -> None:
        batch, link.pending = link.pending, []
        if batch:
            link.counters["stored"] += flight_log.store(batch)
        if batch or link.first_available != link.first_applied:
            link.first_applied = link.first_available
            link.contiguous = flight_log.advance(link.vehicle_id, seen=link.max_seen,
                                                 first_available=link.first_available)

    def _tend(self, link: VehicleLink, flight_log: FlightLog, now: float) -> None:
        """Commit, then ask for status, missing ranges and acknowledge what is committed."""
        cfg = self.cfg
        self._commit(link, flight_log)
        if now - link.status_sent_at >= cfg.status_interval_s:
            link.send({"op": "status"})
            link.status_sent_at = now
        if link.max_seen > link.contiguous:
            stale = link.replay_out is not None and now - link.replay_out[2] >= cfg.replay_timeout_s
            if link.replay_out is None or stale:
                if stale:
                    link.counters["replay_timeouts"] += 1
                gaps = flight_log.missing(link.vehicle_id, link.contiguous + 1, link.max_seen, limit=1)
                if gaps:
                    lo, hi = gaps[0]
                    hi = min(hi, lo + cfg.replay_request_max - 1)
                    if link.send({"op": "replay", "from": lo, "to": hi}):
                        link.replay_out = (lo, hi, now)
                        link.counters["replay_requests"] += 1
        if link.contiguous > link.ack_confirmed and now - link.ack_sent_at >= cfg.ack_interval_s:
            if link.send({"op": "ack", "upto": link.contiguous}):
                link.ack_sent_at = now

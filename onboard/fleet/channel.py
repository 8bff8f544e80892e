# Over 400 lines: one channel: its sockets, the peers it hears and what it publishes share one thread's state, and the separation it serves needs them read together.
"""The fleet channel: peer-to-peer ZeroMQ PUB/SUB between the supervisors of one fleet.

Why peer to peer and not through the ground station: separation must not
depend on the one link that is most often lost (the ground link, over radio
and a ground station that may be restarted); members a few hundred metres
apart hear each other directly, as ADS-B and Remote ID broadcast. A silent
channel is safe anyway: after ``fleet.channel_timeout_s`` the bridge flies
the vehicle on its own altitude layer. The ground station is no relay, so a
fleet of N costs N publishers and N x (N-1) subscriptions, which is nothing
at a few reports a second for the fleets flown here.

One thread owns every socket (ZeroMQ sockets are not thread-safe): it
sends this vehicle's report at ``report_rate_hz`` and, between sends, reads
each peer's SUB socket. Every frame is untrusted: size-bounded by ZeroMQ
(``contract.bounded_socket``), then decoded and range-checked
(:func:`contract.fleet_report.unpack`; NaN refused); a rejected frame is
counted by its reason and the thread goes on. A frame over the size bound
makes ZeroMQ drop that peer's connection, which never comes back by itself,
so the socket is re-created (as ``ground_station.ingest`` does).

A member holding a valid key can still flood: each peer's frames are rate
limited before they are decoded (``peer_max_frames_hz``) and its findings
frames again before they are taken (``peer_max_findings_hz``, since taking
one is the costly part), with what is held back counted (``rate_limited``,
``findings_rate_limited``; they show as seq gaps too). What a read
delivers, the latest report of each member, goes to ``deliver`` (the bridge's
``update_traffic``) in one batch; nothing is delivered on a quiet poll, so a
silent channel stays silent for the bridge's timeout.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from dataclasses import replace
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from contract.bounded_socket import bounded_socket
from contract.rate_limit import TokenBucket
from contract.fleet_discovery import FleetDiscovery
from contract.fleet_frame import pack, unpack
from contract.fleet_report import MAX_REPORT_AGE_S, FleetReport
from contract.payloads.base import PayloadError
from firmware_bridge.fleet_picture import TrafficReport
from onboard.fleet.settings import FleetChannelConfig, FleetPeer

log = logging.getLogger("aerie.fleet")

# A dropped peer socket is re-created, but not sooner than this after the last time; the wait doubles
# with every re-creation that no accepted frame follows (a stranger holding the wrong key at the peer's
# address costs one re-creation and one log line per `peer_reopen_max_interval_s`, not two a second).
REOPEN_MIN_INTERVAL_S = 0.5
# The loop wakes at least this often to notice close().
POLL_MAX_MS = 100
# Frames read from one socket per wake-up before the others get their turn.
READ_BURST = 256


def position_from_state(state: Any, member_id: int, now: float | None = None) -> TrafficReport | None:
    """This vehicle as the others will see it, from a ``VehicleState`` (taken by shape): the same record
    the bridge gets of them (``age_s``: how old the autopilot's report already is). None while any of
    it is unknown or too old to tell."""
    now = time.monotonic() if now is None else now
    values = [float(getattr(state, k, math.nan)) for k in ("lat", "lon", "alt_amsl_m", "vn_m_s", "ve_m_s", "vd_m_s")]
    age = now - float(getattr(state, "last_update_t", math.nan))
    if not all(math.isfinite(v) for v in values) or not age <= MAX_REPORT_AGE_S:  # NaN fails too
        return None
    return TrafficReport(member_id, *values, age_s=max(0.0, age))


def traffic_of(r: FleetReport) -> TrafficReport:
    return TrafficReport(r.member_id, r.lat, r.lon, r.alt_amsl_m, r.vn_m_s, r.ve_m_s, r.vd_m_s, r.age_s)


class _Peer:
    """One other member's SUB socket and its monitor; re-created when ZeroMQ drops it."""

    def __init__(self, cfg: FleetPeer, frames: TokenBucket, findings: TokenBucket) -> None:
        self.cfg = cfg
        self.frames = frames        # every frame, before it is decoded
        self.findings = findings    # findings frames, before they are taken
        self.sock: Any = None
        self.monitor: Any = None
        self.last_seq = 0
        self.reopened_at = -math.inf
        self.reopen_interval = REOPEN_MIN_INTERVAL_S  # the wait before the next re-creation
        self.dropped = False


class FleetChannel:
    """``start()``, then reports flow both ways until ``close()``; ``counters`` say what happened.

    ``own_position`` is asked at every send (None: nothing is sent, the others' picture of this
    vehicle times out); ``deliver`` gets each batch of the others' reports and returns why any was
    rejected (``FlightBridge.update_traffic``). With ``fleet_channel.share_findings``,
    ``own_findings`` is asked every ``1 / findings_rate_hz`` seconds for this vehicle's latest
    findings (None: nothing new to say) and ``take_findings`` gets each finding frame of the others.
    All of them run on the channel's thread. ``clock`` drives the per-peer rate limits and the waits between
    re-creations of a dropped peer socket (tests move it).
    """

    def __init__(self, cfg: FleetChannelConfig, member_id: int, own_position: Callable[[], TrafficReport | None],
                 deliver: Callable[[list[TrafficReport]], Iterable[str] | None], *, data_dir: str | Path = ".",
                 own_findings: Callable[[], FleetDiscovery | None] | None = None,
                 take_findings: Callable[[FleetDiscovery], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self.member_id = member_id
        self._clock = clock
        self._own_position = own_position
        self._deliver = deliver
        share = cfg.share_findings
        self._own_findings = own_findings if share else None
        self._take_findings = take_findings if share else None
        self._next_findings = 0.0  # when this vehicle's findings are next due (monotonic)
        self._data_dir = Path(data_dir).expanduser()
        self._peers = [_Peer(p, TokenBucket(cfg.peer_max_frames_hz, max(1.0, cfg.peer_max_frames_hz), clock),
                             TokenBucket(cfg.peer_max_findings_hz, max(1.0, 2 * cfg.peer_max_findings_hz), clock))
                       for p in cfg.peers]
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._counters: Counter[str] = Counter()
        self._heard: dict[int, int] = {}  # member id -> reports accepted from it
        self.endpoint = ""  # where the PUB socket is bound (the resolved address of a wildcard port)
        self._seq = 0

    # -- public ----------------------------------------------------------------------------
    def start(self, timeout_s: float = 10.0) -> "FleetChannel":
        self._thread = threading.Thread(target=self._main, name="fleet-channel", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            self.close()
            raise RuntimeError(f"fleet channel did not start within {timeout_s:.0f} s")
        if self._error is not None:
            self._thread.join(timeout_s)
            raise RuntimeError(f"fleet channel: {self._error}") from self._error
        log.info("fleet channel up", extra={"fields": {"event": "fleet_channel_up", "member": self.member_id,
                                                      "endpoint": self.endpoint, "peers": len(self._peers),
                                                      "curve": self.cfg.curve}})
        return self

    def close(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def counters(self) -> dict[str, Any]:
        """A snapshot: sent, received, accepted, rejected_<reason>, peer_dropped ..., and heard per member."""
        with self._lock:
            return {**self._counters, "heard": {str(k): v for k, v in sorted(self._heard.items())}}

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the thread ------------------------------------------------------------------------
    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counters[key] += n

    def _main(self) -> None:
        import zmq

        ctx = zmq.Context()
        auth = pub = None
        try:
            try:
                auth, pub = self._open(ctx)
            except BaseException as exc:  # reported by start()
                self._error = exc
                return
            finally:
                self._ready.set()
            self._loop(pub)
        finally:
            for peer in self._peers:
                self._close_peer(peer)
            if pub is not None:
                pub.close(0)
            if auth is not None:
                auth.stop()
            ctx.term()

    def _path(self, p: str) -> Path:
        path = Path(p).expanduser()
        return path if path.is_absolute() else self._data_dir / path

    def _open(self, ctx: Any) -> tuple[Any, Any]:
        import zmq

        from contract import curve_keys

        auth = curve_keys.start_authenticator(ctx, self._path(self.cfg.authorized_keys_dir)) if self.cfg.curve else None
        try:
            pub = bounded_socket(ctx, zmq.PUB, self.cfg.max_message_bytes)
            try:
                pub.sndhwm = 16  # a report more than a few periods old is worth nothing; never queue many
                if self.cfg.curve:
                    curve_keys.make_server(pub, self._path(self.cfg.secret_key))
                pub.bind(self.cfg.pub_endpoint)
                self.endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
                for peer in self._peers:
                    self._open_peer(ctx, peer)
            except BaseException:
                pub.close(0)
                raise
        except BaseException:
            if auth is not None:
                auth.stop()
            raise
        return auth, pub

    def _open_peer(self, ctx: Any, peer: _Peer) -> None:
        import zmq

        from contract import curve_keys

        self._close_peer(peer)
        sock = bounded_socket(ctx, zmq.SUB, self.cfg.max_message_bytes)
        peer.sock = sock
        if self.cfg.curve:
            curve_keys.make_client(sock, self._path(self.cfg.secret_key), self._path(peer.cfg.public_key))
        sock.rcvhwm = 64
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        peer.monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        sock.connect(peer.cfg.endpoint)
        peer.dropped = False

    @staticmethod
    def _close_peer(peer: _Peer) -> None:
        if peer.sock is not None:
            try:
                peer.sock.disable_monitor()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
        for s in (peer.monitor, peer.sock):
            if s is not None:
                s.close(0)
        peer.sock = peer.monitor = None

    def _loop(self, pub: Any) -> None:
        period = 1.0 / self.cfg.report_rate_hz
        next_send = time.monotonic()
        while not self._stop.is_set():
            try:
                next_send = self._turn(pub, next_send, period)
            except Exception:  # noqa: BLE001 - whatever went wrong, the channel goes on (after a breath)
                self._count("loop_errors")
                log.exception("fleet channel loop")
                self._stop.wait(POLL_MAX_MS / 1000.0)

    def _turn(self, pub: Any, next_send: float, period: float) -> float:
        """One wake-up: send when due, read what came, hand it over, re-create dropped peers."""
        import zmq

        now = time.monotonic()
        if self._own_findings is not None and now >= self._next_findings:
            self._next_findings = now + 1.0 / self.cfg.findings_rate_hz
            self._send_findings(pub)
        if now >= next_send:
            self._send(pub)
            next_send += period
            if next_send < now:  # fell behind (stalled machine): resync, never burst
                next_send = now + period
        poller = zmq.Poller()
        owner: dict[Any, tuple[_Peer, bool]] = {}
        for peer in self._peers:
            if peer.sock is not None:
                for s, is_monitor in ((peer.sock, False), (peer.monitor, True)):
                    poller.register(s, zmq.POLLIN)
                    owner[s] = (peer, is_monitor)
        wait_ms = int(max(0.0, min(next_send - time.monotonic(), POLL_MAX_MS / 1000.0)) * 1000)
        events: list = []
        if not owner:
            self._stop.wait(wait_ms / 1000.0)
        else:
            events = poller.poll(wait_ms)
        batch: dict[int, FleetReport] = {}
        for sock, _ in events:
            peer, is_monitor = owner[sock]
            if is_monitor:
                self._on_monitor(peer)
            else:
                self._read(peer, batch)
        if batch:
            self._hand_over(list(batch.values()))
        self._reopen_dropped(pub)
        return next_send

    def _send(self, pub: Any) -> None:
        pos = self._ask(self._own_position, "own position")
        if pos is None:
            self._count("not_sent_unknown_position")
            return
        # (a report beyond the wire's bounds, e.g. a speed, is not sent: the others could not read it)
        self._publish(pub, "sent", "not_sent", lambda seq: FleetReport(
            self.member_id, seq, pos.lat, pos.lon, pos.alt_amsl_m, pos.vn_m_s, pos.ve_m_s, pos.vd_m_s, pos.age_s))

    def _send_findings(self, pub: Any) -> None:
        found = self._ask(self._own_findings, "own findings")
        if found is not None:
            self._publish(pub, "findings_sent", "findings_not_sent",
                          lambda seq: replace(found, member_id=self.member_id, seq=seq))

    @staticmethod
    def _ask(source: Callable[[], Any] | None, what: str) -> Any:
        try:
            return source() if source is not None else None
        except Exception:  # noqa: BLE001 - the vehicle's state is someone else's; never end the channel
            log.exception("%s for the fleet channel failed", what)
            return None

    def _publish(self, pub: Any, sent: str, not_sent: str, payload_at: Callable[[int], Any]) -> None:
        """One frame with the next seq (reports and findings share one count, so gaps show losses of both)."""
        import zmq

        self._seq += 1
        try:
            frame = pack(payload_at(self._seq))
        except PayloadError as exc:
            self._count(f"{not_sent}_{exc.reason}")
            return
        if len(frame) > self.cfg.max_message_bytes:  # the peers' bound is this one: they would drop the link
            self._count(f"{not_sent}_oversized")
            return
        try:
            pub.send(frame, zmq.NOBLOCK)
            self._count(sent)
        except zmq.Again:
            self._count("send_dropped")

    def _on_monitor(self, peer: _Peer) -> None:
        from zmq.utils.monitor import recv_monitor_message

        try:
            recv_monitor_message(peer.monitor)
        except Exception:  # noqa: BLE001 - a monitor frame we cannot read still means "look at this peer"
            pass
        peer.dropped = True
        self._count("peer_dropped")

    def _reopen_dropped(self, pub: Any) -> None:
        now = self._clock()
        for peer in self._peers:
            if peer.dropped and now - peer.reopened_at >= peer.reopen_interval:
                peer.reopened_at = now
                wait = peer.reopen_interval
                peer.reopen_interval = min(2.0 * wait, self.cfg.peer_reopen_max_interval_s)
                try:
                    self._open_peer(pub.context, peer)
                    self._count("peer_reopened")
                    log.warning("fleet peer socket re-created", extra={"fields": {
                        "peer": peer.cfg.endpoint, "next_after_s": peer.reopen_interval}})
                except Exception:  # noqa: BLE001 - tried again after the interval
                    log.exception("re-creating the fleet peer socket %s", peer.cfg.endpoint)

    def _read(self, peer: _Peer, batch: dict[int, FleetReport]) -> None:
        import zmq

        for _ in range(READ_BURST):
            try:
                frame = peer.sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            except zmq.ZMQError:
                peer.dropped = True
                return
            self._count("received")
            if not peer.frames.allow():
                self._reject(peer, "rate_limited", f"more than {self.cfg.peer_max_frames_hz:g} frames a second",
                             counter="rate_limited")
                continue
            try:  # (a frame over the size bound never gets here: ZeroMQ drops the connection instead)
                payload = unpack(frame, max_bytes=self.cfg.max_message_bytes)
            except PayloadError as exc:
                self._reject(peer, exc.reason, str(exc))
                continue
            except Exception as exc:  # noqa: BLE001 - whatever a hostile frame does, the thread goes on
                self._reject(peer, "malformed", f"{type(exc).__name__}: {exc}")
                continue
            if payload.member_id == self.member_id:
                self._reject(peer, "own_id", f"a peer reports as this vehicle, member {payload.member_id}")
                continue
            if peer.cfg.member_id and payload.member_id != peer.cfg.member_id:
                self._reject(peer, "wrong_member", f"member {payload.member_id} on the socket of member "
                                                   f"{peer.cfg.member_id}")
                continue
            with self._lock:
                if payload.seq > peer.last_seq + 1 and peer.last_seq:
                    self._counters["seq_gap"] += payload.seq - peer.last_seq - 1  # frames that never came
                elif payload.seq <= peer.last_seq:
                    self._counters["seq_restart"] += 1  # a restarted peer counts from 1 again: still news
                peer.last_seq = payload.seq
                if isinstance(payload, FleetDiscovery) and not peer.findings.allow():
                    self._counters["findings_rate_limited"] += 1
                    continue
                peer.reopen_interval = REOPEN_MIN_INTERVAL_S  # the peer is back: a later drop is news again
                if isinstance(payload, FleetDiscovery):
                    self._counters["findings_accepted"] += 1
                else:
                    self._counters["accepted"] += 1
                    self._heard[payload.member_id] = self._heard.get(payload.member_id, 0) + 1
            if isinstance(payload, FleetReport):
                batch[payload.member_id] = payload
            elif self._take_findings is not None:
                self._hand_findings(payload)

    def _reject(self, peer: _Peer, reason: str, why: str, counter: str = "") -> None:
        counter = counter or f"rejected_{reason}"
        with self._lock:
            first = self._counters[counter] == 0
            self._counters[counter] += 1
        if first:  # one line per reason: a hostile peer must not flood the log
            log.warning("fleet report rejected: %s", why, extra={"fields": {"event": "fleet_report_rejected",
                                                                           "peer": peer.cfg.endpoint,
                                                                           "reason": reason}})

    def _hand_findings(self, found: FleetDiscovery) -> None:
        try:
            self._take_findings(found)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - the agent's side must not end the channel
            self._count("findings_take_failed")
            log.exception("handing fleet findings to the agent failed")

    def _hand_over(self, reports: list[FleetReport]) -> None:
        try:
            refused = tuple(self._deliver([traffic_of(r) for r in reports]) or ())
        except Exception:  # noqa: BLE001 - the bridge's problem must not end the channel
            self._count("deliver_failed")
            log.exception("handing fleet reports to the bridge failed")
            return
        self._count("delivered", len(reports) - len(refused))
        if refused:
            self._count("refused_by_bridge", len(refused))

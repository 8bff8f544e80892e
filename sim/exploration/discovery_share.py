"""Sharing discoveries between vehicles over ZeroMQ: one PUB out, one SUB per peer in.

PUB/SUB because a vehicle must never block on a peer that is out of radio
range: a message to nobody is dropped, and the next one still goes. The PUB
end is an XPUB so that a vehicle can see its peer's subscription arrive
before take-off (ZeroMQ's "slow joiner": frames sent before that are lost). Messages
are deltas (what is new since the last one), with a full snapshot every
`full_every` messages so that a peer that joined late or lost frames catches
up; merging is idempotent, so the overlap costs nothing but bytes.

Nothing from the link is trusted: a frame that does not decode, comes from
another team or echoes this vehicle is counted under its reason and dropped.
The share is polled from the agent's own loop (no thread), so the view is
only ever touched by one thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from contract.bounded_socket import bounded_socket
from sim.exploration.discovery_wire import MAX_FRAME_BYTES, decode, encode
from sim.exploration.exploration_view import ExplorationView, Fix
from contract.envelope import EnvelopeError


# Largest subscription message the XPUB reads (peers subscribe to everything: b"").
MAX_SUBSCRIPTION_BYTES = 1024


@dataclass
class ShareCounters:
    """What came in and what was refused, by reason."""

    sent: int = 0
    merged: int = 0
    gaps: int = 0  # frames a peer sent that never arrived (seq jumped)
    refused: dict[str, int] = field(default_factory=dict)

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())


class DiscoveryShare:
    """This vehicle's end of the discovery link; feeds an `ExplorationView`."""

    def __init__(self, view: ExplorationView, *, team: str, bind: str = "tcp://127.0.0.1:*",
                 full_every: int = 10) -> None:
        self.view = view
        self.team = team
        self.full_every = max(1, full_every)
        self.counters = ShareCounters()
        self._bind = bind
        self._seq = 0
        self._last_seq: dict[str, int] = {}
        self._subscribers = 0
        self._ctx = None
        self._pub = None
        self._sub = None
        self.endpoint = ""

    def start(self) -> "DiscoveryShare":
        import zmq

        self._ctx = zmq.Context()
        try:
            # An XPUB reads subscription messages (a few bytes); a peer sending more is dropped.
            self._pub = bounded_socket(self._ctx, zmq.XPUB, MAX_SUBSCRIPTION_BYTES)
            self._pub.setsockopt(zmq.XPUB_VERBOSE, 1)  # one subscription message per peer, not per topic
            self._pub.bind(self._bind)
            self.endpoint = self._pub.getsockopt_string(zmq.LAST_ENDPOINT)
            self._sub = bounded_socket(self._ctx, zmq.SUB, MAX_FRAME_BYTES)
            self._sub.setsockopt(zmq.SUBSCRIBE, b"")
        except BaseException:
            self.close()
            raise
        return self

    def connect(self, endpoint: str) -> None:
        """Listen to a peer's PUB endpoint (call once per peer)."""
        self._sub.connect(endpoint)

    def close(self) -> None:
        for s in (self._pub, self._sub):
            if s is not None:
                s.close(0)
        if self._ctx is not None:
            self._ctx.term()
        self._pub = self._sub = self._ctx = None

    def __enter__(self) -> "DiscoveryShare":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_for_subscribers(self, count: int = 1, timeout_s: float = 5.0) -> bool:
        """Block until `count` peers have subscribed to this vehicle's discoveries (before take-off)."""
        import zmq

        deadline = time.monotonic() + timeout_s
        while self._subscribers < count:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._pub.poll(int(min(left, 0.05) * 1000) + 1, zmq.POLLIN):
                if self._pub.recv()[:1] == b"\x01":
                    self._subscribers += 1
        return True

    # --- out -----------------------------------------------------------------------
    def publish(self, step: int, pose: Fix, claim: Fix | None) -> None:
        """Send this vehicle's news (a full snapshot every `full_every` messages)."""
        import zmq

        self._seq += 1
        full = self._seq % self.full_every == 1 or self.full_every == 1
        frame = encode(self.view.news(step, pose, claim, full=full), team=self.team, seq=self._seq)
        try:
            self._pub.send(frame, zmq.NOBLOCK)
            self.counters.sent += 1
        except zmq.Again:
            pass  # no peer or a full queue: the next full snapshot repairs it

    # --- in ------------------------------------------------------------------------
    def drain(self) -> int:
        """Merge every frame waiting on the socket; returns how many were merged."""
        import zmq

        merged = 0
        while True:
            try:
                frame = self._sub.recv(zmq.NOBLOCK)
            except zmq.Again:
                return merged
            merged += self.accept(frame)

    def accept(self, frame: bytes) -> int:
        """Decode and merge one frame: 1 if merged, 0 if refused (and counted)."""
        try:
            seq, d = decode(frame, team=self.team)
        except EnvelopeError as exc:
            self.counters.refuse(exc.reason)
            return 0
        if d.vehicle_id == self.view.vehicle_id:
            self.counters.refuse("own_echo")
            return 0
        last = self._last_seq.get(d.vehicle_id, 0)
        if seq > last + 1 and last:
            self.counters.gaps += seq - last - 1
        self._last_seq[d.vehicle_id] = max(last, seq)
        self.view.merge(d)
        self.counters.merged += 1
        return 1

    def wait_for(self, peer_id: str, step: int, timeout_s: float = 2.0) -> bool:
        """Drain until `peer_id` has reported `step` (lock-step runs); False on timeout."""
        import zmq

        deadline = time.monotonic() + timeout_s
        while self.view.peer_step(peer_id) < step:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._sub.poll(int(min(left, 0.05) * 1000) + 1, zmq.POLLIN):
                self.drain()
        return True

"""Fault 36.4: a fleet member (valid key) publishing reports and 96-item findings at ~5 kHz was read,
decoded and taken in full: agent steps of 1–23 ms grew to 0.5–1.3 s during the flood, and since the
findings kept per member never expired, later missions stayed slow after it stopped.

Each peer's frames are now rate limited before decoding and its findings frames again before they are
taken, both counted; what a member shared expires when it stops saying it. Real parts: the member a
raw ZeroMQ PUB on loopback sending as fast as it can, read by a real fleet channel on its own thread
that hands findings to the vehicle's `FleetFindings`. The channel's and the findings' clock is a
synthetic one, moved by the test: the limits are checked exactly, not against the wall clock.
"""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from contract.bounded_socket import bounded_socket
from contract.fleet_discovery import MAX_ITEMS, FleetDiscovery, LandmarkFinding, LookedFrom, SignRead
from contract.fleet_frame import pack
from contract.fleet_report import FleetReport
from common.geodesy import GeoPoint
from common.typed_config import ConfigError, build
from onboard.fleet.channel import FleetChannel
from onboard.fleet.findings import FleetFindings
from onboard.fleet.settings import FleetChannelConfig, FleetPeer

HOME = GeoPoint(60.1700, 24.9400)
HANG_GUARD_S = 60.0


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _findings(seq: int) -> FleetDiscovery:
    """A full frame (3 x 32 items), every one new, as a hostile member would invent them."""
    return FleetDiscovery(7, seq, "flood",
                          landmarks=tuple(LandmarkFinding(f"L{seq}-{i}", 60.17 + i * 1e-4, 24.94, 5.0, 3)
                                          for i in range(MAX_ITEMS)),
                          signs=tuple(SignRead(f"S{seq}-{i}", 60.17, 24.94 + i * 1e-4) for i in range(MAX_ITEMS)),
                          looked_from=tuple(LookedFrom(60.17 + i * 2e-4, 24.941) for i in range(MAX_ITEMS)))


def _wait(pred, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S   # a hang guard, not a timing claim
    while not pred():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_flooding_member_is_rate_limited_and_what_it_shared_expires() -> None:
    cfg = FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", curve=False)
    clock = Clock()
    findings = FleetFindings(1, max_age_s=cfg.findings_max_age_s, clock=clock)
    ctx = zmq.Context()
    pub = bounded_socket(ctx, zmq.PUB, 1024)
    pub.sndhwm = 100_000
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    delivered: list[int] = []
    ch = FleetChannel(FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", peers=(FleetPeer(endpoint, member_id=7),),
                                         curve=False), 1, lambda: None, lambda batch: delivered.append(len(batch)),
                      take_findings=findings.take, clock=clock)
    stop = threading.Event()

    def flood() -> None:
        """Every findings frame new (a replayed one adds nothing kept, and would make the count below depend
        on where the flood stood when the clock moved)."""
        seq = 1
        while not stop.is_set():
            pub.send(pack(_findings(seq)))
            pub.send(pack(FleetReport(7, seq + 1, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0)))
            seq += 2

    sender = threading.Thread(target=flood, daemon=True)
    try:
        ch.start()
        sender.start()
        _wait(lambda: ch.counters().get("rate_limited", 0) >= 500, "the flood never reached the rate limit")
        first = ch.counters()
        # Time stands still: exactly one burst of frames got through, and of its findings one burst was taken.
        passed = first.get("accepted", 0) + first.get("findings_accepted", 0) + first.get("findings_rate_limited", 0)
        assert passed == cfg.peer_max_frames_hz
        assert first["findings_accepted"] == 2 * cfg.peer_max_findings_hz == findings.taken
        assert first.get("findings_rate_limited", 0) >= 1
        # One second later: one second's worth more.
        clock.t += 1.0
        _wait(lambda: ch.counters()["rate_limited"] >= first["rate_limited"] + 500, "the flood stopped")
        second = ch.counters()
        assert (second.get("accepted", 0) + second["findings_accepted"] + second["findings_rate_limited"]
                == 2 * cfg.peer_max_frames_hz)
        assert second["findings_accepted"] == first["findings_accepted"] + cfg.peer_max_findings_hz
    finally:
        stop.set()
        sender.join(10)
        ch.close()
        pub.close(0)
        ctx.term()
    kept = findings.counts()
    assert kept["landmarks"] == kept["signs"] == findings.taken * MAX_ITEMS and kept["looked_from"] == MAX_ITEMS

    # The flood is over: what the member said expires, and no later step carries it.
    clock.t += cfg.findings_max_age_s - 1.5
    assert findings.for_agent(HOME) is not None
    clock.t += 2.0
    assert findings.for_agent(HOME) is None
    c = findings.counts()
    assert (c["landmarks"], c["signs"], c["looked_from"], c["members"]) == (0, 0, 0, 0)
    assert c["expired"] == kept["landmarks"] + kept["signs"] + kept["looked_from"]


@pytest.mark.parametrize("key, bad", [("peer_max_frames_hz", 0.0), ("peer_max_frames_hz", float("nan")),
                                      ("peer_max_findings_hz", -1.0), ("findings_max_age_s", float("inf")),
                                      ("findings_max_range_m", 0.0)])
def test_the_limits_are_range_checked_config(key: str, bad: float) -> None:
    with pytest.raises(ConfigError, match=key):
        build(FleetChannelConfig, {key: bad})

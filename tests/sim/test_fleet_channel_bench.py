"""The relay shape the fleet-channel bench compares with peer to peer really relays: each member hears the
other through it and refuses its own frames coming back (the figures are `aerie bench fleet-channel`'s)."""

from __future__ import annotations

import time

from firmware_bridge.fleet_picture import TrafficReport
from onboard.fleet.channel import FleetChannel
from onboard.fleet.settings import FleetChannelConfig, FleetPeer
from sim.fleet_channel_bench import _Relay
from tests.fleet.test_fleet_channel import HANG_GUARD_S, Inbox, free_port


def test_two_members_hear_each_other_through_the_relay_and_refuse_their_echo():
    eps = [f"tcp://127.0.0.1:{free_port()}" for _ in range(2)]
    relay = _Relay(eps).start()
    inboxes = [Inbox(lambda rs: len(rs) >= 3) for _ in eps]
    chans = [FleetChannel(FleetChannelConfig(pub_endpoint=ep, peers=(FleetPeer(relay.endpoint),), curve=False,
                                             report_rate_hz=20.0), i + 1,
                          lambda i=i: TrafficReport(i + 1, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0), inboxes[i])
             for i, ep in enumerate(eps)]
    try:
        for c in chans:
            c.start()
        assert all(box.done.wait(HANG_GUARD_S) for box in inboxes)
        deadline = time.monotonic() + HANG_GUARD_S  # a hang guard: the echo comes with the next report
        while not all(c.counters().get("rejected_own_id", 0) for c in chans) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        for c in chans:
            c.close()
        relay.stop()
    assert {r.member_id for r in inboxes[0].reports} == {2} and {r.member_id for r in inboxes[1].reports} == {1}
    assert all(c.counters().get("rejected_own_id", 0) > 0 for c in chans)  # a hub echoes: refused, not taken

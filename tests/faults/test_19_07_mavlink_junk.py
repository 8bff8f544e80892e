"""Issue 19, item 7: junk MAVLink at the autopilot port must not raise a false ``link_lost``.

A real simulated vehicle sends its MAVLink to the bridge's ``udpin`` port;
a hostile sender on another port fires truncated MAVLink v2 frames (``0xFD``,
a length byte, a short body), random bytes, heartbeats cut short and
heartbeats with a bad CRC at the same port, as fast as it can, while the
autopilot's heartbeats keep coming.

MAVSDK's parser keeps a half-read frame across datagrams, so without the
bridge's datagram gate the junk eats real heartbeats and the link is
reported lost though the autopilot never stopped (the control test shows it
still happens, so the first test can fail). With the gate (the default), the
junk is dropped before MAVSDK and no ``link_lost`` happens.

Pass/fail is counted in events (heartbeats seen, link events, datagrams
dropped), never in seconds; the deadlines only end a hung test.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time

import pytest
from pymavlink.dialects.v20 import common as mavlink2

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.settings import BridgeConfig, LinkConfig
from sim.vehicle import SimVehicleProcess

DEADLINE_S = 90.0
BURST = 20  # junk datagrams between two looks at the bridge


@pytest.fixture
def vehicle(tmp_path):
    sim = SimVehicleProcess(seed=7, prearm_delay_s=0.5)
    sim.start()
    yield sim
    sim.stop()


def _config(url: str, gate: bool) -> BridgeConfig:
    return BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=30, health_timeout_s=30, datagram_gate=gate))


class Junk:
    """The hostile sender: one datagram of junk at a time, of every kind in turn."""

    def __init__(self, port: int, kinds: tuple[int, ...] = (0, 1, 2, 3, 4)) -> None:
        self.kinds = kinds
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.to = ("127.0.0.1", port)
        self.rng = random.Random(19_07)
        mav = mavlink2.MAVLink(None, srcSystem=1, srcComponent=1)
        self.heartbeat = mav.heartbeat_encode(2, 12, 157, 50593792, 4).pack(mav)
        self.sent = 0

    def datagram(self) -> bytes:
        rng, kind = self.rng, self.kinds[self.sent % len(self.kinds)]
        if kind == 0:  # a v2 start byte and a short body
            return b"\xfd" + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
        if kind == 1:  # a v2 header that promises 255 payload bytes, then stops
            return b"\xfd\xff" + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
        if kind == 2:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
        if kind == 3:  # a heartbeat cut short
            return self.heartbeat[:rng.randint(1, len(self.heartbeat) - 1)]
        bad = bytearray(self.heartbeat)  # a whole heartbeat with a bad CRC
        bad[-1] ^= 0xFF
        return bytes(bad)

    def fire(self, n: int) -> None:
        for _ in range(n):
            self.sock.sendto(self.datagram(), self.to)
            self.sent += 1

    def close(self) -> None:
        self.sock.close()


async def _heartbeats(bridge: FlightBridge, count: int, junk: Junk | None, until_lost: bool = False) -> int:
    """Watch ``count`` new autopilot heartbeats arrive (junk flowing meanwhile); returns how many were seen.

    With ``until_lost`` it stops at the first ``link_lost`` event instead."""
    lost = asyncio.Event()
    bridge.events.add_listener(lambda e: lost.set() if e.kind == "link_lost" else None)
    last, seen = bridge.state.last_heartbeat_t, 0
    end = time.monotonic() + DEADLINE_S
    while seen < count and not (until_lost and lost.is_set()):
        assert time.monotonic() < end, ("no link_lost" if until_lost else f"only {seen} of {count} heartbeats") + \
            f" within the deadline ({junk.sent if junk else 0} junk datagrams sent)"
        if junk is not None:
            junk.fire(BURST)
        await asyncio.sleep(0.005)
        if bridge.state.last_heartbeat_t != last:
            last, seen = bridge.state.last_heartbeat_t, seen + 1
    return seen


async def test_junk_at_the_autopilot_port_raises_no_false_link_lost(vehicle):
    async with await FlightBridge.connect(_config(vehicle.mavsdk_url, gate=True)) as bridge:
        gate = bridge.link.gate
        assert gate is not None
        link_events: list[str] = []
        bridge.events.add_listener(lambda e: link_events.append(e.kind) if e.kind.startswith("link_") else None)

        await _heartbeats(bridge, 3, junk=None)
        assert gate.counters.dropped == 0, "the autopilot's own datagrams are whole frames and all pass"
        passed_before = gate.counters.passed

        junk = Junk(vehicle.gcs_port)
        try:
            await _heartbeats(bridge, 12, junk)
        finally:
            junk.close()

        assert link_events == []
        assert bridge.monitor.link_ok.is_set()
        assert 0 < gate.counters.dropped <= junk.sent
        assert gate.counters.passed > passed_before  # the autopilot kept getting through
        assert gate.counters.returned > 0  # and MAVSDK's own messages went back out
        # the bridge still commands the vehicle through the gate
        await bridge.commands.arm()
        await bridge.hub.wait_for(lambda s: s.armed, 30.0)
        await bridge.commands.disarm()
    assert vehicle.proc.poll() is None


async def test_without_the_gate_the_same_junk_swallows_heartbeats(vehicle):
    """The control: MAVSDK alone loses the autopilot's heartbeats to the worst kind of that junk (so the test above can fail)."""
    async with await FlightBridge.connect(_config(vehicle.mavsdk_url, gate=False)) as bridge:
        assert bridge.link.gate is None
        kinds: list[str] = []
        bridge.events.add_listener(lambda e: kinds.append(e.kind) if e.kind.startswith("link_") else None)
        junk = Junk(vehicle.gcs_port, kinds=(1,))  # the kind above that swallows most, so that a busy machine sees it too
        try:
            await _heartbeats(bridge, 10_000, junk, until_lost=True)
        finally:
            junk.close()
        # the junk's loss (a loaded machine may first report the link coming up after connect)
        assert "link_lost" in kinds
        # the autopilot never stopped: once the junk stops its heartbeats are heard again
        restored = asyncio.Event()
        bridge.events.add_listener(lambda e: restored.set() if e.kind == "link_restored" else None)
        if "link_restored" not in kinds[kinds.index("link_lost"):]:
            await asyncio.wait_for(restored.wait(), DEADLINE_S)
    assert vehicle.proc.poll() is None

"""The bridge against real PX4 bytes: replay PX4 SITL's recorded datagrams to MAVSDK.

The recording (../shared/px4-trace) is what a real PX4 sent to MAVSDK 4.1.0.
Replaying its first seconds over real UDP shows that connection, the single
telemetry subscriptions, health and home come out of real PX4 traffic as the
recording's own MAVSDK saw them; then the replay stops dead, like a crashed
autopilot, and the link-loss detection must fire within its 2 s budget.

`FlightBridge.connect` promises that every stream its users read has
delivered once before it returns (READY_STREAMS), so the state read right
after it is PX4's, never a default; the same bytes with one message type
taken out (EXTENDED_SYS_STATE: landed state and in-air) must end in the
named StreamTimeout instead of a bridge reporting "UNKNOWN".
"""

import asyncio
import base64
import gzip
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from firmware_bridge.bridge import READY_STREAMS, FlightBridge
from firmware_bridge.commands import CommandError, CommandResult
from firmware_bridge.connection import StreamTimeout
from firmware_bridge.settings import BridgeConfig, LinkConfig

TRACE = Path(os.environ.get("AERIE_PX4_TRACE_DIR") or Path(__file__).resolve().parents[3] / "shared" / "px4-trace") \
    / "px4_sih_raw.jsonl.gz"

pytestmark = pytest.mark.skipif(not TRACE.exists(), reason=f"PX4 trace not found at {TRACE}")


def msgid(frame: bytes) -> int:
    """The message id of one MAVLink v2 frame (the recording holds one frame per datagram)."""
    assert frame[0] == 0xFD
    return int.from_bytes(frame[7:10], "little")


def px4_datagrams(t_from: float, t_to: float, drop_msgid: int | None = None) -> list[tuple[float, bytes]]:
    out = []
    with gzip.open(TRACE, "rt") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("dir") != "px4->gcs":
                continue
            if rec["t"] < t_from:
                continue
            if rec["t"] > t_to:
                break
            data = base64.b64decode(rec["b64"])
            if drop_msgid is None or msgid(data) != drop_msgid:
                out.append((rec["t"], data))
    return out


class Replayer(threading.Thread):
    def __init__(self, port: int, datagrams: list[tuple[float, bytes]]) -> None:
        super().__init__(daemon=True)
        self.port, self.datagrams = port, datagrams
        self.done = threading.Event()

    def run(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t0, start = self.datagrams[0][0], time.monotonic()
        for t, data in self.datagrams:
            delay = (t - t0) - (time.monotonic() - start)
            if delay > 0:
                time.sleep(delay)
            sock.sendto(data, ("127.0.0.1", self.port))
        self.done.set()
        sock.close()


async def test_bridge_on_recorded_px4_traffic(udp_port):
    # From just before MAVSDK connected (5.42 s) to 11 s: heartbeats, health, home, idle on the ground.
    replay = Replayer(udp_port, px4_datagrams(5.3, 11.0))
    cfg = BridgeConfig(link=LinkConfig(url=f"udpin://127.0.0.1:{udp_port}", connect_timeout_s=5, health_timeout_s=4))
    replay.start()
    bridge = await FlightBridge.connect(cfg)
    try:
        # connect's promise: every stream its users read has delivered, so nothing below is a default.
        assert set(READY_STREAMS) <= bridge.hub.delivered
        s = bridge.state
        assert s.healthy and s.armable
        assert s.flight_mode == "HOLD" and not s.armed and s.landed_state == "ON_GROUND"
        assert s.home_lat == pytest.approx(47.397743, abs=1e-6)
        assert s.home_lon == pytest.approx(8.5455941, abs=1e-6)
        assert s.heartbeat_age_s() < 1.5
        envelope = bridge.envelope()
        assert envelope is not None and envelope.home.lat == pytest.approx(47.397743, abs=1e-6)

        lost = asyncio.Event()
        bridge.events.add_listener(lambda e: lost.set() if e.kind == "link_lost" else None)
        await asyncio.get_running_loop().run_in_executor(None, replay.done.wait, 10)
        stopped_at = time.monotonic()
        # The last heartbeat came up to 1 s before the replay ended: detection <= 2 s after it.
        await asyncio.wait_for(lost.wait(), 3.0)
        detected_after = time.monotonic() - stopped_at
        assert detected_after <= cfg.link.heartbeat_timeout_s + 0.2
        assert bridge.state.heartbeat_age_s() > cfg.link.heartbeat_timeout_s
        # Commands fail at once while the link is down: nothing is queued.
        t = time.monotonic()
        with pytest.raises(CommandError) as err:
            await bridge.commands.arm()
        assert err.value.result is CommandResult.NOT_CONNECTED
        assert time.monotonic() - t < 0.1
    finally:
        await bridge.close()


EXTENDED_SYS_STATE = 245


async def test_a_stream_that_never_delivers_is_a_named_error(udp_port):
    # Real PX4 bytes minus EXTENDED_SYS_STATE: heartbeats, health and home arrive, landed state never does.
    datagrams = px4_datagrams(5.3, 11.0, drop_msgid=EXTENDED_SYS_STATE)
    assert datagrams and len(datagrams) < len(px4_datagrams(5.3, 11.0))
    replay = Replayer(udp_port, datagrams)
    cfg = BridgeConfig(link=LinkConfig(url=f"udpin://127.0.0.1:{udp_port}", connect_timeout_s=2.5, health_timeout_s=4))
    replay.start()
    with pytest.raises(StreamTimeout) as err:
        await FlightBridge.connect(cfg)
    assert set(err.value.missing) == {"landed_state", "in_air"}
    assert f"127.0.0.1:{udp_port}" in str(err.value) and "landed_state" in str(err.value)
    assert "2.5 s" in str(err.value)
    await asyncio.get_running_loop().run_in_executor(None, replay.done.wait, 10)

import asyncio

import pytest

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.connection import ConnectionFailed, ConnectionTimeout
from firmware_bridge.settings import BridgeConfig, LinkConfig


async def test_no_vehicle_raises_clear_timeout(udp_port):
    cfg = BridgeConfig(link=LinkConfig(url=f"udpin://127.0.0.1:{udp_port}", connect_timeout_s=1.0))
    with pytest.raises(ConnectionTimeout) as err:   # gives up by its own timeout: a hang would hit 60 s
        await asyncio.wait_for(FlightBridge.connect(cfg), 60.0)
    assert f"127.0.0.1:{udp_port}" in str(err.value)


async def test_bad_url_is_a_clear_error():
    cfg = BridgeConfig(link=LinkConfig(url="carrier-pigeon://nowhere", connect_timeout_s=1.0))
    with pytest.raises(ConnectionFailed, match="carrier-pigeon"):
        await FlightBridge.connect(cfg)

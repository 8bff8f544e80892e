"""PX4 SITL (SIH) and the camera gimbal: none announced by default; with PX4's own gimbal manager on, the bridge
finds, controls and points it through MAVSDK's gimbal plugin as it does the simulated vehicle's.

PX4 SIH starts without a gimbal (``MNT_MODE_IN`` -1): the bridge then finds none and the look-around turns
the vehicle. With ``MNT_MODE_IN=4`` (MAVLink gimbal protocol v2 in) and ``MNT_MODE_OUT=0`` (AUX out), set in
the instance's own working folder and taking effect after a restart, PX4 is the gimbal manager of a
non-MAVLink device (one component) and reports the attitude it was asked for.
"""

from __future__ import annotations

import pytest

from firmware_bridge.bridge import FlightBridge
from firmware_bridge.settings import BridgeConfig, GimbalConfig, LinkConfig
from tests.e2e.px4kit import FIRST_INSTANCE, PX4_BIN, PX4Sitl, needs_px4

pytestmark = needs_px4
HOME = (47.397743, 8.5455941)


def _config(url: str) -> BridgeConfig:
    return BridgeConfig(link=LinkConfig(url=url, connect_timeout_s=30, health_timeout_s=90),
                        gimbal=GimbalConfig(discovery_s=10.0))


async def test_px4_sih_announces_no_gimbal_until_its_gimbal_manager_is_on_then_it_is_pointed(tmp_path):
    work = tmp_path / "px4"
    px4 = PX4Sitl(PX4_BIN, *HOME, tmp_path / "px4-1.log", instance=FIRST_INSTANCE, workdir=work)
    try:
        px4.wait_ready()
        async with await FlightBridge.connect(_config(px4.mavsdk_url)) as bridge:
            assert not await bridge.gimbal.available() and bridge.state.gimbal_id == 0
        for name, value in (("MNT_MODE_IN", "4"), ("MNT_MODE_OUT", "0")):
            px4.tool("param", "set", name, value)
        px4.tool("param", "save")
    finally:
        px4.stop()
    px4 = PX4Sitl(PX4_BIN, *HOME, tmp_path / "px4-2.log", instance=FIRST_INSTANCE, workdir=work)
    try:
        px4.wait_ready()
        async with await FlightBridge.connect(_config(px4.mavsdk_url)) as bridge:
            assert await bridge.gimbal.available()
            done = await bridge.gimbal.point(-30.0, 90.0, tolerance_deg=2.0)
            assert done.reached and done.attitude == pytest.approx((-30.0, 90.0), abs=2.0)
            commands = [e.detail for e in bridge.events.history if e.kind == "gimbal_command"]
            assert [(c["command"], c["result"]) for c in commands] == [("take_control", "SUCCESS"),
                                                                       ("set_angles", "SUCCESS")]
            print(f"PX4 SIH gimbal: stops yaw {bridge.state.gimbal_yaw_min_deg:.0f}..{bridge.state.gimbal_yaw_max_deg:.0f}, "
                  f"pitch {bridge.state.gimbal_pitch_min_deg:.0f}..{bridge.state.gimbal_pitch_max_deg:.0f}; "
                  f"pointed in {done.seconds:.2f} s; control {bridge.state.gimbal_control}")
    finally:
        px4.stop()

"""PX4 flight modes as they appear on the wire.

MAVSDK derives its flight mode and armed state only from HEARTBEAT
``custom_mode``/``base_mode``, so these encodings must match PX4 bit for bit
(see /work/shared/px4-trace/README.md, "HEARTBEAT").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

# base_mode flags (MAV_MODE_FLAG)
CUSTOM_MODE_ENABLED = 1
TEST_ENABLED = 2
AUTO_ENABLED = 4
GUIDED_ENABLED = 8
STABILIZE_ENABLED = 16
HIL_ENABLED = 32
MANUAL_INPUT_ENABLED = 64
SAFETY_ARMED = 128

# MAV_STATE
MAV_STATE_UNINIT = 0
MAV_STATE_STANDBY = 3
MAV_STATE_ACTIVE = 4
MAV_STATE_CRITICAL = 5


class MainMode(enum.IntEnum):
    """PX4_CUSTOM_MAIN_MODE."""

    MANUAL = 1
    ALTCTL = 2
    POSCTL = 3
    AUTO = 4
    ACRO = 5
    OFFBOARD = 6
    STABILIZED = 7
    RATTITUDE = 8


class AutoSubMode(enum.IntEnum):
    """PX4_CUSTOM_SUB_MODE_AUTO."""

    NONE = 0
    READY = 1
    TAKEOFF = 2
    LOITER = 3
    MISSION = 4
    RTL = 5
    LAND = 6
    FOLLOW_TARGET = 8
    PRECLAND = 9


@dataclass(frozen=True)
class Px4Mode:
    """A (main, sub) pair; sub is only meaningful for AUTO."""

    main: int
    sub: int = 0

    @property
    def custom_mode(self) -> int:
        return encode_custom_mode(self.main, self.sub)

    @property
    def is_auto(self) -> bool:
        return self.main == MainMode.AUTO

    def __str__(self) -> str:
        if self.main == MainMode.AUTO:
            return f"AUTO_{AutoSubMode(self.sub).name}" if self.sub in AutoSubMode._value2member_map_ else f"AUTO_{self.sub}"
        return MainMode(self.main).name if self.main in MainMode._value2member_map_ else f"MAIN_{self.main}"


HOLD = Px4Mode(MainMode.AUTO, AutoSubMode.LOITER)
TAKEOFF = Px4Mode(MainMode.AUTO, AutoSubMode.TAKEOFF)
MISSION = Px4Mode(MainMode.AUTO, AutoSubMode.MISSION)
RTL = Px4Mode(MainMode.AUTO, AutoSubMode.RTL)
LAND = Px4Mode(MainMode.AUTO, AutoSubMode.LAND)
OFFBOARD = Px4Mode(MainMode.OFFBOARD)
POSCTL = Px4Mode(MainMode.POSCTL)


def encode_custom_mode(main: int, sub: int = 0) -> int:
    """PX4 packs main mode into byte 2 and sub mode into byte 3."""
    return ((int(main) & 0xFF) << 16) | ((int(sub) & 0xFF) << 24)


def decode_custom_mode(custom_mode: int) -> Px4Mode:
    main = (int(custom_mode) >> 16) & 0xFF
    sub = (int(custom_mode) >> 24) & 0xFF
    return Px4Mode(main, sub if main == MainMode.AUTO else 0)


def base_mode(mode: Px4Mode, armed: bool, offboard_control_known: bool) -> int:
    """HEARTBEAT base_mode as PX4 computes it from its control-mode flags.

    OFFBOARD only gets STABILIZE once an offboard control mode has been seen
    (trace: base 1 before any setpoint, 17 after a failsafe landing, 145 armed).
    """
    flags = CUSTOM_MODE_ENABLED
    if armed:
        flags |= SAFETY_ARMED
    if mode.main == MainMode.AUTO:
        flags |= STABILIZE_ENABLED | GUIDED_ENABLED | AUTO_ENABLED
    elif mode.main == MainMode.OFFBOARD:
        if offboard_control_known:
            flags |= STABILIZE_ENABLED
    elif mode.main in (MainMode.POSCTL, MainMode.ALTCTL, MainMode.STABILIZED):
        flags |= MANUAL_INPUT_ENABLED | STABILIZE_ENABLED
    elif mode.main in (MainMode.MANUAL, MainMode.ACRO, MainMode.RATTITUDE):
        flags |= MANUAL_INPUT_ENABLED
    return flags


def standard_mode(mode: Px4Mode) -> int:
    """CURRENT_MODE.standard_mode values seen in the trace (0 where PX4 has none)."""
    if mode.main == MainMode.POSCTL:
        return 1
    if mode.main == MainMode.AUTO:
        return {AutoSubMode.RTL: 5, AutoSubMode.MISSION: 6, AutoSubMode.LAND: 7, AutoSubMode.TAKEOFF: 8}.get(
            AutoSubMode(mode.sub) if mode.sub in AutoSubMode._value2member_map_ else AutoSubMode.NONE, 0
        )
    return 0


_MAVSDK_NAMES = {
    "AUTO_LOITER": "HOLD", "AUTO_TAKEOFF": "TAKEOFF", "AUTO_MISSION": "MISSION", "AUTO_RTL": "RETURN_TO_LAUNCH",
    "AUTO_LAND": "LAND", "AUTO_READY": "READY", "AUTO_FOLLOW_TARGET": "FOLLOW_ME", "ALTCTL": "ALTCTL",
    "POSCTL": "POSCTL", "OFFBOARD": "OFFBOARD", "MANUAL": "MANUAL", "ACRO": "ACRO", "STABILIZED": "STABILIZED",
    "RATTITUDE": "RATTITUDE",
}


def mavsdk_flight_mode(mode: Px4Mode) -> str:
    """The name MAVSDK's telemetry.flight_mode() gives this mode (HOLD, RETURN_TO_LAUNCH, ...)."""
    return _MAVSDK_NAMES.get(str(mode), "UNKNOWN")

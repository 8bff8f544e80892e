"""The root of the flight link's error types.

Every error the bridge raises derives from :class:`BridgeError`, so the
supervisor can catch the link's failures in one place while each module
keeps its own, more precise type (as each MAVSDK plugin has its own).
"""

from __future__ import annotations


class BridgeError(Exception):
    """Something between Aerie and the autopilot failed; the message says what."""

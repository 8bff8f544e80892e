"""Which looks from another altitude a vehicle offers its agent, and which it refuses.

A look-up (over the roofs) is offered up to the safety envelope's ceiling less
a margin; a look-low (down at the shop fronts) down to a floor, and only where
names come from the vehicle's own camera. The supervisor offers and refuses by
these rules (`aerie fly`), and the benchmark's episodes refuse by the same ones,
so an agent meets one rule whichever way it flies. The envelope stays the last
line below both: it judges every setpoint as ever. How high and how low a look
is offered is read from the whole configuration, so the supervisor works that
out (`onboard/supervisor/look_limits.py`); the rules here judge each look asked
for against those limits.
"""

from __future__ import annotations


def _number(value: object) -> bool:
    """An int or a float, not a bool (NaN passes here and fails every range check after it)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def look_up_refusal(altitude_m: float | None, cruise_alt_m: float, ceiling_m: float | None) -> str | None:
    """Why a look-up to `altitude_m` may not be flown, or None: it may (cruise < altitude <= ceiling; NaN fails)."""
    if ceiling_m is None:
        return "no look-up on offer"
    if not _number(altitude_m) or not cruise_alt_m < altitude_m <= ceiling_m:
        return f"altitude {altitude_m} m is not within the look-up range ({cruise_alt_m:g}, {ceiling_m:g}] m"
    return None


def further_climb_refusal(altitude_m: float | None, up_m: float | None) -> str | None:
    """Why a look-up may not be flown while over the roofs at `up_m` (None: at cruise, no rule here): only a
    further climb, above `up_m`, the next leg of a climb flown in legs; NaN fails."""
    if up_m is None:
        return None
    if not _number(altitude_m) or not altitude_m > up_m:
        return f"already over the roofs at {up_m:g} m: only a further climb"
    return None


def come_down_refusal(altitude_m: float | None, cruise_alt_m: float, up_m: float | None,
                      on_the_way: bool) -> str | None:
    """Why a come-down may not be flown, or None: it may. Only from over the roofs (`up_m`); to cruise
    (`altitude_m` None), or part of the way down (cruise < altitude < up_m; NaN fails) on the way to a waypoint."""
    if up_m is None:
        return "not over the roofs: nothing to come down from"
    if altitude_m is None:
        return None
    if not on_the_way:
        return "part of the way down only on the way to a waypoint"
    if not _number(altitude_m) or not cruise_alt_m < altitude_m < up_m:
        return f"altitude {altitude_m} m is not between cruise ({cruise_alt_m:g} m) and {up_m:g} m"
    return None


def look_low_refusal(altitude_m: float | None, cruise_alt_m: float, floor_m: float | None) -> str | None:
    """Why a look-low to `altitude_m` may not be flown, or None: it may (floor <= altitude < cruise; NaN fails)."""
    if floor_m is None:
        return "no look-low on offer"
    if not _number(altitude_m) or not floor_m <= altitude_m < cruise_alt_m:
        return f"altitude {altitude_m} m is not within the look-low range [{floor_m:g}, {cruise_alt_m:g}) m"
    return None

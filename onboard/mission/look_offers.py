"""Which looks from another altitude a vehicle offers its agent, and which it refuses.

A look-up (over the roofs) is offered up to the safety envelope's ceiling less
a margin; a look-low (down at the shop fronts) down to a floor, and only where
names come from the vehicle's own camera. The supervisor offers and refuses by
these rules (`aerie fly`), and the benchmark's episodes refuse by the same ones,
so an agent meets one rule whichever way it flies. The envelope stays the last
line below both: it judges every setpoint as ever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from onboard.config import AerieConfig

# A look-up is offered up to the envelope's altitude ceiling less this (metres): the envelope clamps
# setpoints at the ceiling, and this keeps the vehicle itself (overshoot, the climb's 1 m tolerance,
# baro noise) under it too.
LOOK_UP_CEILING_MARGIN_M = 2.0


def _number(value: object) -> bool:
    """An int or a float, not a bool (NaN passes here and fails every range check after it)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def look_up_ceiling(cfg: AerieConfig) -> float | None:
    """The highest look-up offered to the agent (m above home), or None: no look-up on offer.

    The envelope's altitude ceiling less `LOOK_UP_CEILING_MARGIN_M`, when the agent looks up at all
    (`agent.use_look_up`) and that leaves room above the cruise altitude.
    """
    ceiling = cfg.safety.altitude_ceiling_m - LOOK_UP_CEILING_MARGIN_M
    return ceiling if cfg.agent.use_look_up and ceiling > cfg.supervisor.cruise_alt_m else None


def look_low_floor(cfg: AerieConfig) -> float | None:
    """The lowest look-low offered to the agent (m above home), or None: no look-low on offer.

    Only with camera perception (the world feed's names do not depend on altitude), when the agent
    looks low at all (`agent.look_low_alt_m`) and the floor (`camera_reading.low_floor_m`, never below
    the envelope's) leaves room under the cruise altitude.
    """
    sup = cfg.supervisor
    floor = max(sup.camera_reading.low_floor_m, cfg.safety.altitude_floor_m)
    on = sup.perception == "camera" and cfg.agent.look_low_alt_m > 0
    return floor if on and floor < sup.cruise_alt_m else None


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

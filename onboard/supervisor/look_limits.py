"""How high a look-up and how low a look-low the supervisor offers its agent, from the configuration.

The limits come from several packages' settings at once (the envelope's ceiling and
floor, the agent's wishes, the camera's reading floor, the cruise altitude), so the
composition root works them out; the mission runner judges each look the agent asks
for against them (`onboard/mission/look_offers.py`).
"""

from __future__ import annotations

from onboard.config import AerieConfig

# A look-up is offered up to the envelope's altitude ceiling less this (metres): the envelope clamps
# setpoints at the ceiling, and this keeps the vehicle itself (overshoot, the climb's 1 m tolerance,
# baro noise) under it too.
LOOK_UP_CEILING_MARGIN_M = 2.0


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

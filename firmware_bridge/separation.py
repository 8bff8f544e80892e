"""Separation between fleet vehicles: the rule every intent passes after the safety envelope.

Why in the bridge: two vehicles must never meet whatever their agents
decide, so the rule sits where every setpoint already passes (on submit and
on every tick of the setpoint streamer), below every model, and is plain
arithmetic that cannot hang.

The rule. Own paths: from where the vehicle is towards the intent (a
position target covered at the current speed, or faster where the target is
further than that reaches within the horizon, up to the envelope's speed
limit, and never beyond the target; a velocity flown as asked), and for a
position target also its current horizontal velocity carried on with the
intent's climb (a pilot's position target is a carrot that keeps moving
ahead); every path is judged. Each other vehicle: its last report carried
forward by its velocity. Two vehicles are *too near* when they are
horizontally nearer than ``min_separation_m`` and vertically nearer than
``downwash_vertical_m`` (a cylinder around each, whatever their altitude
bands: a multirotor a band's height above another is in its downwash, 36.17).
A conflict is a moment within the horizon where the two are too near; where
they already are, only getting nearer in 3D is a conflict, so moving apart
(sideways, or up and away) is always allowed.

The margin. Predictions are of commanded motion; the vehicles follow late
(the autopilot's response, a report up to a period old, the distance a climb
takes to stop), so the rule judges a cylinder grown by ``separation_margin_s``
times: across, how fast the two close horizontally; up and down, how fast
either climbs or descends, whichever way (a climb lags its prediction as
much when it opens the gap as when it closes it: an 8-vehicle bench run had
a vehicle pass 9.9 m under one climbing away from it, 36). Two vehicles level
on their layers move at no vertical speed, so the layer spacing keeps them
apart as before.

The resolution is by member id, so both vehicles reach the same answer
without talking: towards a lower id this vehicle yields over the full
``lookahead_s`` (it flies the same intent on its own altitude layer, or
climbs/descends to that layer where it stands, or holds); towards a higher id
it keeps its path and holds only when the conflict is within half the
horizon, which means the other has not got out of the way in time. When the
fleet channel is silent past its timeout nothing is known of the others, so
the vehicle flies its own layer (getting there where it stands first).
Layers are ``layer_base_m + member_id * layer_spacing_m`` above home and at
least ``downwash_vertical_m`` apart, so two vehicles on their layers are
never too near.

A goto (PX4 flies it without asking again) is checked once and refused on a
conflict; fleet flights fly offboard, where the check runs on every tick.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from firmware_bridge.intents import Intent, PositionNed, VelocityNed
from firmware_bridge.settings import FleetConfig

# Step of the path sampling, seconds (closing at 20 m/s this is 2 m).
SAMPLE_DT_S = 0.1
# A distance that shrinks by less than this is not "nearer" (sensor noise).
NEARER_EPS_M = 0.05
# Vertical speed gain towards a layer for velocity intents, 1/s.
LAYER_GAIN = 1.0


@dataclass(frozen=True)
class Kinematics:
    """A vehicle's position (metres north/east of home, metres above home) and velocity (NED, m/s)."""

    north_m: float
    east_m: float
    alt_m: float
    vn_m_s: float = 0.0
    ve_m_s: float = 0.0
    vd_m_s: float = 0.0

    def finite(self) -> bool:
        return all(math.isfinite(v) for v in (self.north_m, self.east_m, self.alt_m,
                                               self.vn_m_s, self.ve_m_s, self.vd_m_s))


@dataclass(frozen=True)
class Other:
    """Another vehicle in this vehicle's frame, and how old its report is."""

    member_id: int
    at: Kinematics
    age_s: float = 0.0


@dataclass(frozen=True)
class Decision:
    """What may be flown. ``action``: clear, layer, climb, hold, fallback, fallback_climb."""

    intent: Intent
    action: str
    reason: str = ""
    conflicts: tuple[int, ...] = ()

    @property
    def changed(self) -> bool:
        return self.action != "clear"


Path = Callable[[float], tuple[float, float, float]]  # seconds ahead -> (north, east, alt)


def own_path(here: Kinematics, intent: Intent, max_h_speed: float, max_v_speed: float, horizon_s: float) -> Path:
    """Where flying ``intent`` takes this vehicle t seconds ahead (see the module's rule)."""
    if isinstance(intent, VelocityNed):
        vn, ve, vd = intent.north_m_s, intent.east_m_s, intent.down_m_s
        return lambda t: (here.north_m + vn * t, here.east_m + ve * t, here.alt_m - vd * t)
    dn, de = intent.north_m - here.north_m, intent.east_m - here.east_m
    dist = math.hypot(dn, de)
    # The speed it flies now; a target far ahead is flown fast, so at least the speed that reaches
    # it within the horizon (up to the limit). Re-judged every tick as the speed changes.
    speed = max(math.hypot(here.vn_m_s, here.ve_m_s), min(dist / horizon_s, max_h_speed))
    vertical = _vertical(here, intent, max_v_speed)

    def at(t: float) -> tuple[float, float, float]:
        f = 1.0 if dist < 1e-6 else min(1.0, speed * t / dist)
        return here.north_m + f * dn, here.east_m + f * de, vertical(t)

    return at


def momentum_path(here: Kinematics, intent: Intent, max_v_speed: float) -> Path:
    """The current horizontal velocity carried on, with the intent's climb or descent.

    A position intent streamed by a pilot is a carrot a few metres ahead that keeps moving, so the
    target alone says little about where the vehicle goes; its momentum says that. Both are judged.
    """
    vertical = _vertical(here, intent, max_v_speed)
    return lambda t: (here.north_m + here.vn_m_s * t, here.east_m + here.ve_m_s * t, vertical(t))


def _vertical(here: Kinematics, intent: Intent, max_v_speed: float) -> Callable[[float], float]:
    if isinstance(intent, VelocityNed):
        return lambda t: here.alt_m - intent.down_m_s * t
    climb = intent.rel_alt_m - here.alt_m
    return lambda t: here.alt_m + max(-max_v_speed * t, min(max_v_speed * t, climb))


def other_path(o: Other) -> Path:
    k, age = o.at, o.age_s
    return lambda t: (k.north_m + k.vn_m_s * (age + t), k.east_m + k.ve_m_s * (age + t),
                      k.alt_m - k.vd_m_s * (age + t))


def too_near(horizontal_m: float, vertical_m: float, cfg: FleetConfig) -> bool:
    """Inside the separation cylinder: nearer than ``min_separation_m`` across and ``downwash_vertical_m`` up/down.

    The one definition of "not separated": the rule, the bench's truth watch and the tests use it.
    """
    return horizontal_m < cfg.min_separation_m and abs(vertical_m) < cfg.downwash_vertical_m


@dataclass(frozen=True)
class Margin:
    """Metres the judged cylinder grows by, across and up/down (see the module's margin)."""

    horizontal_m: float = 0.0
    vertical_m: float = 0.0


def margin(here: Kinematics, there: Kinematics, cfg: FleetConfig) -> Margin:
    """The growth for a pair, times ``separation_margin_s``: their horizontal closing speed (none when
    opening), and the sum of their vertical speeds whichever way."""
    dn, de = there.north_m - here.north_m, there.east_m - here.east_m
    rvn, rve = there.vn_m_s - here.vn_m_s, there.ve_m_s - here.ve_m_s
    h = math.hypot(dn, de)
    closing_h = -(dn * rvn + de * rve) / h if h > 1e-6 else math.hypot(rvn, rve)
    vertical = abs(here.vd_m_s) + abs(there.vd_m_s)
    grow = cfg.separation_margin_s
    return Margin(max(0.0, closing_h) * grow, vertical * grow if math.isfinite(vertical) else 0.0)


def judged_near(horizontal_m: float, vertical_m: float, cfg: FleetConfig, grown: Margin) -> bool:
    """Inside the cylinder the rule judges: the separation cylinder grown by ``grown``."""
    return (horizontal_m < cfg.min_separation_m + grown.horizontal_m
            and abs(vertical_m) < cfg.downwash_vertical_m + grown.vertical_m)


def conflict(own: Path, other: Path, horizon_s: float, cfg: FleetConfig, grown: Margin = Margin()) -> bool:
    """Some moment within ``horizon_s`` puts the two inside the judged cylinder, and (when they already are) nearer than now."""
    n0, e0, a0 = own(0.0)
    m0, f0, b0 = other(0.0)
    inside_now = judged_near(math.hypot(n0 - m0, e0 - f0), a0 - b0, cfg, grown)
    d0 = math.dist((n0, e0, a0), (m0, f0, b0))
    steps = max(1, math.ceil(horizon_s / SAMPLE_DT_S))
    for i in range(1, steps + 1):
        t = min(horizon_s, i * SAMPLE_DT_S)
        n, e, a = own(t)
        m, f, b = other(t)
        if not judged_near(math.hypot(n - m, e - f), a - b, cfg, grown):
            continue
        if not inside_now or math.dist((n, e, a), (m, f, b)) < d0 - NEARER_EPS_M:
            return True
    return False


def with_altitude(intent: Intent, here: Kinematics, alt_m: float, max_v_speed: float) -> Intent:
    """The same intent flown at ``alt_m`` (a velocity intent gets a vertical speed towards it)."""
    if isinstance(intent, PositionNed):
        return replace(intent, down_m=-alt_m)
    vd = max(-max_v_speed, min(max_v_speed, (here.alt_m - alt_m) * LAYER_GAIN))
    return replace(intent, down_m_s=vd)


def stand(intent: Intent, hold_ne: tuple[float, float], here: Kinematics, alt_m: float,
          max_v_speed: float) -> Intent:
    """Hold ``hold_ne`` horizontally at ``alt_m`` (climbing or descending to it where needed)."""
    if isinstance(intent, PositionNed):
        return PositionNed(hold_ne[0], hold_ne[1], -alt_m, intent.yaw_deg)
    vd = max(-max_v_speed, min(max_v_speed, (here.alt_m - alt_m) * LAYER_GAIN))
    return VelocityNed(0.0, 0.0, vd, intent.yaw_deg)


class SeparationRule:
    """Judges one vehicle's intents against the others; keeps only where it holds (so a hold stays put)."""

    def __init__(self, cfg: FleetConfig, max_h_speed_m_s: float, max_v_speed_m_s: float) -> None:
        self.cfg = cfg
        self.max_h = max_h_speed_m_s
        self.max_v = max_v_speed_m_s
        self._hold_ne: tuple[float, float] | None = None
        self._hold_alt: float | None = None

    def paths(self, here: Kinematics, intent: Intent) -> tuple[Path, ...]:
        """The own paths judged: the intent's, and for a position target also the momentum's."""
        path = own_path(here, intent, self.max_h, self.max_v, self.cfg.lookahead_s)
        if isinstance(intent, VelocityNed):  # flown as commanded: the velocity is the prediction
            return (path,)
        return path, momentum_path(here, intent, self.max_v)

    def _hold_point(self, here: Kinematics) -> tuple[float, float]:
        if self._hold_ne is None:
            self._hold_ne = (here.north_m, here.east_m)
        return self._hold_ne

    def _release(self) -> None:
        self._hold_ne = self._hold_alt = None

    def judge(self, here: Kinematics, intent: Intent, others: list[Other], silent: bool) -> Decision:
        """The intent as it may be flown, given the others (``silent``: the fleet channel timed out)."""
        cfg, layer = self.cfg, self.cfg.layer_alt_m
        if silent:
            if abs(here.alt_m - layer) <= cfg.altitude_band_m / 2:
                self._release()
                return Decision(with_altitude(intent, here, layer, self.max_v), "fallback",
                                f"fleet channel silent: flying own layer {layer:.1f} m")
            return Decision(stand(intent, self._hold_point(here), here, layer, self.max_v), "fallback_climb",
                            f"fleet channel silent: taking own layer {layer:.1f} m where it stands")
        lower = [(o, other_path(o), margin(here, o.at, cfg)) for o in others if o.member_id < cfg.member_id]
        higher = [(o, other_path(o), margin(here, o.at, cfg)) for o in others if o.member_id > cfg.member_id]

        def blocking(candidate: Intent) -> list[Other]:
            paths = self.paths(here, candidate)
            return ([o for o, p, g in lower if any(conflict(q, p, cfg.lookahead_s, cfg, g) for q in paths)]
                    + [o for o, p, g in higher if any(conflict(q, p, cfg.lookahead_s / 2, cfg, g) for q in paths)])

        first = blocking(intent)
        if not first:
            self._release()
            return Decision(intent, "clear")
        ids = tuple(sorted(o.member_id for o in first))
        if any(o.member_id < cfg.member_id for o in first):  # this vehicle yields
            layered = with_altitude(intent, here, layer, self.max_v)
            if not blocking(layered):
                self._release()
                return Decision(layered, "layer", f"yields to {ids}: own layer {layer:.1f} m", ids)
            if all(not abs(o.at.alt_m - layer) < cfg.downwash_vertical_m for o in first):
                # Climbing (or descending) to the layer where it stands gets out of the way of those it
                # yields to; it must not run into anyone else on the way (an 8-vehicle bench run had a
                # member come down from a look-up through another's layer, 4.1 m across).
                climb = stand(intent, self._hold_point(here), here, layer, self.max_v)
                if not [o for o in blocking(climb) if o.member_id not in ids]:
                    return Decision(climb, "climb", f"yields to {ids}: to own layer {layer:.1f} m where it stands",
                                    ids)
        if self._hold_alt is None:
            self._hold_alt = here.alt_m
        hold = stand(intent, self._hold_point(here), here, self._hold_alt, self.max_v)
        if isinstance(hold, VelocityNed):
            hold = replace(hold, down_m_s=0.0)
        return Decision(hold, "hold", f"conflict with {ids}: holding", ids)

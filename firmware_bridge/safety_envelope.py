"""The safety envelope: every target the vehicle is asked to fly passes here first.

It sits below every model and every agent: geofence (polygon and radius
around home), altitude floor and ceiling, horizontal and vertical speed
clamps, a velocity look-ahead that stops a flight into the fence, and the
battery ladder (warn -> return -> land). It is pure arithmetic on values, so
it can be tested exhaustively and cannot hang.
"""

from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass, replace

from contract.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from firmware_bridge.errors import BridgeError
from firmware_bridge.intents import GlobalTarget, PositionNed, VelocityNed
from firmware_bridge.polygon import closest_point_on_polygon, point_in_polygon
from firmware_bridge.settings import SafetyConfig

log = logging.getLogger(__name__)

# How far ahead a velocity intent is extrapolated before the fence check, seconds.
VELOCITY_LOOKAHEAD_S = 2.0
# Clamped targets are pulled this far inside the fence so they are not on its edge.
FENCE_MARGIN_M = 1.0


class SafetyViolation(BridgeError):
    """The envelope refused an intent; ``reason`` says which limit."""

    def __init__(self, reason: str, intent: object) -> None:
        super().__init__(f"refused by safety envelope: {reason}")
        self.reason = reason
        self.intent = intent


class BatteryAction(enum.IntEnum):
    """Escalating battery responses; the envelope never steps back down in a flight."""

    NONE = 0
    WARN = 1
    RETURN = 2
    LAND = 3


@dataclass(frozen=True)
class Verdict:
    """The envelope's answer: the intent as it may be flown and why it changed."""

    intent: object
    clamped: bool
    reasons: tuple[str, ...] = ()


class SafetyEnvelope:
    """Checks intents against one vehicle's limits, relative to its home."""

    def __init__(self, cfg: SafetyConfig, home: GeoPoint) -> None:
        self.cfg = cfg
        self.home = home
        # The polygon in local north/east metres, so every check is planar.
        self._fence_ne = [ned_from_geo(home, lat, lon) for lat, lon in cfg.geofence.polygon]
        if self._fence_ne and not point_in_polygon(0.0, 0.0, self._fence_ne):
            raise ValueError("home lies outside the configured geofence polygon")

    # -- horizontal fence --------------------------------------------------
    def inside_fence(self, north: float, east: float) -> bool:
        if math.hypot(north, east) > self.cfg.geofence.max_distance_from_home_m:
            return False
        return not self._fence_ne or point_in_polygon(north, east, self._fence_ne)

    def _clamp_to_fence(self, north: float, east: float) -> tuple[float, float]:
        radius = self.cfg.geofence.max_distance_from_home_m - FENCE_MARGIN_M
        for _ in range(8):  # alternate projections converge fast for convex-ish fences
            dist = math.hypot(north, east)
            if dist > radius:
                north, east = north * radius / dist, east * radius / dist
            if self._fence_ne and not point_in_polygon(north, east, self._fence_ne):
                bx, by = closest_point_on_polygon(north, east, self._fence_ne)
                # step a margin towards home so the point is strictly inside
                d = math.hypot(bx, by) or 1.0
                north, east = bx - FENCE_MARGIN_M * bx / d, by - FENCE_MARGIN_M * by / d
            if self.inside_fence(north, east):
                return north, east
        return 0.0, 0.0  # pathological fence: home is the one point known to be inside

    # -- checks --------------------------------------------------------------
    def check_position(self, target: PositionNed) -> Verdict:
        """Altitude is always clamped into [floor, ceiling]; the fence refuses or clamps."""
        reasons: list[str] = []
        north, east, down = target.north_m, target.east_m, target.down_m
        if not all(math.isfinite(v) for v in (north, east, down)):
            raise SafetyViolation("target has a non-finite coordinate", target)
        alt = -down
        if alt > self.cfg.altitude_ceiling_m:
            reasons.append(f"altitude {alt:.1f} m above ceiling {self.cfg.altitude_ceiling_m:.1f} m")
            alt = self.cfg.altitude_ceiling_m
        elif alt < self.cfg.altitude_floor_m:
            reasons.append(f"altitude {alt:.1f} m below floor {self.cfg.altitude_floor_m:.1f} m")
            alt = self.cfg.altitude_floor_m
        if not self.inside_fence(north, east):
            why = f"target {north:.1f} N {east:.1f} E m is outside the geofence"
            if self.cfg.geofence.action == "refuse":
                log.warning("refused: %s", why, extra={"fields": {"event": "refused", "reason": why}})
                raise SafetyViolation(why, target)
            reasons.append(why + " (clamped)")
            north, east = self._clamp_to_fence(north, east)
        out = replace(target, north_m=north, east_m=east, down_m=-alt)
        if reasons:
            log.warning("clamped: %s", "; ".join(reasons), extra={"fields": {"event": "clamped", "reasons": reasons}})
        return Verdict(out, bool(reasons), tuple(reasons))

    def check_global(self, target: GlobalTarget) -> Verdict:
        north, east = ned_from_geo(self.home, target.lat, target.lon)
        verdict = self.check_position(PositionNed(north, east, -target.rel_alt_m))
        p = verdict.intent
        assert isinstance(p, PositionNed)
        lat, lon = geo_from_ned(self.home, p.north_m, p.east_m) if verdict.clamped else (target.lat, target.lon)
        return Verdict(replace(target, lat=lat, lon=lon, rel_alt_m=p.rel_alt_m), verdict.clamped, verdict.reasons)

    def check_velocity(self, v: VelocityNed, here: PositionNed | None) -> Verdict:
        """Clamp speeds; stop motion that would carry the vehicle out of the fence or past a bound.

        ``here`` is the vehicle's current position; without one (no estimate)
        only the speed clamps apply and horizontal motion is refused, because
        a fence cannot be enforced blind.
        """
        reasons: list[str] = []
        vn, ve, vd = v.north_m_s, v.east_m_s, v.down_m_s
        if not all(math.isfinite(x) for x in (vn, ve, vd)):
            raise SafetyViolation("velocity has a non-finite component", v)
        h = math.hypot(vn, ve)
        if h > self.cfg.max_horizontal_speed_m_s:
            k = self.cfg.max_horizontal_speed_m_s / h
            vn, ve = vn * k, ve * k
            reasons.append(f"horizontal speed {h:.1f} m/s clamped to {self.cfg.max_horizontal_speed_m_s:.1f}")
        if abs(vd) > self.cfg.max_vertical_speed_m_s:
            vd = math.copysign(self.cfg.max_vertical_speed_m_s, vd)
            reasons.append(f"vertical speed {abs(v.down_m_s):.1f} m/s clamped to {self.cfg.max_vertical_speed_m_s:.1f}")
        if here is None:
            if vn or ve:
                reasons.append("no position estimate: horizontal motion stopped")
                vn = ve = 0.0
        else:
            n_next = here.north_m + vn * VELOCITY_LOOKAHEAD_S
            e_next = here.east_m + ve * VELOCITY_LOOKAHEAD_S
            if (vn or ve) and not self.inside_fence(n_next, e_next):
                # allow motion back towards home, stop anything else
                if vn * here.north_m + ve * here.east_m >= 0 or self.inside_fence(here.north_m, here.east_m):
                    reasons.append("velocity would leave the geofence: horizontal motion stopped")
                    vn = ve = 0.0
            alt_next = here.rel_alt_m - vd * VELOCITY_LOOKAHEAD_S
            if vd < 0 and alt_next > self.cfg.altitude_ceiling_m:
                reasons.append("climb would pass the altitude ceiling: stopped")
                vd = 0.0
            elif vd > 0 and alt_next < self.cfg.altitude_floor_m:
                reasons.append("descent would pass the altitude floor: stopped")
                vd = 0.0
        if reasons:
            log.warning("clamped: %s", "; ".join(reasons), extra={"fields": {"event": "clamped", "reasons": reasons}})
        return Verdict(replace(v, north_m_s=vn, east_m_s=ve, down_m_s=vd), bool(reasons), tuple(reasons))

    def clamp_speed(self, speed_m_s: float) -> float:
        return max(0.1, min(speed_m_s, self.cfg.max_horizontal_speed_m_s))

    def battery_action(self, remaining_percent: float) -> BatteryAction:
        """Which rung of the battery ladder ``remaining_percent`` (0..100) stands on."""
        if not math.isfinite(remaining_percent):
            return BatteryAction.NONE
        if remaining_percent <= self.cfg.battery_land_percent:
            return BatteryAction.LAND
        if remaining_percent <= self.cfg.battery_rtl_percent:
            return BatteryAction.RETURN
        if remaining_percent <= self.cfg.battery_warn_percent:
            return BatteryAction.WARN
        return BatteryAction.NONE

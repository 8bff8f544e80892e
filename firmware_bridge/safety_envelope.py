"""The safety envelope: every target the vehicle is asked to fly passes here first.

It sits below every model and every agent: geofence (polygon and radius
around home), altitude floor and ceiling, horizontal and vertical speed
clamps, a velocity look-ahead that stops a flight into the fence, and the
battery ladder (warn -> return -> land). It is pure arithmetic on values, so
it can be tested exhaustively and cannot hang.

Every comparison is written so that NaN fails it (``not x <= limit`` rather
than ``x > limit``), and every check first confirms that the limits
themselves are finite: the config loader refuses a NaN limit, but the
envelope is the last line and refuses everything rather than trust one.
"""

from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass, replace

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
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
        self._limits_error = _limits_error(cfg)
        # The polygon in local north/east metres, so every check is planar (none when unusable:
        # every intent is refused then anyway).
        polygon = cfg.geofence.polygon if self._limits_error is None else []
        self._fence_ne = [ned_from_geo(home, lat, lon) for lat, lon in polygon]
        if self._fence_ne and not point_in_polygon(0.0, 0.0, self._fence_ne):
            raise ValueError("home lies outside the configured geofence polygon")

    # -- horizontal fence --------------------------------------------------
    def inside_fence(self, north: float, east: float) -> bool:
        if not math.hypot(north, east) <= self.cfg.geofence.max_distance_from_home_m:  # NaN: outside
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
    def _check_limits(self, intent: object) -> None:
        if self._limits_error is not None:
            log.error("refused: %s", self._limits_error, extra={"fields": {"event": "refused", "reason": self._limits_error}})
            raise SafetyViolation(self._limits_error, intent)

    def check_position(self, target: PositionNed) -> Verdict:
        """Altitude is always clamped into [floor, ceiling]; the fence refuses or clamps."""
        self._check_limits(target)
        reasons: list[str] = []
        north, east, down = target.north_m, target.east_m, target.down_m
        if not all(math.isfinite(v) for v in (north, east, down)):
            raise SafetyViolation("target has a non-finite coordinate", target)
        alt = -down
        if not alt <= self.cfg.altitude_ceiling_m:
            reasons.append(f"altitude {alt:.1f} m above ceiling {self.cfg.altitude_ceiling_m:.1f} m")
            alt = self.cfg.altitude_ceiling_m
        elif not alt >= self.cfg.altitude_floor_m:
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
        if not (-90.0 <= target.lat <= 90.0 and -180.0 <= target.lon <= 180.0):
            raise SafetyViolation(f"target {target.lat}, {target.lon} is not a latitude and longitude", target)
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
        self._check_limits(v)
        reasons: list[str] = []
        vn, ve, vd = v.north_m_s, v.east_m_s, v.down_m_s
        if not all(math.isfinite(x) for x in (vn, ve, vd)):
            raise SafetyViolation("velocity has a non-finite component", v)
        if here is not None and not all(math.isfinite(x) for x in (here.north_m, here.east_m, here.down_m)):
            here = None  # an estimate with NaN in it is no estimate: no horizontal motion
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
        """A goto speed within 0.1 .. the horizontal limit; a non-finite one is refused."""
        self._check_limits(speed_m_s)
        if not math.isfinite(speed_m_s):
            raise SafetyViolation(f"speed {speed_m_s!r} m/s is not a finite number", speed_m_s)
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


def _limits_error(cfg: SafetyConfig) -> str | None:
    """Why these limits cannot be enforced (a non-finite or non-positive one), or None."""
    limits = {
        "geofence.max_distance_from_home_m": cfg.geofence.max_distance_from_home_m,
        "altitude_floor_m": cfg.altitude_floor_m, "altitude_ceiling_m": cfg.altitude_ceiling_m,
        "max_horizontal_speed_m_s": cfg.max_horizontal_speed_m_s, "max_vertical_speed_m_s": cfg.max_vertical_speed_m_s,
    }
    bad = [f"{k}={v!r}" for k, v in limits.items() if not 0 <= v < math.inf]
    bad += [f"geofence.polygon[{i}]" for i, (lat, lon) in enumerate(cfg.geofence.polygon)
            if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0)]
    return f"safety limits unusable ({', '.join(bad)}): every intent is refused" if bad else None
